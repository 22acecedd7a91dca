"""Restarts crashed child processes with exponential back-off, and gives up on one that keeps crashing.

`weaverbird up` runs the services and the Kafka broker as children of one launcher. Stopping all of
them because one service died throws away the broker's queue (it is in memory) and every healthy
service; restarting the one that died is what Kubernetes would do, so the local stack does it too.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Phase = Literal["running", "starting", "backing_off", "given_up"]


@dataclass(frozen=True)
class RestartPolicy:
    """Back-off doubles from `initial_backoff_s` up to `max_backoff_s`; more than `max_restarts`
    restarts within `window_s` and the service is left down (a crash loop a restart will not fix)."""

    initial_backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_restarts: int = 5
    window_s: float = 300.0

    def __post_init__(self) -> None:
        if self.initial_backoff_s < 0 or self.max_backoff_s < self.initial_backoff_s:
            raise ValueError("need 0 <= initial_backoff_s <= max_backoff_s")
        if self.max_restarts < 0 or self.window_s <= 0:
            raise ValueError("need max_restarts >= 0 and window_s > 0")

    def backoff_s(self, recent_restarts: int) -> float:
        """Wait before the next restart, given the restarts already made within the window."""
        return min(self.initial_backoff_s * 2**recent_restarts, self.max_backoff_s)


@dataclass
class Child:
    """One supervised process: how to start it, how to tell it is ready, and its restart record."""

    name: str
    spawn: Callable[[], subprocess.Popen[bytes]]
    ready: Callable[[], bool]  # a quick readiness probe (a health check); must not block for long
    process: subprocess.Popen[bytes]
    phase: Phase = "running"
    restarts: deque[float] = field(default_factory=deque)  # monotonic times of recent restarts
    due: float = 0.0  # backing_off: when to restart; starting: when to give up waiting
    restarted_at: float = 0.0


def describe_exit(code: int | None) -> str:
    """'exited with code 3' / 'was killed by SIGKILL'."""
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Supervisor:
    """Watches children on a background thread and restarts those that exit; `stop()` before
    terminating them, so a deliberate shutdown is never mistaken for a crash."""

    def __init__(
        self,
        policy: RestartPolicy,
        startup_timeout_s: float,
        announce: Callable[[str], None] = _say,
        tick_s: float = 0.25,
    ) -> None:
        self.policy = policy
        self._startup_timeout_s = startup_timeout_s
        self._announce = announce
        self._tick_s = tick_s
        self._children: dict[str, Child] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, child: Child) -> None:
        with self._lock:
            self._children[child.name] = child

    def release(self, name: str) -> None:
        """Stops watching one child (before the caller stops it on purpose); no restart follows."""
        with self._lock:
            self._children.pop(name, None)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="weaverbird-supervisor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops watching (no restart after this returns); the caller then stops the processes."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def phase(self, name: str) -> Phase:
        with self._lock:
            return self._children[name].phase

    def _run(self) -> None:
        while not self._stopping.wait(self._tick_s):
            with self._lock:
                children = list(self._children.values())
            for child in children:
                with self._lock:
                    # Stopping or released since the snapshot: a deliberate stop, not a crash.
                    if self._stopping.is_set() or self._children.get(child.name) is not child:
                        continue
                    self._step(child, time.monotonic())

    def _step(self, child: Child, now: float) -> None:
        if child.phase == "given_up":
            return
        if child.phase == "backing_off":
            if now >= child.due:
                self._restart(child, now)
            return
        code = child.process.poll()
        if child.phase == "starting" and code is None:
            if child.ready():
                child.phase = "running"
                self._announce(f"{child.name} is back (serving {now - child.restarted_at:.1f}s after its restart)")
            elif now >= child.due:
                self._announce(f"{child.name} not ready {self._startup_timeout_s:.0f}s after its restart; killing it")
                child.process.kill()
                child.process.wait()
                self._crashed(child, "did not become ready", now)
            return
        if code is not None:
            self._crashed(child, describe_exit(code), now)

    def _crashed(self, child: Child, how: str, now: float) -> None:
        while child.restarts and now - child.restarts[0] > self.policy.window_s:
            child.restarts.popleft()
        if len(child.restarts) >= self.policy.max_restarts:
            child.phase = "given_up"
            self._announce(
                f"{child.name} {how}; giving up on it after {len(child.restarts)} restarts in "
                f"{self.policy.window_s:.0f}s (see its log). The rest of the stack keeps running."
            )
            return
        delay = self.policy.backoff_s(len(child.restarts))
        child.phase = "backing_off"
        child.due = now + delay
        self._announce(
            f"{child.name} {how}; restarting in {delay:.1f}s "
            f"(restart {len(child.restarts) + 1} of at most {self.policy.max_restarts} in "
            f"{self.policy.window_s:.0f}s)"
        )

    def _restart(self, child: Child, now: float) -> None:
        child.restarts.append(now)
        child.restarted_at = now
        try:
            child.process = child.spawn()
        except OSError as exc:
            self._crashed(child, f"could not be started ({exc})", now)
            return
        child.phase = "starting"
        child.due = now + self._startup_timeout_s
        self._announce(f"{child.name} restarted (pid {child.process.pid})")
