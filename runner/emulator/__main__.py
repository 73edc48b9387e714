"""The emulator child process (see process.py): config on stdin, port on stdout, serve."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from epbench.core.errors import EpbenchError
from epbench.runner.emulator.process import HOST, READY_PREFIX
from epbench.runner.emulator.server import _config, bind, build_app
from epbench.runner.emulator.settings import settings_from_block


def main() -> int:
    config = json.loads(sys.stdin.buffer.readline())
    endpoint: dict[str, Any] = config["endpoint"]
    dirs = [Path(d) for d in config["workload_dirs"]] if config.get("workload_dirs") else None
    try:
        # the parent has checked the document against the schema already
        settings = settings_from_block(endpoint, f"endpoint {endpoint.get('id', '?')}")
        app = build_app(settings, dirs)
        sock = bind(HOST, int(config.get("port") or 0))
    except EpbenchError as exc:
        print(f"{READY_PREFIX}error={exc}", flush=True)
        return 1
    import uvicorn

    server = uvicorn.Server(_config(app))

    def watch_parent() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        server.should_exit = True  # the parent closed our stdin, or died

    threading.Thread(target=watch_parent, daemon=True).start()
    print(f"{READY_PREFIX}port={sock.getsockname()[1]}", flush=True)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # nothing else goes to the parent's pipe
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
