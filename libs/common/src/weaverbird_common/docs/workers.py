"""A small pool of extraction processes that are killed when a call overruns its time budget.

A thread cannot be stopped: an HTML or PDF parse stuck in lxml or pypdf would keep a core busy
long after the caller gave up (a 5 MB page of nested markup ran 30-40 s past a 20 s deadline).
A process can be killed, so every parse runs in one, and the parent only waits `timeout_s`.
Workers are reused between calls (importing trafilatura and pypdf costs about a second). They are
fresh interpreters (`python -m weaverbird_common.docs.workers_main FD`), not forks: forking a
multi-threaded gRPC process is unsafe, and multiprocessing's spawn/forkserver would re-import the
service's __main__ in every worker.

Hostile documents (issue 34: two 48 KB PDFs of 300 x 20,000 text operators held both workers for 60 s
and a one-line text add waited 58 s) are contained three ways. A call whose `cancel` event is set
(its client went away) has its worker killed at once. Each principal may hold at most
`per_principal` of the general slots, so one caller cannot take them all. And "light" calls (small
text, bounded by size to a fraction of a second) have a lane of their own and go first, so a small
document never waits behind big ones; waiting heavy calls are served smallest first.
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class WorkerTimedOut(Exception):
    """The call did not finish within its budget; its worker was killed."""


class WorkerCrashed(Exception):
    """The worker died during the call (a crash in native code, or the OOM killer)."""


class WorkerCancelled(Exception):
    """The caller cancelled the call (its client went away); its worker, if it had one, was killed."""


# What a worker process runs (named, not imported: it imports the loaders, which import this module).
_ENTRY_MODULE = "weaverbird_common.docs.workers_main"

# How often a waiting or running call looks at its cancel event.
_CANCEL_POLL_S = 0.05


def serve(conn: Connection) -> None:
    """Worker loop: run (fn, args, kwargs) and send back (ok, value) until the parent goes away."""
    # Ctrl-C in a terminal reaches the whole process group; the parent decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    while True:
        try:
            fn, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return  # the parent closed the pipe or died
        try:
            reply: tuple[bool, Any] = (True, fn(*args, **kwargs))
        except Exception as exc:
            reply = (False, exc)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an unpicklable result or exception: say what it was instead
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def _exit_with_parent(parent: int) -> None:
    """Ends the worker when its parent is gone, even mid-parse (a SIGKILLed service, say).

    Polling the parent id rather than prctl(PR_SET_PDEATHSIG): that signal fires when the *thread*
    that started the worker exits, and callers start workers from short-lived executor threads.
    """
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


class _Worker:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        with ours, theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-m", _ENTRY_MODULE, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
            self.conn = Connection(ours.detach())

    def call(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        timeout_s: float,
        cancel: threading.Event | None = None,
    ) -> tuple[bool, Any]:
        """(True, result) or (False, the exception fn raised)."""
        deadline = time.monotonic() + timeout_s
        try:
            self.conn.send((fn, args, kwargs))
            while not self.conn.poll(min(_CANCEL_POLL_S, max(0.0, deadline - time.monotonic()))):
                if cancel is not None and cancel.is_set():
                    raise WorkerCancelled("the caller went away")
                if time.monotonic() >= deadline:
                    raise WorkerTimedOut(f"no result after {timeout_s:g}s")
            reply: tuple[bool, Any] = self.conn.recv()
        except (EOFError, OSError) as exc:
            raise WorkerCrashed(f"extraction worker died (exit code {self.process.poll()})") from exc
        return reply

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=5)
        self.conn.close()


class _Ticket:
    """One call waiting for a slot; ordered light first, then by size, then by arrival."""

    def __init__(self, rank: tuple[int, int, int], principal: str, light: bool) -> None:
        self.rank, self.principal, self.light = rank, principal, light
        self.slot: str | None = None  # "general" or "light" once granted

    def __lt__(self, other: _Ticket) -> bool:
        return self.rank < other.rank


class SlotScheduler:
    """Grants `size` general slots and `light_slots` slots only light calls may use.

    A principal holds at most `per_principal` general slots with heavy calls; light calls are not
    capped (they are small by definition) and use a general slot when their own lane is full. Calls
    without a principal (the service's own work, e.g. the orchestrator's web pages) are not capped.
    """

    def __init__(self, size: int, light_slots: int = 1, per_principal: int | None = None) -> None:
        self.size = max(1, size)
        self.light_slots = max(0, light_slots)
        self.per_principal = max(1, per_principal if per_principal is not None else self.size - 1)
        self._free = {"general": self.size, "light": self.light_slots}
        self._heavy: dict[str, int] = {}
        self._waiting: list[_Ticket] = []
        self._seq = itertools.count()
        self._changed = threading.Condition()

    def acquire(self, principal: str, light: bool, size_bytes: int, cancel: threading.Event | None) -> _Ticket:
        """Blocks until a slot is granted; raises WorkerCancelled if `cancel` is set first."""
        if cancel is not None and cancel.is_set():
            raise WorkerCancelled("the caller went away before its parse started")
        ticket = _Ticket((0 if light else 1, size_bytes, next(self._seq)), principal, light)
        with self._changed:
            self._waiting.append(ticket)
            self._grant()
            while ticket.slot is None:
                if cancel is not None and cancel.is_set():
                    self._waiting.remove(ticket)
                    raise WorkerCancelled("the caller went away while waiting for a parse worker")
                self._changed.wait(_CANCEL_POLL_S)
        return ticket

    def in_use(self) -> int:
        """Slots granted and not yet released."""
        with self._changed:
            return self.size + self.light_slots - sum(self._free.values())

    def waiting(self) -> int:
        """Calls waiting for a slot."""
        with self._changed:
            return len(self._waiting)

    def release(self, ticket: _Ticket) -> None:
        with self._changed:
            assert ticket.slot is not None
            self._free[ticket.slot] += 1
            if not ticket.light:
                self._heavy[ticket.principal] -= 1
            self._grant()

    def _grant(self) -> None:
        granted = False
        for ticket in sorted(self._waiting):
            if ticket.light and self._free["light"] > 0:
                ticket.slot = "light"
            elif self._free["general"] > 0 and (
                ticket.light or not ticket.principal or self._heavy.get(ticket.principal, 0) < self.per_principal
            ):
                ticket.slot = "general"
                if not ticket.light:
                    self._heavy[ticket.principal] = self._heavy.get(ticket.principal, 0) + 1
            else:
                continue
            self._free[ticket.slot] -= 1
            self._waiting.remove(ticket)
            granted = True
        if granted:
            self._changed.notify_all()


class WorkerPool:
    """Worker processes behind a SlotScheduler; a call waits for a slot, then gets `timeout_s` to finish."""

    def __init__(self, size: int, light_slots: int = 1, per_principal: int | None = None) -> None:
        self.scheduler = SlotScheduler(size, light_slots, per_principal)
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()

    def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        timeout_s: float,
        cancel: threading.Event | None = None,
        principal: str = "",
        light: bool = False,
        size_bytes: int = 0,
        **kwargs: Any,
    ) -> T:
        """fn(*args, **kwargs) in a worker; raises WorkerTimedOut / WorkerCrashed / WorkerCancelled, or
        what fn raised. `principal` is who asked (for the per-principal cap), `light` marks a call
        known to be cheap, `size_bytes` orders the waiting heavy calls (smallest first).

        `fn` and its arguments must be picklable (a module-level function, plain data)."""
        ticket = self.scheduler.acquire(principal, light, size_bytes, cancel)
        try:
            worker = self._take()
            try:
                ok, value = worker.call(fn, args, kwargs, timeout_s, cancel)
            except BaseException:
                # Timed out, crashed, cancelled, or we were interrupted mid-call: a worker that may
                # still be busy is never reused. Killing it frees the core now; the next call starts one.
                worker.kill()
                raise
            self._idle.put(worker)
        finally:
            self.scheduler.release(ticket)
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def _take(self) -> _Worker:
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return _Worker()
            if worker.process.poll() is None:
                return worker
            worker.kill()  # died while idle (killed from outside); reap it and try the next

    def close(self) -> None:
        """Stops the idle workers (busy ones are killed by their caller's timeout or exit with us)."""
        while True:
            try:
                self._idle.get_nowait().kill()
            except queue.Empty:
                return


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def shared_pool(size: int) -> WorkerPool:
    """The process-wide pool (created on first use with `size` workers)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkerPool(size)
        return _pool
