"""The preflight: one look at the endpoint before the first point, so a run that cannot work
stops in seconds with one clear line instead of filling a journal with failures.

1. `GET /models` (an endpoint without it answers 404: that is fine) within a short deadline:
   no answer means the endpoint is unreachable; 401/403 means the key is refused; a model list
   without the endpoint file's model name means the model name is unknown.
2. One small chat request (`max_tokens: 1`, not streamed): refused key, unknown model and no
   answer stop the run the same way, and so does a 404 (a path that does not exist, e.g. a
   base_url without /v1), naming the path. Other failures (429, 5xx) do not: measuring them is
   what the run is for.
3. Five TCP connects to the endpoint's host and port: the round trips the run journals on its
   session line (epbench.core.round_trips), the floor `epbench validate` holds latencies against.
"""

from __future__ import annotations

from typing import Any

from epbench.core.errors import RunError
from epbench.runner.client import EndpointClient
from epbench.runner.header import connect_round_trips

PREFLIGHT_TIMEOUT_S = 4.0
_UNREACHABLE = {"connection", "timeout", "deadline"}


async def preflight(
    quick: EndpointClient, client: EndpointClient, model: str, label: str
) -> list[float]:
    """RunError (one line) when the endpoint is unreachable, refuses the key or the model;
    else the round trips (ms) measured to it ([] when a connect failed).

    `quick` (a short deadline) takes the first look, `client` (the run's deadline) sends the
    probe: a busy endpoint may take longer to answer a chat request than a model list."""
    status, doc, error = await quick.get_json("/models")
    if status is None:
        raise RunError(f"{label}: cannot reach {quick.base_url} ({error})")
    if status in (401, 403):
        raise RunError(f"{label}: the endpoint refused the API key (HTTP {status} on /models)")
    served = _model_ids(doc) if status == 200 else None
    if served is not None and served and model not in served:
        shown = ", ".join(sorted(served)[:10])
        raise RunError(
            f"{label}: the endpoint does not serve model {model!r}; it serves: {shown}"
        )
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Say OK."}],
        "max_tokens": 1,
        "stream": False,
    }
    res = await client.chat(body, request_id="preflight")
    if res.error_class in _UNREACHABLE:
        raise RunError(f"{label}: no answer from {client.url} ({res.error})")
    if res.status in (401, 403):
        raise RunError(f"{label}: the endpoint refused the API key (HTTP {res.status})")
    if res.status == 404 and "model" in (res.error or "").lower():
        raise RunError(f"{label}: the endpoint does not know model {model!r} ({res.error})")
    if res.status == 404:
        hint = "" if "/v1/" in client.url else (
            "; most servers serve the API under /v1: does base_url lack it?")
        raise RunError(f"{label}: no such path: {client.url} answered HTTP 404{hint}")
    return connect_round_trips(client.base_url)


def _model_ids(doc: Any) -> set[str] | None:
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        return None
    return {str(m["id"]) for m in doc["data"] if isinstance(m, dict) and "id" in m}
