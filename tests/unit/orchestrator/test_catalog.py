"""The orchestrator's view of the KB catalog: cached, refreshed on a timer, kept on a failed read."""

from __future__ import annotations

import asyncio

import pytest
from weaverbird_common.errors import Unavailable
from weaverbird_orchestrator.catalog import Catalog, CatalogCache


class _Reader:
    def __init__(self) -> None:
        self.calls = 0
        self.fail = False

    async def __call__(self) -> Catalog:
        self.calls += 1
        if self.fail:
            raise Unavailable("retriever is unavailable")
        return Catalog(companies={"NORTHWIND_ROBOTICS": ["Northwind Robotics Inc.", "NWR"]}, points=self.calls)


async def test_reads_once_within_the_ttl_and_again_after_invalidate() -> None:
    reader = _Reader()
    cache = CatalogCache(reader, ttl_s=3600)
    first, second = await asyncio.gather(cache.get(), cache.get())
    assert reader.calls == 1 and first is second
    cache.invalidate()
    assert (await cache.get()).points == 2


async def test_a_failed_refresh_keeps_the_previous_catalog() -> None:
    reader = _Reader()
    cache = CatalogCache(reader, ttl_s=0)
    assert (await cache.get()).points == 1
    reader.fail = True
    kept = await cache.get()
    assert reader.calls == 2 and kept.points == 1


def test_aliases_map_every_alias_to_its_company() -> None:
    aliases = Catalog(companies={"NORTHWIND_ROBOTICS": ["Northwind Robotics Inc.", "NWR"]}).aliases
    assert set(aliases.values()) == {"NORTHWIND_ROBOTICS"}
    assert len(aliases) >= 2


@pytest.mark.parametrize("ttl", [0.0])
async def test_zero_ttl_reads_every_time(ttl: float) -> None:
    reader = _Reader()
    cache = CatalogCache(reader, ttl_s=ttl)
    await cache.get()
    await cache.get()
    assert reader.calls == 2
