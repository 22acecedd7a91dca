"""The launcher's supervisor with real child processes: a killed child comes back, a crash-looping one is
given up on (and says so), and the others are never touched."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import pytest
from weaverbird_cli.supervisor import Child, RestartPolicy, Supervisor, describe_exit

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]
CRASHER = [sys.executable, "-c", "import sys; sys.exit(3)"]
WAIT_S = 60.0  # upper bound only: each wait ends as soon as its condition holds


def _spawner(cmd: list[str]) -> Callable[[], subprocess.Popen[bytes]]:
    return lambda: subprocess.Popen(cmd, stdin=subprocess.DEVNULL)


class Console:
    """Collects the supervisor's announcements and lets a test wait for one."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()

    def __call__(self, message: str) -> None:
        with self._changed:
            self.lines.append(message)
            self._changed.notify_all()

    def wait_for(self, *parts: str) -> str:
        def match() -> str | None:
            return next((line for line in self.lines if all(p in line for p in parts)), None)

        with self._changed:
            assert self._changed.wait_for(lambda: match() is not None, timeout=WAIT_S), (parts, self.lines)
            found = match()
            assert found is not None
            return found


@pytest.fixture
def watched() -> Iterator[tuple[Supervisor, Console, dict[str, Child]]]:
    console = Console()
    supervisor = Supervisor(
        RestartPolicy(initial_backoff_s=0.1, max_backoff_s=0.4, max_restarts=2, window_s=600),
        startup_timeout_s=30,
        announce=console,
        tick_s=0.05,
    )
    children = {
        name: Child(name=name, spawn=_spawner(cmd), ready=lambda: True, process=_spawner(cmd)())
        for name, cmd in (("steady", SLEEPER), ("victim", SLEEPER), ("looper", SLEEPER))
    }
    for child in children.values():
        supervisor.watch(child)
    supervisor.start()
    try:
        yield supervisor, console, children
    finally:
        supervisor.stop()
        for child in children.values():
            child.process.kill()
            child.process.wait()


def test_a_killed_child_is_restarted_and_the_others_keep_their_process(
    watched: tuple[Supervisor, Console, dict[str, Child]],
) -> None:
    supervisor, console, children = watched
    steady_pid, old = children["steady"].process.pid, children["victim"].process
    old.send_signal(signal.SIGKILL)
    assert "restarting in 0.1s" in console.wait_for("victim was killed by SIGKILL")
    console.wait_for("victim is back")
    assert supervisor.phase("victim") == "running"
    assert children["victim"].process.pid != old.pid and children["victim"].process.poll() is None
    assert children["steady"].process.pid == steady_pid and children["steady"].process.poll() is None


def test_a_crash_loop_is_given_up_on_after_the_limit_and_says_so(
    watched: tuple[Supervisor, Console, dict[str, Child]],
) -> None:
    supervisor, console, children = watched
    looper = children["looper"]
    looper.spawn = _spawner(CRASHER)  # from now on it dies at once every time it starts
    looper.process.kill()
    message = console.wait_for("looper", "giving up")
    assert "after 2 restarts" in message and "exited with code 3" in message
    assert supervisor.phase("looper") == "given_up"
    # The back-off doubled between the two restarts it did make.
    delays = [
        line.split("restarting in ")[1].split("s ")[0]
        for line in console.lines
        if "looper" in line and "restarting in" in line
    ]
    assert delays == ["0.1", "0.2"], console.lines
    assert all(children[name].process.poll() is None for name in ("steady", "victim"))


def test_backoff_doubles_up_to_its_cap() -> None:
    policy = RestartPolicy(initial_backoff_s=1, max_backoff_s=10, max_restarts=5, window_s=60)
    assert [policy.backoff_s(n) for n in range(6)] == [1, 2, 4, 8, 10, 10]


def test_exit_descriptions_name_the_signal() -> None:
    assert describe_exit(-9) == "was killed by SIGKILL"
    assert describe_exit(3) == "exited with code 3"


def test_a_released_child_stopped_on_purpose_is_not_restarted(
    watched: tuple[Supervisor, Console, dict[str, Child]],
) -> None:
    supervisor, console, children = watched
    victim = children["victim"].process
    supervisor.release("victim")  # what the launcher does before stopping the gateway
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    children["steady"].process.send_signal(signal.SIGKILL)  # a crash after it is still restarted
    console.wait_for("steady is back")
    assert not any("victim" in line for line in console.lines), console.lines
    with pytest.raises(KeyError):
        supervisor.phase("victim")
