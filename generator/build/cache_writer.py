"""The build cache is written by a forked child while the build goes on.

Writing the cache at 100,000 results is seconds of JSON (every file's entry and rows), and
nothing in the rest of the build reads it: the tables, pages and downloads are made from what
is in memory. So the build forks, the child writes the shards and exits, and the parent puts
the tables together and starts on the site on the other core. The next build (or the end of
this one, or the interpreter's exit) waits for the child first; a child that failed leaves a
warning and the shards as they were, and the next build just checks more files (every shard
file is replaced atomically under the digest of its body, so a half-written cache cannot be read).
"""

from __future__ import annotations

import atexit
import logging
import os
from typing import Protocol

log = logging.getLogger(__name__)

_CHILDREN: list[int] = []


class Saving(Protocol):
    def save(self) -> None: ...


def save_in_background(cache: Saving) -> None:
    """`cache.save()` in a forked child (in this process where there is no fork)."""
    if not hasattr(os, "fork"):
        cache.save()
        return
    pid = os.fork()
    if pid == 0:  # the child: write, then leave without running the parent's exit handlers
        code = 1
        try:
            cache.save()
            code = 0
        except BaseException:
            log.exception("build cache: writing the cache failed")
        finally:
            os._exit(code)
    _CHILDREN.append(pid)


def wait_saved() -> bool:
    """Wait for every cache writer this process started; False when one failed."""
    good = True
    while _CHILDREN:
        pid = _CHILDREN.pop()
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # already reaped
            continue
        if os.waitstatus_to_exitcode(status) != 0:
            good = False
            log.warning("build cache: the cache was not written (the writer exited with %s); "
                        "the next build checks the files again", status)
    return good


atexit.register(wait_saved)
