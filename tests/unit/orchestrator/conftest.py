"""Flows built over fake peers in these tests are dropped without `aclose()`; their catalog refresh task
(started on the first question) would otherwise poll on the session's event loop until the run ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest


@pytest.fixture(autouse=True)
async def _stop_catalog_refreshes() -> AsyncIterator[None]:
    before = asyncio.all_tasks()
    yield
    started = [t for t in asyncio.all_tasks() - before if t.get_name() == "catalog-refresh" and not t.done()]
    for task in started:
        task.cancel()
    for task in started:
        with contextlib.suppress(asyncio.CancelledError):
            await task
