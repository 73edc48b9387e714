"""The build runs with Python's cyclic garbage collector paused.

A build at 100,000 results holds millions of objects until it ends: the cache entries, the
checked files, the rows and the tables. Each time enough new objects pile up, the collector
walks the older ones again looking for reference cycles; at 100,000 results that was 2 s of a
10 s rebuild (`bench/site_scale.py`), and the build makes almost no cycles. Reference counting
still frees everything as usual; what cycles there are are collected once, at the end.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block (nested blocks are fine); collect after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
            gc.collect()
