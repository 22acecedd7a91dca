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


async def _until(condition: object, rounds: int = 200) -> None:
    """Lets the background task run until `condition()` holds (bounded, never a wall-clock assertion)."""
    for _ in range(rounds):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the background refresh did not happen")


async def test_reads_once_then_refreshes_in_the_background_after_invalidate() -> None:
    reader = _Reader()
    cache = CatalogCache(reader, ttl_s=3600)
    first, second = await asyncio.gather(cache.get(), cache.get())
    assert reader.calls == 1 and first is second
    cache.invalidate()
    assert (await cache.get()).points == 1  # the question does not wait for the new read
    await _until(lambda: reader.calls == 2)
    assert (await cache.get()).points == 2
    await cache.aclose()


class _SlowReader(_Reader):
    """A read that does not finish until released: a question must not wait for it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def __call__(self) -> Catalog:
        if self.calls:
            await self.release.wait()
        return await super().__call__()


async def test_a_question_never_waits_for_a_refresh_after_the_first_read() -> None:
    reader = _SlowReader()
    cache = CatalogCache(reader, ttl_s=3600)
    assert (await cache.get()).points == 1
    cache.invalidate()
    await asyncio.sleep(0.05)  # the background read has started and is blocked
    served = await asyncio.wait_for(cache.get(), timeout=5)  # would hang if it waited on the lock
    assert served.points == 1
    reader.release.set()
    await _until(lambda: reader.calls == 2)
    await cache.aclose()


async def test_a_change_in_the_kb_size_triggers_a_read_and_an_unchanged_one_does_not() -> None:
    reader = _Reader()
    size = {"points": 1}  # the first catalog says 1 point

    async def points() -> int:
        return size["points"]

    cache = CatalogCache(reader, ttl_s=3600, points=points, poll_s=0.01)
    await cache.get()
    await asyncio.sleep(0.1)  # ten polls of an unchanged KB
    assert reader.calls == 1
    size["points"] = 7  # an ingest landed
    await _until(lambda: reader.calls == 2)
    await asyncio.sleep(0.1)  # the size stays 7: no further reads
    assert reader.calls == 2
    await cache.aclose()


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


async def test_the_background_refresh_does_not_inherit_the_first_callers_deadline() -> None:
    from weaverbird_orchestrator.deadline import caller_deadline, time_left

    seen: list[float | None] = []

    class _DeadlineReader(_Reader):
        async def __call__(self) -> Catalog:
            seen.append(time_left())
            return await super().__call__()

    reader = _DeadlineReader()
    cache = CatalogCache(reader, ttl_s=3600)
    with caller_deadline(30.0):  # the question that happens to start the refresh task
        await cache.get()
    cache.invalidate()
    await _until(lambda: reader.calls == 2)
    assert seen[0] is not None  # the first read ran under the question's deadline
    assert seen[1] is None  # the background read runs under none: a past deadline would fail every read
    await cache.aclose()
