"""A lean HTTP/1.1 transport for httpx: asyncio protocols and the httptools (llhttp) parser.

Three ideas, one module each:

- `connection.py`: one connection's protocol (the parser's callbacks, the body queue or
  sink, the idle watchdog, the header cap) and the request/response extensions;
- `pool.py`: `LeanTransport`, the httpx transport interface (slots, keep-alive, parking
  after the stream's end marker) and the response body;
- `stamps.py`: kernel receive timestamps over a raw socket (Linux, plain HTTP).
"""

from epbench.runner.transport.connection import (
    BODY_EXTENSION,
    DEFAULT_HEADER_CAP,
    HEADER_CAP_EXTENSION,
    WRITE_EXTENSION,
    StampedBytes,
)
from epbench.runner.transport.pool import LeanTransport
from epbench.runner.transport.stamps import KERNEL_STAMPS

__all__ = [
    "BODY_EXTENSION",
    "DEFAULT_HEADER_CAP",
    "HEADER_CAP_EXTENSION",
    "KERNEL_STAMPS",
    "WRITE_EXTENSION",
    "LeanTransport",
    "StampedBytes",
]
