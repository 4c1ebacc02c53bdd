"""The command-line tools' fuzzer: a bounded run, and the machinery it relies on."""

from __future__ import annotations

import os
import pathlib
import signal
import sys
import time

import pytest

from helion_fx_mlir.tools.fuzz import mlir_inputs
from helion_fx_mlir.tools.fuzz.mlir_inputs import Exit

# About a minute on one core: the corpus (sample kernels emitted once), then each run
# forks the worker; `make fuzz-mlir` runs many more.
BOUNDED_RUNS = 150


def test_bounded_run_has_no_crash_traceback_unlocated_hang_or_bad_exit(
    tmp_path: pathlib.Path,
) -> None:
    """Malformed input only ever gets located diagnostics (or a tool-level message)."""
    summary = mlir_inputs.run_fuzz(BOUNDED_RUNS, seed=0, jobs=1, timeout=60.0, keep=tmp_path)
    assert summary.runs == BOUNDED_RUNS
    if summary.failures:
        pytest.fail(summary.report(), pytrace=False)


def test_plans_are_deterministic_and_take_turns_over_the_tools() -> None:
    sources = mlir_inputs.lit_corpus()
    plans = [mlir_inputs.plan_case(i, 7, sources) for i in range(30)]
    assert plans == [mlir_inputs.plan_case(i, 7, sources) for i in range(30)]
    assert [p.tool for p in plans[:6]] == list(mlir_inputs.TOOLS)
    assert all(1 <= len(p.mutations) <= 3 for p in plans)


@pytest.mark.parametrize(
    ("ended", "kind"),
    [
        (Exit(0, None, False, ""), "ok"),
        (
            Exit(
                1,
                None,
                False,
                "in.mlir:3:7: error: expected SSA operand\n  in.mlir:3:1: note: here",
            ),
            "diagnostic",
        ),
        (
            Exit(2, None, False, "helion-opt: error: unknown option or pass '--x' (see --help)"),
            "diagnostic",
        ),
        (Exit(None, 11, False, "LLVM ERROR: out of memory"), "crash"),
        (
            Exit(
                1, None, False, "helion-opt: internal error: MLIR crashed (signal 6) in the parser"
            ),
            "crash",
        ),
        (
            Exit(1, None, False, "Traceback (most recent call last):\n  File ...\nValueError: bad"),
            "traceback",
        ),
        (Exit(1, None, False, "helion-opt: error: KeyError: 'name'"), "traceback"),
        (Exit(1, None, False, "helion-mlir: internal error: 'name'"), "traceback"),
        (Exit(1, None, False, "in.mlir: error: unknown location"), "unlocated"),
        (
            Exit(
                1,
                None,
                False,
                "helion-opt: error: cannot read in.mlir: 'utf-8' codec can't decode byte 0xff",
            ),
            "unlocated",
        ),
        (Exit(1, None, False, ""), "unlocated"),
        (Exit(None, None, True, ""), "hang"),
        (Exit(0, None, False, "in.mlir:1:1: error: but exit 0"), "bad-exit"),
        (Exit(3, None, False, ""), "bad-exit"),
    ],
)
def test_classification(ended: Exit, kind: str) -> None:
    assert mlir_inputs.classify(ended)[0] == kind


def _killed() -> int:
    os.kill(os.getpid(), signal.SIGKILL)  # not SIGABRT: pytest's faulthandler would print
    return 0


def _sleep() -> int:
    time.sleep(60)
    return 0


def _echo_stdin_to_stderr() -> int:
    os.write(2, f"{sys.argv}:{os.read(0, 100).decode()}".encode())
    return 3


def test_fork_server_reports_signals_timeouts_and_the_child_sees_its_input(
    tmp_path: pathlib.Path,
) -> None:
    crashed = mlir_inputs.run_child(_killed, [], b"", tmp_path, timeout=10)
    assert crashed.signal == signal.SIGKILL
    hung = mlir_inputs.run_child(_sleep, [], b"", tmp_path, timeout=0.2)
    assert hung.timed_out
    echoed = mlir_inputs.run_child(
        _echo_stdin_to_stderr, ["tool", "-"], b"module {}", tmp_path, timeout=10
    )
    assert (echoed.code, echoed.stderr) == (3, "['tool', '-']:module {}")
