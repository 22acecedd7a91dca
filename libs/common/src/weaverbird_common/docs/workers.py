"""A small pool of extraction processes that are killed when a call overruns its time budget.

A thread cannot be stopped: an HTML or PDF parse stuck in lxml or pypdf would keep a core busy
long after the caller gave up (a 5 MB page of nested markup ran 30-40 s past a 20 s deadline).
A process can be killed, so every parse runs in one, and the parent only waits `timeout_s`.
Workers are reused between calls (importing trafilatura and pypdf costs about a second). They are
fresh interpreters (`python -m weaverbird_common.docs.workers FD`), not forks: forking a
multi-threaded gRPC process is unsafe, and multiprocessing's spawn/forkserver would re-import the
service's __main__ in every worker.
"""

from __future__ import annotations

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


def _serve(conn: Connection) -> None:
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
                [sys.executable, "-m", __name__, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
            self.conn = Connection(ours.detach())

    def call(
        self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], timeout_s: float
    ) -> tuple[bool, Any]:
        """(True, result) or (False, the exception fn raised)."""
        try:
            self.conn.send((fn, args, kwargs))
            if not self.conn.poll(timeout_s):
                raise WorkerTimedOut(f"no result after {timeout_s:g}s")
            reply: tuple[bool, Any] = self.conn.recv()
        except (EOFError, OSError) as exc:
            raise WorkerCrashed(f"extraction worker died (exit code {self.process.poll()})") from exc
        return reply

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=5)
        self.conn.close()


class WorkerPool:
    """At most `size` worker processes; a call waits for a free one, then gets `timeout_s` to finish."""

    def __init__(self, size: int) -> None:
        self._slots = threading.BoundedSemaphore(max(1, size))
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()

    def run(self, fn: Callable[..., T], *args: Any, timeout_s: float, **kwargs: Any) -> T:
        """fn(*args, **kwargs) in a worker; raises WorkerTimedOut / WorkerCrashed, or what fn raised.

        `fn` and its arguments must be picklable (a module-level function, plain data)."""
        with self._slots:
            worker = self._take()
            try:
                ok, value = worker.call(fn, args, kwargs, timeout_s)
            except BaseException:
                # Timed out, crashed, or we were interrupted mid-call: a worker that may still be
                # busy is never reused. Killing it frees the core now; the next call forks a new one.
                worker.kill()
                raise
            self._idle.put(worker)
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


if __name__ == "__main__":
    # Loaded before the first request, so the first parse does not pay for the imports.
    import weaverbird_common.docs.loaders  # noqa: F401

    _serve(Connection(int(sys.argv[1])))
