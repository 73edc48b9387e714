"""The incremental build's machinery, behind this one interface: the build cache (per result
file its findings and table rows, outside the checkout), the rows stored column-wise per
shard, the cold-shard workers of a full build, the cache's background writer and the manifest
of the result pages that still stand. The domain modules (validation, tables, pages) know
nothing of it; `epbench.generator.site` and the command line use what is exported here.
"""

from __future__ import annotations

from epbench.generator.build.build_cache import context_digest, default_folder
from epbench.generator.build.cache_writer import wait_saved
from epbench.generator.build.cached_checks import cached_tables
from epbench.generator.build.page_manifest import (
    PageManifest,
    drop_stale,
    hashed_by_repr,
    page_digests,
    shell_digest,
)

__all__ = ["PageManifest", "cached_tables", "context_digest", "default_folder", "drop_stale",
           "hashed_by_repr", "page_digests", "shell_digest", "wait_saved"]
