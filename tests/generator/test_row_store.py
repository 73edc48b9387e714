"""The build's Arrow memory: allocated with malloc, as measured faster for one build."""

from __future__ import annotations

import pyarrow as pa
import pytest

from epbench.generator.build import row_store


def test_the_build_allocates_arrow_memory_with_malloc_unless_the_user_chose(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = pa.default_memory_pool()
    try:
        monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
        pa.set_memory_pool(pa.mimalloc_memory_pool())
        row_store.prefer_system_allocator()
        assert pa.default_memory_pool().backend_name == "mimalloc"  # the user's choice
        monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL")
        row_store.prefer_system_allocator()
        assert pa.default_memory_pool().backend_name == "system"
    finally:
        pa.set_memory_pool(before)
