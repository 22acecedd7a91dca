"""The parse workers' scheduler (issue 34, item 6): one principal cannot take every worker, small text
has a lane of its own, waiting calls go smallest first, and a cancelled call stops waiting or running
(its worker process killed). Real threads and worker processes; every wait is for a state, not a time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from weaverbird_common.docs.workers import SlotScheduler, WorkerCancelled, WorkerPool

WAIT_S = 30.0  # upper bound only


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


class Waiter(threading.Thread):
    """acquire() on a thread, so the test can watch it wait."""

    def __init__(self, scheduler: SlotScheduler, principal: str, light: bool = False, size: int = 0) -> None:
        super().__init__(daemon=True)
        self.scheduler, self.principal, self.light, self.size = scheduler, principal, light, size
        self.cancel = threading.Event()
        self.slot: str | None = None
        self.error: BaseException | None = None
        self.granted = threading.Event()

    def run(self) -> None:
        try:
            self.ticket = self.scheduler.acquire(self.principal, self.light, self.size, self.cancel)
            self.slot = self.ticket.slot
        except BaseException as exc:
            self.error = exc
        self.granted.set()


def test_one_principal_gets_at_most_its_share_and_another_is_served() -> None:
    scheduler = SlotScheduler(size=2, light_slots=1)  # per_principal defaults to size - 1
    first = scheduler.acquire("mallory", light=False, size_bytes=48_000, cancel=None)
    second = Waiter(scheduler, "mallory", size=48_000)
    second.start()
    _until(lambda: scheduler.waiting() == 1)
    other = scheduler.acquire("alice", light=False, size_bytes=10_000_000, cancel=None)
    assert other.slot == "general" and not second.granted.is_set()
    scheduler.release(first)
    assert second.granted.wait(WAIT_S) and second.slot == "general"
    scheduler.release(other)
    scheduler.release(second.ticket)
    assert scheduler.in_use() == 0


def test_light_text_has_its_own_lane_when_every_general_slot_is_busy() -> None:
    scheduler = SlotScheduler(size=2, light_slots=1, per_principal=2)
    heavy = [scheduler.acquire("mallory", light=False, size_bytes=48_000, cancel=None) for _ in range(2)]
    light = scheduler.acquire("mallory", light=True, size_bytes=40, cancel=None)
    assert light.slot == "light"
    # A second light call while the lane is taken waits, and goes before any heavy one.
    heavy_waiter, light_waiter = Waiter(scheduler, "alice", size=1), Waiter(scheduler, "bob", light=True, size=40)
    heavy_waiter.start()
    _until(lambda: scheduler.waiting() == 1)
    light_waiter.start()
    _until(lambda: scheduler.waiting() == 2)
    scheduler.release(heavy[0])
    assert light_waiter.granted.wait(WAIT_S) and light_waiter.slot == "general"
    assert not heavy_waiter.granted.is_set()
    for ticket in (heavy[1], light, light_waiter.ticket):
        scheduler.release(ticket)
    assert heavy_waiter.granted.wait(WAIT_S)


def test_waiting_heavy_calls_are_served_smallest_first() -> None:
    scheduler = SlotScheduler(size=1, light_slots=0, per_principal=1)
    holder = scheduler.acquire("carol", light=False, size_bytes=1, cancel=None)
    big, small = Waiter(scheduler, "alice", size=5_000_000), Waiter(scheduler, "bob", size=2_000)
    big.start()
    _until(lambda: scheduler.waiting() == 1)
    small.start()
    _until(lambda: scheduler.waiting() == 2)
    scheduler.release(holder)
    assert small.granted.wait(WAIT_S) and not big.granted.is_set()
    scheduler.release(small.ticket)
    assert big.granted.wait(WAIT_S)


def test_a_cancelled_waiter_leaves_the_queue() -> None:
    scheduler = SlotScheduler(size=1, light_slots=0)
    holder = scheduler.acquire("carol", light=False, size_bytes=1, cancel=None)
    waiter = Waiter(scheduler, "alice")
    waiter.start()
    _until(lambda: scheduler.waiting() == 1)
    waiter.cancel.set()
    assert waiter.granted.wait(WAIT_S) and isinstance(waiter.error, WorkerCancelled)
    assert scheduler.waiting() == 0
    scheduler.release(holder)
    assert scheduler.in_use() == 0


def test_a_cancelled_call_kills_its_worker_and_frees_the_slot() -> None:
    pool = WorkerPool(1, light_slots=0)
    cancel = threading.Event()
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            pool.run(time.sleep, 3600, timeout_s=7200, cancel=cancel)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    _until(lambda: pool.scheduler.in_use() == 1)
    cancel.set()
    thread.join(WAIT_S)
    assert len(outcome) == 1 and isinstance(outcome[0], WorkerCancelled)
    assert pool.scheduler.in_use() == 0
    try:
        assert pool.run(len, "abc", timeout_s=30) == 3  # a fresh worker replaces the killed one
    finally:
        pool.close()


def test_a_call_cancelled_before_it_starts_never_runs() -> None:
    pool = WorkerPool(1)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(WorkerCancelled):
        pool.run(len, "abc", timeout_s=30, cancel=cancel)
    pool.close()


def test_work_without_a_principal_is_not_capped() -> None:
    # The orchestrator's own web-page parses may use every general slot, as before.
    scheduler = SlotScheduler(size=2, light_slots=1)
    tickets = [scheduler.acquire("", light=False, size_bytes=100_000, cancel=None) for _ in range(2)]
    assert [t.slot for t in tickets] == ["general", "general"]
    for ticket in tickets:
        scheduler.release(ticket)
