"""pytest plugin that runs Helion's own `test/` directory on the CPU, as ours or as Helion's
reference mode (`python -m helion_fx_mlir.tools.conformance` loads it with `-p`).

Helion's tests gate on the backend (`onlyBackends(["triton", ...])`, `skipIfNotTriton`) and
put tensors on `helion._testing.DEVICE` (CUDA unless the backend runs on the CPU). Under
this plugin the gates see "triton", so the tests written for Triton run, and DEVICE is the
CPU (`torch.accelerator.synchronize` returns at once). `skipIfNormalMode` (kernels Helion's
compiler once rejected) does not skip: a skip never counts as a pass, and such a test shows
whether the kernel now runs. What the tests
assert about outputs is untouched; what they assert about Triton's text cannot hold for
MLIR, so only that is turned off:

- `assertExpectedJournal` (golden Triton files) does nothing;
- a unittest assertion given the generated code (`assertIn("tl.load", code)`) does nothing
  and marks the test `reads_code`; the test's other assertions (its outputs) still count;
- a test that fails on an assertion quoting the generated code (a plain `assert ... in
  code`), or whose failing statement reads a variable holding it (`assertEqual(code.count(
  "if True:"), 1)`), is `code_failure`: its outcome says nothing about us, and the report
  lists it apart.

Per test it records, as `user_properties` (which xdist carries to the controller), whether
a kernel ran (ours: a compiled host function was called; reference mode: `run_ref`) and
whether the test read generated code. Each test has a time limit past which its worker
exits (counted as a crash, like a signal).
"""

from __future__ import annotations

import faulthandler
import functools
import json
import os
import re
import unittest
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest

RESULTS_ENV = "CONFORMANCE_RESULTS"  # the JSON-lines file the controller appends to
TEST_TIME_LIMIT_S = int(os.environ.get("CONFORMANCE_TEST_TIMEOUT", "300"))
CODE_MARK = "helion.kernel = "  # in every module generate_mlir emits
CODE_ASSERTIONS = (
    "assertIn",
    "assertNotIn",
    "assertRegex",
    "assertNotRegex",
    "assertEqual",
    "assertNotEqual",
    "assertMultiLineEqual",
    "assertCountEqual",
)


class _TestState:
    """What the running test did; reset before each test."""

    controller = True  # the process that writes results (not an xdist worker)
    ran_kernel = False
    reads_code = False
    # the code texts the test was given (MLIR, or in reference mode the source)
    codes: ClassVar[list[str]] = []

    @classmethod
    def reset(cls) -> None:
        cls.ran_kernel = cls.reads_code = False
        cls.codes = []

    @classmethod
    def is_code(cls, text: object) -> bool:
        return isinstance(text, str) and (CODE_MARK in text or text in cls.codes)

    @classmethod
    def quotes_code(cls, message: str) -> bool:
        return CODE_MARK in message or any(
            code.strip() and code.strip()[:200] in message for code in cls.codes
        )


def pytest_configure(config: pytest.Config) -> None:
    _TestState.controller = not hasattr(config, "workerinput")  # xdist workers have it
    if _TestState.controller and config.getoption("dist", "no") != "no":
        return  # the workers run the tests: only they need Helion, patched
    import helion._testing as testing
    import torch
    from helion.runtime.kernel import BoundKernel

    import helion_fx_mlir  # noqa: F401  (registers the mlir backend when Helion loads)

    testing.DEVICE = torch.device("cpu")
    if not torch.accelerator.is_available():  # tests that wait for their device wait for nothing
        torch.accelerator.synchronize = lambda device=None: None
    testing._get_backend = lambda: "triton"
    testing.skipIfNormalMode = _run_anyway
    testing.TestCase.assertExpectedJournal = lambda self, value: None
    testing.code_and_output = _recording_code(testing.code_and_output)
    for name in CODE_ASSERTIONS:
        setattr(unittest.TestCase, name, _unless_code(getattr(unittest.TestCase, name)))
    BoundKernel.compile_config = _marking_runs(BoundKernel.compile_config)
    BoundKernel.run_ref = _marking_call(BoundKernel.run_ref)


def _run_anyway(reason: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Stands in for `skipIfNormalMode`: the test runs, and its outcome is ours."""
    return lambda test: test


def _recording_code(code_and_output: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(code_and_output)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        code, output = code_and_output(*args, **kwargs)
        _TestState.codes.append(code)
        return code, output

    return recorded


def _unless_code(assertion: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(assertion)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if any(_TestState.is_code(a) for a in args):
            _TestState.reads_code = True
            return None
        return assertion(self, *args, **kwargs)

    return checked


def _marking_call(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        _TestState.ran_kernel = True
        return method(*args, **kwargs)

    return call


def _marking_runs(compile_config: Callable[..., Any]) -> Callable[..., Any]:
    """The compiled function marks the test as having run a kernel when called."""

    @functools.wraps(compile_config)
    def compile_and_mark(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _marking_call(compile_config(self, *args, **kwargs))

    return compile_and_mark


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _TestState.reset()
    faulthandler.dump_traceback_later(TEST_TIME_LIMIT_S, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome: Any = yield
    report = outcome.get_result()
    code_failure = (
        call.excinfo is not None
        and call.excinfo.errisinstance(AssertionError)
        and (_TestState.quotes_code(str(call.excinfo.value)) or _reads_code_in(call.excinfo, item))
    )
    report.user_properties.append(("ran_kernel", _TestState.ran_kernel))
    report.user_properties.append(("reads_code", _TestState.reads_code or code_failure))
    report.user_properties.append(("code_failure", code_failure))


def _reads_code_in(excinfo: pytest.ExceptionInfo[BaseException], item: pytest.Item) -> bool:
    """Whether the test's failing statement reads a variable that holds generated code
    (`self.assertEqual(code.count("if True:"), 1)`: the assertion is given a number)."""
    frames = [entry for entry in excinfo.traceback if str(entry.path) == str(item.path)]
    if not frames:
        return False
    statement, names = str(frames[-1].statement), frames[-1].frame.f_locals
    return any(
        _TestState.is_code(names.get(word)) for word in re.findall(r"[A-Za-z_]\w*", statement)
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """On the controller (or a run without workers): one JSON line per test phase."""
    path = os.environ.get(RESULTS_ENV)
    if not path or not _TestState.controller:
        return
    props = dict(report.user_properties)
    crashed = report.failed and "crashed while running" in str(report.longrepr)
    line = {
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "crashed": crashed,
        "ran_kernel": bool(props.get("ran_kernel")),
        "reads_code": bool(props.get("reads_code")),
        "code_failure": bool(props.get("code_failure")),
        "message": _first_error_line(report) if report.failed else "",
    }
    with open(path, "a") as out:
        out.write(json.dumps(line) + "\n")


def _first_error_line(report: pytest.TestReport) -> str:
    """The exception's own line ('E   ...'), for grouping failures by cause."""
    text = str(report.longrepr)
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return (errors[0] if errors else text.strip().splitlines()[-1] if text.strip() else "")[:300]
