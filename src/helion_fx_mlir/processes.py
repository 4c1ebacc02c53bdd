"""Forked children: the one place that forks, waits with a deadline and reads how a child
ended. Crashes we cannot prevent (LLVM aborting, a tool dying on hostile input) happen in a
child, so the caller's process survives to report them."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Ended:
    """How a child ended: its exit code, or the signal that killed it, or the deadline."""

    status: int  # the wait status
    timed_out: bool = False

    @property
    def signal(self) -> int | None:
        return os.WTERMSIG(self.status) if os.WIFSIGNALED(self.status) else None

    @property
    def code(self) -> int | None:
        return os.WEXITSTATUS(self.status) if os.WIFEXITED(self.status) else None


def fork(child: Callable[[], int], own_group: bool = False) -> int:
    """Fork; the child runs `child` and exits with its result (1 on an exception, the code
    of a SystemExit) without interpreter teardown. Returns the child's pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _run_child(child, own_group)
    if own_group:
        with contextlib.suppress(OSError):  # set from both sides so neither order races
            os.setpgid(pid, pid)
    return pid


def _run_child(child: Callable[[], int], own_group: bool) -> None:
    code = 1
    try:
        if own_group:
            os.setpgid(0, 0)
        code = child()
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def wait(pid: int, timeout: float | None = None) -> Ended:
    """Reap the child; past `timeout` seconds its process group (or itself, when it has
    none of its own) is killed first."""
    if timeout is None or _exits_within(pid, timeout):
        return Ended(os.waitpid(pid, 0)[1])
    _kill(pid)
    return Ended(os.waitpid(pid, 0)[1], timed_out=True)


def _exits_within(pid: int, timeout: float) -> bool:
    """Whether the child ends within `timeout` seconds: woken by its exit (a pidfd) where
    Linux has them, else by polling."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return _polled_exit(pid, timeout)
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def _polled_exit(pid: int, timeout: float) -> bool:
    deadline, delay = time.monotonic() + timeout, 0.001
    while time.monotonic() <= deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(delay)
        delay = min(2 * delay, 0.05)
    return False


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)  # its grandchildren too
        else:
            os.kill(pid, signal.SIGKILL)


def _exit_code(code: object) -> int:
    """SystemExit's code as the interpreter turns it into an exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def signal_name(number: int) -> str:
    """'signal 6 (SIGABRT)'."""
    return f"signal {number} ({signal.Signals(number).name})"
