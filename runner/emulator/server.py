"""Running the emulator: uvicorn (httptools parser, uvloop) over the raw ASGI app.

`serve()` is `epbench emulate`; `serve_socket()` runs on a socket that is already bound, which
is how the subprocess started by `start_emulator` reports its port before it serves.
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

from epbench.runner.emulator.agentic import make_player
from epbench.runner.emulator.app import EmulatorApp
from epbench.runner.emulator.settings import EmulatorSettings, load_endpoint
from epbench.runner.emulator.state import EmulatorState

# uvicorn says this when an app ends a response early; the drop_mid_stream fault does so on
# purpose, and it is counted in /emulator/stats instead of logged.
_EXPECTED = "ASGI callable returned without completing response."


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _EXPECTED


def build_app(settings: EmulatorSettings, workload_dirs: list[Path] | None) -> EmulatorApp:
    """The ASGI app with its state, and the agentic player when one is installed."""
    player = make_player(settings.agentic, settings.seed, workload_dirs)
    return EmulatorApp(EmulatorState(settings, player))


def _config(app: Any, **kwargs: Any) -> Any:
    """uvicorn settings: uvloop and the httptools parser, when installed.

    Measured by bench/emulator_capacity.py (DESIGN.md): httptools costs half of h11's CPU per
    streamed token; uvloop about 5% less than asyncio's loop. The environment variables
    EPBENCH_EMULATOR_LOOP / EPBENCH_EMULATOR_HTTP choose others (for the benchmark).
    """
    import uvicorn

    loop = os.environ.get("EPBENCH_EMULATOR_LOOP") or _first_importable("uvloop", "asyncio")
    http = os.environ.get("EPBENCH_EMULATOR_HTTP") or _first_importable("httptools", "h11")
    logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
    return uvicorn.Config(
        app, loop=loop, http=http, lifespan="off", access_log=False, log_level="warning",
        timeout_keep_alive=60, backlog=2048, timeout_graceful_shutdown=2,
        server_header=False, date_header=False, **kwargs,
    )


def _first_importable(name: str, fallback: str) -> str:
    try:
        importlib.import_module(name)
    except ImportError:  # pragma: no cover - uvicorn[standard] brings both
        return fallback
    return name


def serve_socket(app: EmulatorApp, sock: socket.socket) -> Any:
    """Serve on a bound, listening socket until stopped; returns the uvicorn Server."""
    import uvicorn

    server = uvicorn.Server(_config(app))
    server.run(sockets=[sock])
    return server


def serve(config: Path, host: str, port: int, workload_dirs: list[Path] | None) -> None:
    """`epbench emulate`: load the endpoint file and serve until interrupted (blocking)."""
    _, settings = load_endpoint(Path(config))
    app = build_app(settings, workload_dirs)
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    print(f"epbench emulator: http://{host}:{bound}/v1 ({settings.model_name}, "
          f"{settings.slots} slots)", file=sys.stderr, flush=True)
    serve_socket(app, sock)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0: the kernel picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when the
    # proto says TCP. Without it Nagle holds each small SSE chunk until the previous one is
    # acknowledged, and the client's delayed ACK makes that up to 40 ms. Set on the listening
    # socket too, which accepted sockets inherit on Linux.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        from epbench.core.errors import InputError

        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror} -- "
                         "pick another --port (0 picks a free one)") from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock
