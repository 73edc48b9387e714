"""A loopback HTTP server that replays recorded SSE files in pieces of 1 to 7 bytes.

    with replay_server(corpus_dir) as port:
        POST http://127.0.0.1:{port}/{name}/v1/messages   -> the bytes of {corpus_dir}/{name}.sse

Each piece is its own HTTP chunk, written and flushed on a socket with TCP_NODELAY, so the
client's reads end at arbitrary byte offsets: inside events, lines, escapes and UTF-8
characters. Piece sizes come from a generator seeded by the file name, so a failure replays.
"""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def pieces(data: bytes, seed: str) -> list[bytes]:
    """`data` cut into pieces of 1..7 bytes (seeded)."""
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(data):
        size = rng.randint(1, 7)
        out.append(data[at : at + size])
        at += size
    return out


@contextmanager
def replay_server(corpus: Path) -> Iterator[int]:
    """Serve every `corpus/NAME.sse` at `/NAME/...` until the block ends; yields the port."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            name = self.path.strip("/").split("/")[0]
            path = corpus / f"{name}.sse"
            if not path.is_file() or "/" in name or name.startswith("."):
                self.send_error(404)
                return
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.end_headers()
            for piece in pieces(path.read_bytes(), name):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
