"""OpenAI chat completions (`POST /v1/chat/completions`): the request is already in its own
shape and its chunks are already neutral, so this module only asks for usage in the stream
and passes every event through unchanged.

TTFT starts at the first chunk whose delta carries `content`, `reasoning_content` (or
`reasoning`) or `tool_calls`; the first answer token is the first `content` or `tool_calls`.
"""

from __future__ import annotations

from typing import Any

from epbench.runner.apis.base import Api, Json


def _auth(api_key: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


def build(body: Json) -> Json:
    """The chat-completions body: as given, with `stream_options.include_usage` when streamed."""
    if body.get("stream"):
        options = body.get("stream_options") or {}
        if not options.get("include_usage"):
            body = {**body, "stream_options": {**options, "include_usage": True}}
    return body


class ChatTranslator:
    """Chat chunks are neutral events already; `[DONE]` is handled by the SSE reader."""

    __slots__ = ()

    def event(self, obj: Any) -> list[Json]:
        return [obj]


def whole(body: Json) -> Json:
    return body


OPENAI_CHAT = Api(
    name="openai-chat",
    path="/chat/completions",
    auth_headers=_auth,
    build=build,
    translator=ChatTranslator,
    whole=whole,
)
