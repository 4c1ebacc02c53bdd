"""Mutational fuzzer for helion-opt and `helion-mlir validate`: malformed MLIR must get
located diagnostics (`file:line:col: error: ...`), never a traceback, a crash or a hang.

The corpus is every `*.mlir` file under lit_tests/ plus the MLIR a few sample kernels
emit. Each case takes one corpus entry, applies 1-3 seeded mutations (byte flips, line
edits, token substitutions with nasty values, bad block sizes and dtype codes, deep
nesting, invalid UTF-8, empty input, binary garbage) and runs one tool on the bytes.

Importing the tools costs seconds, so each worker process (--jobs) imports them once
and forks a child per case; the child runs the tool's `main()` on sys.argv, as its
console script does, with fds 0/1/2 on files, and a child that outlives the timeout is
killed with its process group. The driver emits the kernels' MLIR itself: workers must
not create an MLIR context before forking. Every run is classified (see `classify`):

- ok (exit 0), diagnostic (exit 1/2, every error line located or a tool message);
- crash (a signal, or the tools' `internal error: ... crashed` report), traceback (a
  Python exception reached stderr, or their `internal error:` report of one),
  unlocated (an error line with no place in the input, or none at all), hang
  (timeout), bad-exit (another exit code, or exit 0 with an error).

A run fails (exit code 1) on any of the last five. Each failing input is saved under
--keep with the shell command that reproduces it.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import functools
import json
import os
import pathlib
import random
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from helion_fx_mlir import processes
from helion_fx_mlir.processes import signal_name
from helion_fx_mlir.tools.fuzz.pool import Progress, run_striped, stderr_tail

CLASSES = ("ok", "diagnostic", "crash", "traceback", "unlocated", "hang", "bad-exit")
FAILING = ("crash", "traceback", "unlocated", "hang", "bad-exit")
LIT_TESTS = pathlib.Path(__file__).resolve().parents[4] / "lit_tests"
KERNEL_SAMPLES = (
    "add",
    "matmul",
    "softmax",
    "sum_rows",
    "layer_norm",
    "jagged_softmax",
    "softmax_temperature_mod",
)

BAD_BLOCK_SIZES = ("0 : index", '"x"', "-4 : index", "4.0 : f32")
NASTY_TOKENS = (
    "0",
    "-1",
    "99",
    "9223372036854775808",
    "99999999999999999999999",
    "1e309",
    "nan",
    '"x"',
    "tensor<?x?xf32>",
    "i0",
    "index",
    "f8E4M3FN",
    "!torch.vtensor<[4],f32>",
    *(f"loom.block_size_0 = {value}" for value in BAD_BLOCK_SIZES),
)
BAD_DTYPE_CODES = ("99", "-1", "1000000")
NEST_DEPTH = 10_000
NEST_OPENERS = ("[", "{", "(", "scf.execute_region {", "tensor<")
INVALID_UTF8 = (
    b"\xff\xfe",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
)  # the last two: UTF-8 surrogates
TOKEN = re.compile(rb"[%@^#!]?[A-Za-z_][\w.$-]*|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
BLOCK_SIZE_ENTRY = re.compile(rb"(loom\.block_size_\d+ = )[^,}]*")
DTYPE_CONSTANT = re.compile(rb"(torch\.constant\.int )-?\d+")

INPUT = "FILE"  # stands for the input in a tool's argv
WORKER_COMMAND = [sys.executable, "-m", "helion_fx_mlir.tools.fuzz.mlir_inputs", "--worker"]
STDERR_LIMIT = 1 << 20  # bytes of a run's stderr kept for classification


# ---------------------------------------------------------------- tools and cases


@dataclass(frozen=True)
class Tool:
    """One command line of the tools under test, INPUT marking where the file goes."""

    prog: str
    argv: tuple[str, ...]

    @property
    def label(self) -> str:
        return " ".join((self.prog, *self.argv))


TOOLS = (
    Tool("helion-opt", (INPUT,)),
    Tool("helion-opt", (INPUT, "--canonicalize")),
    Tool("helion-opt", (INPUT, "--helion-resolve-symbols")),
    Tool("helion-opt", (INPUT, "--helion-lower-to-linalg")),
    Tool("helion-opt", (INPUT, "--helion-lower-to-llvm")),
    Tool("helion-mlir", ("validate", INPUT)),
)


@dataclass(frozen=True)
class FuzzCase:
    """One run: the mutated bytes, where they came from, and the command line."""

    index: int
    source: str  # the corpus entry mutated
    mutations: tuple[str, ...]
    tool: Tool
    stdin: bool  # the input is piped in ('-') instead of named
    split: bool  # with --split-input-file
    data: bytes

    def argv(self) -> list[str]:
        """The tool's arguments, INPUT still a placeholder unless read from stdin."""
        argv = ["-" if self.stdin and arg == INPUT else arg for arg in self.tool.argv]
        return [*argv, "--split-input-file"] if self.split else argv

    def command(self, path: pathlib.Path) -> str:
        """The shell command that reruns the case on the input saved at `path`."""
        file = shlex.quote(str(path))
        words = [
            self.tool.prog,
            *(file if arg == INPUT else shlex.quote(arg) for arg in self.argv()),
        ]
        return " ".join(words) + (f" < {file}" if self.stdin else "")

    def describe(self) -> str:
        command = " ".join([self.tool.prog, *self.argv()])
        return f"{command} ({self.source}: {', '.join(self.mutations)})"


@dataclass(frozen=True)
class Exit:
    """How a child ended, as the worker saw it."""

    code: int | None  # None when a signal or the timeout ended it
    signal: int | None
    timed_out: bool
    stderr: str


@dataclass(frozen=True)
class RunResult:
    """A case, its class, and the stderr line (or signal) that decided it."""

    case: FuzzCase
    kind: str
    detail: str
    saved: pathlib.Path | None = None  # the input, for failing runs

    def line(self) -> str:
        repro = self.case.command(self.saved) if self.saved else "?"
        return f"{self.kind.upper()} {self.case.describe()} :: {self.detail} :: {repro}"


# ---------------------------------------------------------------- corpus


def lit_corpus() -> dict[str, bytes]:
    """The lit tests' MLIR files, verbatim (their expected-* comments are input too)."""
    files = sorted(
        p for p in LIT_TESTS.rglob("*.mlir") if "Output" not in p.relative_to(LIT_TESTS).parts
    )
    return {str(p.relative_to(LIT_TESTS)): p.read_bytes() for p in files}


@functools.cache
def kernel_corpus() -> dict[str, bytes]:
    """The sample kernels' MLIR: once per process, as emitting imports torch and Helion."""
    from helion_fx_mlir.examples import EXAMPLES
    from helion_fx_mlir.frontend.lower import generate_mlir

    return {
        f"{name}.kernel": generate_mlir(
            EXAMPLES[name].kernel.bind(EXAMPLES[name].args(seed=0))
        ).encode()
        for name in KERNEL_SAMPLES
    }


def corpus() -> dict[str, bytes]:
    return {**lit_corpus(), **kernel_corpus()}


# ---------------------------------------------------------------- mutations


Mutation = Callable[[random.Random, bytes], bytes]


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    """Flip one of the low 7 bits of a few bytes: ASCII stays ASCII (control characters
    included), so the flips are not all masked by the UTF-8 check `invalid_utf8` covers."""
    if not data:
        return bytes([rng.randrange(128)])
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(7)
    return bytes(out)


def _edit_lines(
    rng: random.Random, data: bytes, edit: Callable[[list[bytes], int, int], object]
) -> bytes:
    """Apply `edit(lines, i, j)` at two random line numbers."""
    lines = data.split(b"\n")
    edit(lines, rng.randrange(len(lines)), rng.randrange(len(lines)))
    return b"\n".join(lines)


def delete_line(rng: random.Random, data: bytes) -> bytes:
    return _edit_lines(rng, data, lambda lines, i, _: lines.pop(i))


def swap_lines(rng: random.Random, data: bytes) -> bytes:
    def swap(lines: list[bytes], i: int, j: int) -> None:
        lines[i], lines[j] = lines[j], lines[i]

    return _edit_lines(rng, data, swap)


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    return _edit_lines(rng, data, lambda lines, i, j: lines.insert(j, lines[i]))


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def substitute_token(rng: random.Random, data: bytes) -> bytes:
    """A token (identifier, number, type) replaced by another of the file's or a nasty one."""
    tokens = list(TOKEN.finditer(data))
    if not tokens:
        return data
    target = rng.choice(tokens)
    use_own = rng.random() < 0.5
    replacement = rng.choice(tokens).group() if use_own else rng.choice(NASTY_TOKENS).encode()
    return data[: target.start()] + replacement + data[target.end() :]


def _replace_match(
    rng: random.Random, data: bytes, pattern: re.Pattern[bytes], values: Sequence[str]
) -> bytes:
    """One match of `pattern` with its text after group 1 replaced by one of `values`."""
    matches = list(pattern.finditer(data))
    if not matches:
        return data
    match = rng.choice(matches)
    return data[: match.end(1)] + rng.choice(values).encode() + data[match.end() :]


def bad_block_size(rng: random.Random, data: bytes) -> bytes:
    """A module's loom.block_size_N given a non-positive, non-index or non-integer value."""
    return _replace_match(rng, data, BLOCK_SIZE_ENTRY, BAD_BLOCK_SIZES)


def bad_dtype_code(rng: random.Random, data: bytes) -> bytes:
    """A torch.constant.int (dtype codes among them) set to no valid dtype."""
    return _replace_match(rng, data, DTYPE_CONSTANT, BAD_DTYPE_CODES)


def _insert_at(rng: random.Random, data: bytes, text: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + text + data[at:]


def unclosed_nest(rng: random.Random, data: bytes) -> bytes:
    """NEST_DEPTH openers at a random byte: the parser's recursion must not blow the stack."""
    return _insert_at(rng, data, rng.choice(NEST_OPENERS).encode() * NEST_DEPTH)


def well_formed_nest(rng: random.Random, data: bytes) -> bytes:
    """A NEST_DEPTH-deep nest of regions, arrays or dicts that parses, before a return."""
    lines = data.split(b"\n")
    returns = [
        i for i, line in enumerate(lines) if line.lstrip().startswith((b"return", b"func.return"))
    ]
    at = rng.choice(returns) if returns else rng.randrange(len(lines))
    lines.insert(at, rng.choice((_region_nest, _array_nest, _dict_nest))())
    return b"\n".join(lines)


def _region_nest() -> bytes:
    opened = b"scf.execute_region {\n" * NEST_DEPTH
    return opened + b"scf.yield\n" + b"}\nscf.yield\n" * (NEST_DEPTH - 1) + b"}"


def _array_nest() -> bytes:
    return _nested_attribute(b"[", b"]")


def _dict_nest() -> bytes:
    return _nested_attribute(b"{a = ", b"}")


def _nested_attribute(opener: bytes, closer: bytes) -> bytes:
    """An op whose discardable attribute nests NEST_DEPTH levels deep."""
    deep = opener * NEST_DEPTH + b"0" + closer * NEST_DEPTH
    return b"%fuzz_nest = arith.constant {fuzz.deep = " + deep + b"} 0 : index"


def invalid_utf8(rng: random.Random, data: bytes) -> bytes:
    return _insert_at(rng, data, rng.choice(INVALID_UTF8))


def empty(rng: random.Random, data: bytes) -> bytes:
    return b""


def garbage(rng: random.Random, data: bytes) -> bytes:
    return rng.randbytes(rng.randint(1, 4096))


# Name -> (mutation, weight): whole-input replacements are rare, or they would mask the rest.
MUTATIONS: dict[str, tuple[Mutation, int]] = {
    "flip-bytes": (flip_bytes, 4),
    "delete-line": (delete_line, 4),
    "swap-lines": (swap_lines, 4),
    "duplicate-line": (duplicate_line, 4),
    "truncate": (truncate, 3),
    "substitute-token": (substitute_token, 8),
    "bad-block-size": (bad_block_size, 3),
    "bad-dtype-code": (bad_dtype_code, 3),
    "unclosed-nest": (unclosed_nest, 2),
    "well-formed-nest": (well_formed_nest, 2),
    "invalid-utf8": (invalid_utf8, 3),
    "empty": (empty, 1),
    "garbage": (garbage, 1),
}


# ---------------------------------------------------------------- planning (deterministic)


def plan_case(index: int, seed: int, sources: dict[str, bytes]) -> FuzzCase:
    """Case `index` of a run: the same for the same seed and corpus. Tools take turns;
    about one case in ten reads stdin, one in ten of helion-opt's splits its input."""
    rng = random.Random(f"{seed}:{index}")
    tool = TOOLS[index % len(TOOLS)]
    source = rng.choice(sorted(sources))
    names = rng.choices(
        list(MUTATIONS), [weight for _, weight in MUTATIONS.values()], k=rng.randint(1, 3)
    )
    data = sources[source]
    for name in names:
        data = MUTATIONS[name][0](rng, data)
    stdin = rng.random() < 0.1
    split = tool.prog == "helion-opt" and rng.random() < 0.1
    return FuzzCase(index, source, tuple(names), tool, stdin, split, data)


# ---------------------------------------------------------------- classification


LOCATED = re.compile(r"^\S.*:\d+:\d+: error: ")
TOOL_MESSAGE = re.compile(r"^(helion-opt|helion-mlir): error: ")
# A Python exception on stderr: a traceback, its type as the message, or the tools' own
# report of one (`internal error:` without `crashed`; a crash is classified before this).
EXCEPTION_LEAK = re.compile(
    r"Traceback \(most recent call last\)|error: (?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b"
    r"|nanobind|internal error: "
)


def legitimate_error_line(line: str) -> bool:
    """Whether an error line is acceptable output for malformed input: located, or a
    tool-level message. A file that cannot be read is our own fuzz file, so `cannot read`
    means it is not valid UTF-8, which must be reported at its place like any bad byte."""
    if LOCATED.match(line):
        return True
    return bool(TOOL_MESSAGE.match(line)) and "cannot read " not in line


def classify(ended: Exit) -> tuple[str, str]:
    """(class, the line or signal that decided it)."""
    lines = ended.stderr.splitlines()
    errors = [line for line in lines if "error:" in line]
    if ended.timed_out:
        return "hang", "timeout"
    if ended.signal is not None:
        return (
            "crash",
            f"{signal_name(ended.signal)}: {_first(lines)}",
        )
    if "internal error:" in ended.stderr and "crashed" in ended.stderr:
        return "crash", _first(line for line in lines if "internal error:" in line)
    leaks = [line for line in lines if EXCEPTION_LEAK.search(line)]
    if leaks:
        return "traceback", _exception_line(lines, leaks)
    if ended.code == 0:
        return ("bad-exit", f"exit 0: {errors[0]}") if errors else ("ok", "")
    if ended.code not in (1, 2):
        return "bad-exit", f"exit {ended.code}: {_first(lines)}"
    unlocated = [line for line in errors if not legitimate_error_line(line)]
    if unlocated or not errors:
        return "unlocated", _first(
            unlocated
        ) if errors else f"exit {ended.code} without an error line"
    return "diagnostic", errors[0]


def _exception_line(lines: list[str], leaks: list[str]) -> str:
    """A traceback's last line names the exception; a leaked message names it itself."""
    if leaks[0].startswith("Traceback"):
        return _first(reversed(lines))
    return leaks[0]


def _first(lines: Iterable[str]) -> str:
    """The first non-blank line, at most 300 characters."""
    return next((line.strip()[:300] for line in lines if line.strip()), "(no stderr)")


# ---------------------------------------------------------------- the worker (fork server)


def worker_main() -> NoReturn:
    """Serve requests (JSON lines on stdin: prog, argv, base64 data) with one forked child
    each, one JSON line back per child on the original stdout. The tools and what they
    import lazily (Helion and torch, validate's helion_mlir) are imported here once; the
    MLIR context is not created, so each child makes its own."""
    import helion  # noqa: F401

    from helion_fx_mlir.frontend import lower  # noqa: F401
    from helion_fx_mlir.tools import cli, opt

    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    tools = {"helion-opt": opt.main, "helion-mlir": cli.main}
    with tempfile.TemporaryDirectory(prefix="fuzz-mlir-worker-") as scratch:
        for request in sys.stdin:
            req = json.loads(request)
            ended = run_child(
                tools[req["prog"]],
                [req["prog"], *req["argv"]],
                base64.b64decode(req["data"]),
                pathlib.Path(scratch),
                req["timeout"],
            )
            protocol.write(json.dumps(dataclasses.asdict(ended)) + "\n")
    os._exit(0)


def run_child(
    main: Callable[[], int], argv: list[str], data: bytes, scratch: pathlib.Path, timeout: float
) -> Exit:
    """Fork a child that runs `main` with sys.argv `argv` (INPUT: a file holding `data`,
    which is also its stdin); how it ended, its stderr included. The child has its own
    process group: past the timeout, the tools' crash-guard grandchild dies with it."""
    streams = [scratch / "stdout", scratch / "stderr"]
    fds = [os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) for path in streams]
    pid = processes.fork(lambda: _child(main, argv, data, scratch / "input.mlir", fds), True)
    for fd in fds:
        os.close(fd)
    ended = processes.wait(pid, timeout)
    with open(streams[1], "rb") as stderr:
        text = stderr.read(STDERR_LIMIT).decode(errors="replace")
    if ended.timed_out:
        return Exit(None, None, True, text)
    return Exit(ended.code, ended.signal, False, text)


def _child(
    main: Callable[[], int], argv: list[str], data: bytes, path: pathlib.Path, fds: list[int]
) -> int:
    """Run the tool as its console script does (`main()` reads sys.argv, and only then
    runs under the tools' crash guard)."""
    path.write_bytes(data)
    os.dup2(os.open(path, os.O_RDONLY), 0)
    os.dup2(fds[0], 1)
    os.dup2(fds[1], 2)
    # A fresh reader: the worker's may hold read-ahead protocol lines.
    sys.stdin = open(0, encoding=sys.stdin.encoding, errors=sys.stdin.errors, closefd=False)
    sys.argv = [str(path) if arg == INPUT else arg for arg in argv]
    return main()


# ---------------------------------------------------------------- the driver


class Worker:
    """A fork-server process and the requests it answers, one at a time."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            WORKER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )

    def run(self, case: FuzzCase) -> Exit:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {
            "prog": case.tool.prog,
            "argv": case.argv(),
            "timeout": self.timeout,
            "data": base64.b64encode(case.data).decode(),
        }
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"fuzz-mlir worker died: {stderr_tail(self.stderr)}")
        return Exit(**json.loads(reply))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()
        self.stderr.close()


@dataclass
class Summary:
    """Counts per class, overall and per tool, and the failing runs."""

    runs: int
    keep: pathlib.Path
    counts: Counter[str]
    by_tool: dict[str, Counter[str]]  # tool label -> its counts
    failures: list[RunResult]

    @classmethod
    def of(cls, results: Sequence[RunResult], keep: pathlib.Path) -> Summary:
        by_tool = {
            tool.label: Counter(r.kind for r in results if r.case.tool == tool) for tool in TOOLS
        }
        failures = [r for r in results if r.kind in FAILING]
        return cls(len(results), keep, Counter(r.kind for r in results), by_tool, failures)

    def line(self) -> str:
        return f"fuzz-mlir: {self.runs} runs: " + ", ".join(
            f"{kind} {self.counts[kind]}" for kind in CLASSES
        )

    def table(self) -> str:
        width = max(len(label) for label in self.by_tool)
        rows = [f"{'tool':<{width}}  {'runs':>5}" + "".join(f"  {kind:>10}" for kind in CLASSES)]
        for label, counts in self.by_tool.items():
            rows.append(
                f"{label:<{width}}  {sum(counts.values()):>5}"
                + "".join(f"  {counts[k]:>10}" for k in CLASSES)
            )
        return "\n".join(rows)

    def report(self) -> str:
        """The failing runs, one line each, then the per-tool table and the summary line."""
        saved = [f"failing inputs saved under {self.keep}"] if self.failures else []
        return "\n".join([*(r.line() for r in self.failures), *saved, self.table(), self.line()])


def run_fuzz(runs: int, seed: int, jobs: int, timeout: float, keep: pathlib.Path) -> Summary:
    """Run cases 0..runs-1 on `jobs` workers; failing inputs are saved under `keep`."""
    sources = corpus()
    progress = Progress("fuzz-mlir", runs, "runs", FAILING)
    done = run_striped(
        runs, jobs, lambda stripe: _run_stripe(stripe, seed, sources, timeout, keep, progress)
    )
    return Summary.of(sorted(done, key=lambda r: r.case.index), keep)


def _run_stripe(
    stripe: range,
    seed: int,
    sources: dict[str, bytes],
    timeout: float,
    keep: pathlib.Path,
    progress: Progress,
) -> list[RunResult]:
    worker = Worker(timeout)
    try:
        results = []
        for index in stripe:
            results.append(_result(plan_case(index, seed, sources), worker.run, keep))
            progress.add(results[-1].kind)
        return results
    finally:
        worker.close()


def _result(case: FuzzCase, run: Callable[[FuzzCase], Exit], keep: pathlib.Path) -> RunResult:
    """Run and classify a case; a failing one's input is saved with its exact bytes."""
    kind, detail = classify(run(case))
    if kind not in FAILING:
        return RunResult(case, kind, detail)
    keep.mkdir(parents=True, exist_ok=True)
    saved = keep / f"{kind}-{case.index}.mlir"
    saved.write_bytes(case.data)
    return RunResult(case, kind, detail, saved)


# ---------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="python -m helion_fx_mlir.tools.fuzz.mlir_inputs",
        description=__doc__.split("\n\n")[0].replace("\n", " "),
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=int(env("FUZZ_MLIR_RUNS", "5000")),
        help="default: $FUZZ_MLIR_RUNS or 5000",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=int(env("FUZZ_MLIR_SEED", "0")),
        help="default: $FUZZ_MLIR_SEED or 0",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=int(env("FUZZ_MLIR_JOBS", "1")),
        help="worker processes (default: $FUZZ_MLIR_JOBS or 1)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    parser.add_argument(
        "--keep",
        type=pathlib.Path,
        help="where failing inputs are saved (default: fuzz-mlir-failures/ in a new temp dir)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    if ns.worker:
        worker_main()
    keep = ns.keep or pathlib.Path(tempfile.mkdtemp(prefix="fuzz-mlir-")) / "fuzz-mlir-failures"
    summary = run_fuzz(ns.runs, ns.seed, max(1, ns.jobs), ns.timeout, keep)
    print(summary.report())
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
