"""processes: the one fork/wait helper (crash guard, codegen probe, the MLIR fuzzer's children)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from helion_fx_mlir import processes


def _sleep(seconds: float) -> int:
    time.sleep(seconds)
    return 3


@pytest.fixture(params=["pidfd", "polling"])
def wait_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each case where Linux gives a pidfd, and where it does not (older kernels)."""
    if request.param == "polling":

        def no_pidfd(pid: int) -> int:
            raise OSError("pidfd_open")

        monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    return request.param


def test_a_child_that_ends_in_time_is_reaped_at_once(wait_kind: str) -> None:
    start = time.monotonic()
    ended = processes.wait(processes.fork(lambda: _sleep(0.05)), timeout=30)
    assert (ended.code, ended.signal, ended.timed_out) == (3, None, False)
    assert time.monotonic() - start < 5


def test_a_child_past_its_deadline_is_killed(wait_kind: str) -> None:
    ended = processes.wait(processes.fork(lambda: _sleep(60), own_group=True), timeout=0.2)
    assert ended.timed_out and ended.signal == signal.SIGKILL


def test_a_child_that_dies_reports_its_signal(wait_kind: str) -> None:
    """SIGTERM: pytest's faulthandler would print a dump for SIGABRT or SIGSEGV."""
    ended = processes.wait(processes.fork(lambda: os.kill(os.getpid(), signal.SIGTERM) or 0), 30)
    assert (ended.signal, ended.timed_out) == (signal.SIGTERM, False)
