"""The wire APIs epbench speaks, one module each, behind one seam (`epbench.runner.apis.base.Api`).

Every caller (the serving runner, the agentic executor) builds one chat-shaped request body
(`messages` with `tool_calls` and `tool` turns, `tools` in chat-completions form); the
endpoint's API turns it into its own request, and turns its response stream back into
neutral events (chat-completion-chunk-shaped dicts, see `base.py`) that the client's metrics
and the agentic assembler consume. Adding an API is adding one module here and its stream
corpus under tests/streams/.
"""

from __future__ import annotations

from epbench.runner.apis.anthropic_messages import ANTHROPIC_MESSAGES
from epbench.runner.apis.base import Api, Translator
from epbench.runner.apis.openai_chat import OPENAI_CHAT
from epbench.runner.apis.openai_responses import OPENAI_RESPONSES

APIS: dict[str, Api] = {
    api.name: api for api in (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES)
}
API_NAMES: tuple[str, ...] = tuple(APIS)
OPENAI_CHAT_NAME = OPENAI_CHAT.name


def get_api(name: str | None) -> Api:
    """The API called `name` (an endpoint file's `api`); openai-chat when None."""
    api = APIS.get(name or "openai-chat")
    if api is None:
        raise ValueError(f"unknown api {name!r}; one of {', '.join(API_NAMES)}")
    return api


__all__ = ["APIS", "API_NAMES", "OPENAI_CHAT_NAME", "Api", "Translator", "get_api"]
