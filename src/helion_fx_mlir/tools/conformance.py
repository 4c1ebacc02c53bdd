"""Helion's own test suite as our conformance suite (`make conformance`).

Runs the `test/` directory of a Helion source checkout twice on the CPU through pytest and
`conformance_plugin`: once through the `mlir` backend (`HELION_BACKEND=mlir`) and once in
Helion's reference mode (`HELION_INTERPRET=1`), each in pytest-xdist workers so that a test
that kills its process (a signal, or the plugin's time limit) counts as a crash and the run
goes on. It prints, per file, the tests that ran a kernel and how they ended in each mode,
then the goal: of the tests that pass in reference mode having run a kernel, how many pass
through the backend. Tests whose own assertions read the generated code are listed apart.

    python -m helion_fx_mlir.tools.conformance --helion-src DIR [--modes mlir ref] [-n 2] [FILES...]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from helion_fx_mlir.tools.conformance_plugin import RESULTS_ENV

# Kernels of Helion's examples/ directory: held out, we measure ourselves on them.
HELD_OUT = ("test_examples.py", "test_examples_dist.py")
MODES = {"mlir": {"HELION_BACKEND": "mlir"}, "ref": {"HELION_INTERPRET": "1"}}
OUTCOMES = ("passed", "failed", "crashed", "skipped")
MEMORY_SHARE = 0.8  # of physical memory, split between the workers


@dataclass
class TestResult:
    """One test's end in one mode, folded over its setup, call and teardown phases."""

    nodeid: str
    outcome: str = "passed"
    ran_kernel: bool = False
    reads_code: bool = False
    code_failure: bool = False
    message: str = ""

    @property
    def file(self) -> str:
        return self.nodeid.split("::", 1)[0]

    def add(self, phase: dict[str, object]) -> None:
        self.ran_kernel |= bool(phase["ran_kernel"])
        self.reads_code |= bool(phase["reads_code"])
        self.code_failure |= bool(phase.get("code_failure"))
        if phase["crashed"]:
            self.outcome = "crashed"
        elif phase["outcome"] == "failed" and self.outcome != "crashed":
            self.outcome, self.message = "failed", self.message or str(phase["message"])
        elif phase["outcome"] == "skipped" and self.outcome == "passed":
            self.outcome = "skipped"
        if phase["crashed"]:
            self.message = str(phase["message"])


def run_mode(
    mode: str, helion_src: Path, files: list[str], jobs: int, results: Path
) -> dict[str, TestResult]:
    """Run the tests in one mode; the results by test id."""
    results.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("HELION_BACKEND", "HELION_INTERPRET")}
    # Helion's tests patch its internals between compiles: each compiles afresh.
    env.update(MODES[mode], **{RESULTS_ENV: str(results), "HELION_FX_MLIR_DISK_CACHE": "0"})
    targets = files or ["test"]
    ignores = [f"--ignore=test/{name}" for name in HELD_OUT]
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "helion_fx_mlir.tools.conformance_plugin",
        "-p",
        "no:cacheprovider",
        "-q",
        "-n",
        str(jobs),
        "--max-worker-restart=1000",
        f"--rootdir={helion_src}",
        *ignores,
        *targets,
    ]
    print(f"[conformance] {mode}: {' '.join(command[2:])}", file=sys.stderr, flush=True)
    with open(results.with_suffix(".log"), "w") as log:  # pytest's own report, and crash dumps
        subprocess.run(
            command,
            cwd=helion_src,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
            preexec_fn=functools.partial(_limit_memory, jobs),
        )
    return read_results(results)


def _limit_memory(jobs: int) -> None:
    """Each process's address space capped at its share of the machine's memory: a test
    that allocates for a GPU (tensors past 2**31 elements) fails on torch's allocation
    error instead of the kernel's OOM killer ending its worker as a crash."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    share = int(total * MEMORY_SHARE / max(jobs, 1))
    resource.setrlimit(resource.RLIMIT_AS, (share, share))


def read_results(path: Path) -> dict[str, TestResult]:
    tests: dict[str, TestResult] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            phase = json.loads(line)
            tests.setdefault(phase["nodeid"], TestResult(phase["nodeid"])).add(phase)
    return tests


def table(ours: dict[str, TestResult], ref: dict[str, TestResult]) -> str:
    """Per file: tests that ran a kernel in either mode, and their outcomes in each."""
    rows: defaultdict[str, dict[str, Counter[str]]] = defaultdict(
        lambda: {"mlir": Counter(), "ref": Counter()}
    )
    for mode, tests in (("mlir", ours), ("ref", ref)):
        for test in tests.values():
            if _kernel_test(test.nodeid, ours, ref) and not _fails_on_code(test.nodeid, ours):
                rows[test.file][mode][test.outcome] += 1
    head = [
        "file",
        "tests",
        *(f"mlir {o}" for o in OUTCOMES[:3]),
        *(f"ref {o}" for o in OUTCOMES[:3]),
    ]
    lines = [_row(head), _row(["---"] * len(head))]
    total: dict[str, Counter[str]] = {"mlir": Counter(), "ref": Counter()}
    for file in sorted(rows):
        counts = rows[file]
        total["mlir"].update(counts["mlir"])
        total["ref"].update(counts["ref"])
        lines.append(
            _row(
                [
                    file,
                    sum(counts["ref"].values()) or sum(counts["mlir"].values()),
                    *(counts["mlir"][o] for o in OUTCOMES[:3]),
                    *(counts["ref"][o] for o in OUTCOMES[:3]),
                ]
            )
        )
    lines.append(
        _row(
            [
                "total",
                sum(total["ref"].values()),
                *(total["mlir"][o] for o in OUTCOMES[:3]),
                *(total["ref"][o] for o in OUTCOMES[:3]),
            ]
        )
    )
    return "\n".join(lines)


def _row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _kernel_test(nodeid: str, ours: dict[str, TestResult], ref: dict[str, TestResult]) -> bool:
    """Ran a kernel in either mode, or crashed (a dead worker reports nothing more)."""
    return any(
        nodeid in tests and (tests[nodeid].ran_kernel or tests[nodeid].outcome == "crashed")
        for tests in (ours, ref)
    )


def _fails_on_code(nodeid: str, ours: dict[str, TestResult]) -> bool:
    return nodeid in ours and ours[nodeid].code_failure


def goal(
    ours: dict[str, TestResult], ref: dict[str, TestResult]
) -> tuple[list[str], list[TestResult]]:
    """The tests reference mode passes having run a kernel, and those of them we do not pass."""
    wanted = [
        nid
        for nid, t in ref.items()
        if t.outcome == "passed" and t.ran_kernel and not _fails_on_code(nid, ours)
    ]
    missing = [ours.get(nid, TestResult(nid, "not run")) for nid in wanted]
    return wanted, [t for t in missing if t.outcome != "passed"]


def report(ours: dict[str, TestResult], ref: dict[str, TestResult]) -> str:
    wanted, missing = goal(ours, ref)
    code_readers = sorted((t for t in ours.values() if t.reads_code), key=lambda t: t.nodeid)
    not_ours = [t for t in code_readers if t.code_failure]
    lines = [
        table(ours, ref),
        "",
        f"passing in reference mode with a kernel run: {len(wanted)}; "
        f"through the mlir backend: {len(wanted) - len(missing)} passed, "
        f"{sum(t.outcome == 'failed' for t in missing)} failed, "
        f"{sum(t.outcome == 'crashed' for t in missing)} crashed, "
        f"{sum(t.outcome in ('skipped', 'not run') for t in missing)} skipped or not run",
    ]
    lines += [f"  {t.outcome}: {t.nodeid}: {t.message}" for t in missing]
    lines += [
        "",
        f"tests that failed on an assertion about the generated code (not ours): {len(not_ours)}",
    ]
    lines += [f"  {t.nodeid}: {t.message}" for t in not_ours]
    lines += [
        "",
        f"tests that read the generated code (those checks off, their outputs checked): "
        f"{len(code_readers) - len(not_ours)}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--helion-src",
        type=Path,
        default=os.environ.get("HELION_SRC"),
        help="a Helion source checkout with test/ (default: $HELION_SRC)",
    )
    parser.add_argument("--modes", nargs="+", choices=tuple(MODES), default=list(MODES))
    parser.add_argument(
        "-n", "--jobs", type=int, default=int(os.environ.get("CONFORMANCE_JOBS", "2"))
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=Path("conformance-results"),
        help="directory of the per-mode result files (reused by --report-only)",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="print the report of earlier runs"
    )
    parser.add_argument(
        "files", nargs="*", help="test files relative to the checkout (default: test/)"
    )
    args = parser.parse_args(argv)
    if args.helion_src is None or not (Path(args.helion_src) / "test").is_dir():
        parser.error(
            "--helion-src (or HELION_SRC) must name a Helion checkout with a test/ directory"
        )
    args.results = args.results.resolve()
    args.helion_src = Path(args.helion_src).resolve()
    args.results.mkdir(parents=True, exist_ok=True)
    runs = {}
    for mode in MODES:
        path = args.results / f"{mode}.jsonl"
        if mode in args.modes and not args.report_only:
            runs[mode] = run_mode(mode, Path(args.helion_src), args.files, args.jobs, path)
        else:
            runs[mode] = read_results(path)
    print(report(runs["mlir"], runs["ref"]))
    return 1 if goal(runs["mlir"], runs["ref"])[1] else 0


if __name__ == "__main__":
    sys.exit(main())
