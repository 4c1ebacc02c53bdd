"""Differential fuzzer: sample kernels through `compile_kernel` against Helion's reference mode.

Helion's eager reference mode (`RefMode.EAGER`, what `HELION_INTERPRET=1` selects) runs the
kernel body as PyTorch, so it is an oracle no kernel needs to hand-write. Each case is one
sample kernel with random shapes (each distinct dim size of the example's inputs mapped to
1, a prime, a size just past a block multiple, or one large size), a random valid config
(block sizes, reduction loops) drawn from the bound kernel's `config_spec` with one of our
vector widths, and one of the example's dtypes.

Cases run in child processes, a batch per child (importing torch and Helion costs seconds),
on `--threads` torch threads (1 by default; the thread count decides how a grid's edges split
and its programs group, so a run on 2, 3 or 8 covers what those CPUs compile);
a crash (a signal, e.g. a `bounds_checks` abort) or a timeout ends only that child, and a
fresh one continues with the next case. Outcomes:

- ok, mismatch (outputs differ beyond the dtype's tolerance), crash, timeout;
- error: our code raised; unsupported: a `HelionMLIRError` naming a construct as not
  supported (a documented limit, not a failure);
- skipped: Helion cannot bind the kernel for those shapes, or its reference mode raises
  (a shape the kernel does not allow), or permutation rows cannot stay distinct.

With `--dynamic`, each sample kernel of static shapes runs as its twin declared
`static_shapes=False` (`dynamic:<name>`): bound and compiled at the example's own inputs,
then run at the case's shapes by the one bound kernel Helion serves both with, as a user's
dynamic-shape kernel is.

A run fails (exit code 1) on any mismatch, crash or error. Every reported case prints one
line ending in a command that reruns it alone, in-process.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import helion
import torch
from helion.exc import InvalidConfig

from helion_fx_mlir.errors import HelionMLIRError
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.examples.registry import Example
from helion_fx_mlir.frontend.lower import lower_kernel
from helion_fx_mlir.frontend.lowering_context import KNOBS
from helion_fx_mlir.mlir.attributes import VECTOR_WIDTH_KEY, VECTOR_WIDTHS
from helion_fx_mlir.processes import signal_name
from helion_fx_mlir.runtime.jit import compile_kernel
from helion_fx_mlir.tools.eager_reference import with_out_dtype_matmuls
from helion_fx_mlir.tools.fuzz import programs
from helion_fx_mlir.tools.fuzz.pool import Progress, run_striped, stderr_tail
from helion_fx_mlir.tools.specs import DTYPES

DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
STATUSES = ("ok", "mismatch", "crash", "error", "unsupported", "timeout", "skipped")
FAILING = ("mismatch", "crash", "error")
# HelionMLIRError messages that name a documented limit rather than a bug.
UNSUPPORTED_MARKERS = ("not supported", "no lowering rule", "no CPU code generation")

PRIMES = (
    3,
    5,
    7,
    11,
    13,
    17,
    19,
    23,
    29,
    31,
    37,
    41,
    43,
    47,
    53,
    59,
    61,
    67,
    71,
    73,
    79,
    83,
    89,
    97,
    101,
    127,
)
LARGE_SIZES = (1000, 1021, 1025, 2049, 4099)
MAX_NUMEL = 1 << 20  # per input tensor, so a large dim times the others stays quick
MAX_BLOCK = 256
# rtol, and atol relative to the output's magnitude (max(1, max |want|)); integers exact.
TOLERANCES = {
    torch.float64: 1e-6,
    torch.float32: 1e-4,
    torch.float16: 2e-2,
    torch.bfloat16: 2e-2,
    torch.float8_e4m3fn: 0.125,
}

# A sample kernel's twin of dynamic shapes is named by this prefix and its name.
DYNAMIC_PREFIX = "dynamic:"

# The command that runs a batch of cases; tests swap it for a child that crashes.
WORKER_COMMAND = [sys.executable, "-m", "helion_fx_mlir.tools.fuzz.differential", "--worker"]
REDUCED_PER_RUN = 5  # failing programs reduced at the end of a run (each takes minutes)


@dataclass(frozen=True)
class FuzzCase:
    """One kernel run: which example, dtype, shapes, config and input seed.

    `config` is None until the worker has bound the kernel and drawn it from the
    bound kernel's config spec; a repro carries it, so it reruns without drawing."""

    index: int
    example: str
    dtype: str  # a specs.DTYPES name: f32, bf16, ...
    shape_map: dict[int, int]  # a default input dim size -> its size in this case
    seed: int
    config: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def helion_config(self) -> helion.Config:
        """The drawn config (a case gets one before it runs)."""
        assert self.config is not None, self
        return helion.Config(**self.config)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FuzzCase:
        shape_map = {int(k): v for k, v in data["shape_map"].items()}
        return cls(
            data.get("index", 0),
            data["example"],
            data["dtype"],
            shape_map,
            data["seed"],
            data["config"],
        )

    def repro(self, bounds_checks: bool, threads: int = 1) -> str:
        """A shell command that reruns this case alone (JSON holds no single quotes)."""
        fields = {k: v for k, v in self.to_dict().items() if k != "index"}
        flag = (" --bounds-checks" if bounds_checks else "") + (
            f" --threads {threads}" if threads != 1 else ""
        )
        fields_json = json.dumps(fields, separators=(",", ":"))
        return f"python -m helion_fx_mlir.tools.fuzz.differential{flag} --repro '{fields_json}'"

    def describe(self) -> str:
        shapes = ",".join(f"{k}:{v}" for k, v in sorted(self.shape_map.items()))
        return (
            f"{self.example} dtype={self.dtype} shape-map={{{shapes}}} config={self._config_text()}"
        )

    def _config_text(self) -> str:
        if self.config is None:
            return "?"  # the worker ended before drawing it
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self.config.items()) + ")"


@dataclass(frozen=True)
class Outcome:
    """What one case gave; `trace` (errors only, in-process runs) is for --repro."""

    case: FuzzCase
    status: str
    detail: str = ""
    trace: str = ""

    def line(self, bounds_checks: bool, threads: int = 1) -> str:
        repro = self.case.repro(bounds_checks, threads)
        return f"{self.status.upper()} {self.case.describe()} :: {repro}"


class SkipCase(Exception):
    """The case cannot run as planned (Helion rejects the shapes); not a finding."""


@dataclass(frozen=True)
class Options:
    """What a run varies and how it runs; workers get all but `jobs`, `timeout` and `batch`
    on their command line."""

    seed: int = 0
    only: tuple[str, ...] = ()
    bounds_checks: bool = False
    jobs: int = 1
    timeout: float = 120.0
    batch: int = 100  # cases per child: bounds the JIT engines one process accumulates
    programs: bool = False  # generated programs (each on both pipelines) instead of sample kernels
    dynamic: bool = False  # the sample kernels' twins of dynamic shapes
    threads: int = 1  # torch's (and so our kernels') threads in the workers


# ---------------------------------------------------------------- planning (deterministic)


def plan_case(index: int, seed: int, names: Sequence[str]) -> FuzzCase:
    """Case `index` of a run (the same for the same seed and examples): each round of
    len(names) cases visits every example once, in a seeded order, with the next of its
    dtypes from a seeded start; shapes and the input seed are random."""
    round_, slot = divmod(index, len(names))
    order = list(names)
    random.Random(f"{seed}:order:{round_}").shuffle(order)
    example = example_named(order[slot])
    first_dtype = random.Random(f"{seed}:dtype:{example.name}").randrange(len(example.dtypes))
    dtype = example.dtypes[(first_dtype + round_) % len(example.dtypes)]
    rng = random.Random(f"{seed}:case:{index}")
    args = example.args(dtype)
    varies = shapes_can_vary(args) and not example.fixed_shapes
    shape_map = plan_shape_map(rng, args) if varies else {}
    return FuzzCase(index, example.name, DTYPE_NAMES[dtype], shape_map, rng.randrange(1 << 31))


def sample_kernels() -> tuple[str, ...]:
    """The sample kernels reference mode can judge."""
    return tuple(name for name, example in EXAMPLES.items() if example.reference_mode)


def dynamic_twins() -> tuple[str, ...]:
    """The twins of the sample kernels of static shapes whose shapes the fuzzer varies."""
    return tuple(
        DYNAMIC_PREFIX + name
        for name in sample_kernels()
        if EXAMPLES[name].kernel.settings.static_shapes
        and not EXAMPLES[name].fixed_shapes
        and shapes_can_vary(EXAMPLES[name].args())
    )


@functools.cache
def dynamic_twin(name: str) -> Example:
    """Sample kernel `name` (and its oracle) declared `static_shapes=False`; one per
    process, so that its cases share Helion's bound kernels as a user's calls do."""
    example = EXAMPLES[name]
    return dataclasses.replace(
        example,
        name=DYNAMIC_PREFIX + name,
        kernel=_of_dynamic_shapes(example.kernel),
        oracle=example.oracle and _of_dynamic_shapes(example.oracle),
    )


def _of_dynamic_shapes(kernel: Any) -> Any:
    settings = dataclasses.replace(kernel.settings, static_shapes=False)
    return helion.Kernel(kernel.fn, configs=kernel.configs, settings=settings)


def plan_program(index: int, seed: int) -> FuzzCase:
    """Case `index` of a program run: generated program `index` of `seed`, its own inputs."""
    example = example_named(f"{programs.PREFIX}{seed}:{index}")
    return FuzzCase(
        index, f"{programs.PREFIX}{seed}:{index}", DTYPE_NAMES[example.dtypes[0]], {}, seed
    )


def example_named(name: str) -> Any:
    """A sample kernel, its twin of dynamic shapes (`dynamic:NAME`), or a generated
    program (`program:SEED:INDEX`)."""
    if name.startswith(programs.PREFIX):
        return programs.example_for(name)
    if name.startswith(DYNAMIC_PREFIX):
        return dynamic_twin(name.removeprefix(DYNAMIC_PREFIX))
    return EXAMPLES[name]


def shapes_can_vary(args: Sequence[Any]) -> bool:
    """Only all-floating-point inputs with no integer or callable arguments get new shapes:
    integer tensors and ints are often indices, offsets, counts or flags, and closures
    capture tensors, whose values must fit the other shapes (an index past a tensor is the
    user's bug, not a case)."""
    tensors = _tensors(args)
    fixed = [a for a in args if callable(a) or (isinstance(a, int) and not isinstance(a, bool))]
    return bool(tensors) and not fixed and all(t.is_floating_point() for t in tensors)


def plan_shape_map(rng: random.Random, args: Sequence[Any]) -> dict[int, int]:
    """A new size for each distinct dim size > 2 (sizes <= 2 are structure, e.g. the
    pair of split/join); related dims stay equal because equal sizes map alike."""
    shapes = [tuple(a.shape) for a in args if isinstance(a, torch.Tensor)]
    sizes = sorted({s for shape in shapes for s in shape if s > 2})
    for _ in range(20):
        shape_map = _draw_sizes(rng, sizes)
        if all(math.prod(shape_map.get(s, s) for s in shape) <= MAX_NUMEL for shape in shapes):
            return {old: new for old, new in shape_map.items() if new != old}
    return {}


def _draw_sizes(rng: random.Random, sizes: Sequence[int]) -> dict[int, int]:
    shape_map, large_left = {}, True
    for size in sizes:
        kind = rng.choices(
            ("keep", "one", "prime", "past_block", "large"), (1, 2, 4, 4, int(large_left))
        )[0]
        large_left = large_left and kind != "large"
        shape_map[size] = _new_size(rng, kind, size)
    return shape_map


def _new_size(rng: random.Random, kind: str, size: int) -> int:
    if kind == "keep":
        return size
    if kind == "one":
        return 1
    if kind == "prime":
        return rng.choice(PRIMES)
    if kind == "large":
        return rng.choice(LARGE_SIZES)
    return rng.choice((16, 32, 64, 128)) * rng.randint(1, 4) + rng.randint(
        1, 3
    )  # just past a block multiple


# ---------------------------------------------------------------- inputs, config, oracle


def make_inputs(case: FuzzCase) -> tuple[Any, ...]:
    """The example's inputs for the case's dtype and seed, resized by its shape map."""
    example = example_named(case.example)
    default = example.args(DTYPES[case.dtype], case.seed)
    if not case.shape_map:
        return default
    generator = torch.Generator().manual_seed(case.seed)
    return tuple(
        _resized(a, case.shape_map, generator) if isinstance(a, torch.Tensor) else a
        for a in default
    )


def _resized(
    tensor: torch.Tensor, shape_map: dict[int, int], generator: torch.Generator
) -> torch.Tensor:
    """Values drawn from the default tensor's own (so its scale, signs and special values
    stay); rows that are permutations of one set stay permutations (argmax/topk need no ties)."""
    shape = tuple(shape_map.get(s, s) for s in tensor.shape)
    if _permutation_rows(tensor):
        return _new_permutation_rows(tensor, shape, generator)
    flat = tensor.flatten()
    return flat[torch.randint(flat.numel(), shape, generator=generator)]


def _permutation_rows(tensor: torch.Tensor) -> bool:
    if tensor.dim() < 2 or tensor.shape[-1] < 3:
        return False
    rows = tensor.reshape(-1, tensor.shape[-1]).double().sort(-1).values
    return bool((rows[:, 1:] > rows[:, :-1]).all() and (rows == rows[0]).all())


def _new_permutation_rows(
    tensor: torch.Tensor, shape: tuple[int, ...], generator: torch.Generator
) -> torch.Tensor:
    """Rows permuting the default's arithmetic progression, extended to the new length."""
    base = tensor.reshape(-1, tensor.shape[-1])[0].double().sort().values
    count, n = math.prod(shape[:-1]), shape[-1]
    ranks = torch.rand(count, n, generator=generator).argsort(-1).double()
    rows = (base[0] + (base[1] - base[0]) * ranks).to(tensor.dtype)
    if n > 1 and not (rows.double().sort(-1).values.diff(dim=-1) > 0).all():
        raise SkipCase(f"{n} distinct values per row do not fit {tensor.dtype}")
    return rows.reshape(shape)


def draw_config(spec: Any, rng: random.Random) -> dict[str, Any]:
    """Random block sizes and reduction loops, and any of our vector widths."""
    return _draw_loops(spec, rng) | {VECTOR_WIDTH_KEY: rng.choice(VECTOR_WIDTHS)}


def _draw_loops(spec: Any, rng: random.Random) -> dict[str, list[Any]]:
    """Random block sizes (powers of two within the spec, at most MAX_BLOCK) and reduction
    loops (persistent or a power-of-two chunk), as normalized; the default if none is valid."""
    for _ in range(20):
        values: dict[str, list[Any]] = {
            "block_sizes": [_power_of_two(rng, b.min_size, b.max_size) for b in spec.block_sizes]
        }
        if spec.reduction_loops:
            values["reduction_loops"] = [
                rng.choice((None, _power_of_two(rng, 2, max(2, r.size_hint))))
                for r in spec.reduction_loops
            ]
        try:
            normalized = spec.normalized_config(helion.Config(**values))
        except InvalidConfig:
            continue
        return {key: list(normalized.config[key]) for key in values}
    default = spec.default_config().config
    return {
        key: list(default[key]) for key in ("block_sizes", "reduction_loops") if default.get(key)
    }


def _power_of_two(rng: random.Random, low: int, high: int) -> int:
    """A power of two in [low, min(high, MAX_BLOCK)] (the low one if that range is empty)."""
    lo = max(low - 1, 0).bit_length()
    hi = max(lo, min(high, MAX_BLOCK).bit_length() - 1)
    return 1 << rng.randint(lo, hi)


def reference_kernel(kernel: Any, config: helion.Config) -> Callable[..., Any]:
    """The kernel with Helion's eager reference mode (its out_dtype matmuls run on the
    CPU: `eager_reference.py`); the config feeds `register_tunable` (our knobs, which
    change no value and are not in its config space, left out)."""
    settings = dataclasses.replace(kernel.settings, ref_mode=helion.RefMode.EAGER)
    kept = helion.Config(**{k: v for k, v in config.config.items() if k not in KNOBS})
    return with_out_dtype_matmuls(helion.Kernel(kernel.fn, configs=[kept], settings=settings))


# ---------------------------------------------------------------- running one case


@dataclass
class Prepared:
    """A case ready to compile: its config drawn, inputs made, the reference computed."""

    case: FuzzCase
    args: tuple[Any, ...]
    bound: Any
    want: list[Any]  # the reference's outputs, then its tensor arguments after the run


def prepare(case: FuzzCase) -> Prepared:
    """Inputs, bind, config, reference: Helion's side, so a failure here skips the case."""
    args = make_inputs(case)
    example = example_named(case.example)
    try:
        _bind_example_first(case)
        bound = example.kernel.bind(args)
    except HelionMLIRError:
        raise
    except Exception as err:
        raise SkipCase(f"bind: {_brief(err)}") from err
    if case.config is None:
        case = dataclasses.replace(
            case, config=draw_config(bound.config_spec, random.Random(case.seed))
        )
    ref_args = _cloned(args)
    try:
        result = reference_kernel(example.oracle or example.kernel, case.helion_config())(*ref_args)
    except Exception as err:
        raise SkipCase(f"reference: {_brief(err)}") from err
    return Prepared(case, args, bound, _flat(result) + _tensors(ref_args))


def _bind_example_first(case: FuzzCase) -> None:
    """For a kernel of dynamic shapes, bind the example's own inputs before the case's: one
    bound kernel serves both where Helion does not specialize them apart, and its code is
    then generated at the example's sizes in every process, a repro's too, and run at the
    case's. The example's code is generated first, as by a first call: the size guards it
    records key the bound kernels, so the case binds the kernel its call will run (and its
    config is drawn from that kernel's space)."""
    example = example_named(case.example)
    if not example.kernel.settings.static_shapes and case.shape_map:
        _generated(example.kernel.bind(example.args(DTYPES[case.dtype], case.seed)))


@functools.cache
def _generated(bound: Any) -> None:
    """The bound kernel's code generated once per process (its guards then stand)."""
    with contextlib.suppress(HelionMLIRError):  # the case's own run reports it
        lower_kernel(bound)


def check(prepared: Prepared, bounds_checks: bool) -> Outcome:
    """Our run of a prepared case against its reference."""
    case, args = prepared.case, _cloned(prepared.args)
    try:
        compiled = compile_kernel(
            prepared.bound, config=case.helion_config(), bounds_checks=bounds_checks
        )
        got = _flat(compiled(*args)) + _tensors(args)
    except Exception as err:
        status = "unsupported" if _is_unsupported(err) else "error"
        return Outcome(
            case, status, f"{type(err).__name__}: {_brief(err, 2)}", traceback.format_exc()
        )
    problem = compare(got, prepared.want)
    return Outcome(case, "mismatch", problem) if problem else Outcome(case, "ok")


def check_both(prepared: Prepared) -> Outcome:
    """The fast pipeline, then the bounds-checked one: a program must pass both."""
    fast = check(prepared, False)
    if fast.status != "ok":
        return dataclasses.replace(fast, detail=f"fast pipeline: {fast.detail}")
    checked = check(prepared, True)
    return (
        checked
        if checked.status == "ok"
        else dataclasses.replace(checked, detail=f"bounds-checked: {checked.detail}")
    )


def check_kernel(
    kernel: Any, args: tuple[Any, ...], config: dict[str, Any] | None, oracle: Any = None
) -> Outcome:
    """A kernel (a repro file's) on both pipelines against reference mode (of `oracle`,
    a kernel of the same meaning, when given)."""
    case = FuzzCase(0, kernel.name, "f32", {}, 0, config)
    try:
        bound = kernel.bind(args)
    except Exception as err:
        return Outcome(case, "skipped", f"bind: {_brief(err)}")
    case = dataclasses.replace(
        case, config=config or draw_config(bound.config_spec, random.Random(0))
    )
    ref_args = _cloned(args)
    try:
        result = reference_kernel(oracle or kernel, case.helion_config())(*ref_args)
    except Exception as err:
        return Outcome(case, "skipped", f"reference: {_brief(err)}")
    return check_both(Prepared(case, args, bound, _flat(result) + _tensors(ref_args)))


def run_case(case: FuzzCase, bounds_checks: bool = False) -> Outcome:
    """Prepare and check one case in this process."""
    prepared = prepare_or_outcome(case)
    if isinstance(prepared, Outcome):
        return prepared
    return (
        check_both(prepared)
        if case.example.startswith(programs.PREFIX)
        else check(prepared, bounds_checks)
    )


def prepare_or_outcome(case: FuzzCase) -> Prepared | Outcome:
    """`prepare`, or the outcome that ends the case before compiling: skipped, or an
    error of ours while Helion binds (our hook records stripped args then)."""
    try:
        return prepare(case)
    except SkipCase as skip:
        return Outcome(case, "skipped", str(skip))
    except HelionMLIRError as err:
        return Outcome(
            case, "error", f"{type(err).__name__}: {_brief(err, 2)}", traceback.format_exc()
        )


def compare(got: list[Any], want: list[Any]) -> str | None:
    """None if every output matches within its dtype's tolerance, else what differs."""
    if len(got) != len(want):
        return f"{len(got)} outputs, the reference has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        problem = _compare_one(g, w)
        if problem:
            return f"output {i}: {problem}"
    return None


def _compare_one(got: Any, want: Any) -> str | None:
    if not isinstance(want, torch.Tensor):
        return None if got == want else f"{got!r} != {want!r}"
    if not isinstance(got, torch.Tensor) or got.dtype != want.dtype or got.shape != want.shape:
        return f"got {_signature(got)}, want {_signature(want)}"
    g, w = (got.float(), want.float()) if want.dtype == torch.float8_e4m3fn else (got, want)
    tol = TOLERANCES.get(want.dtype, 0.0)
    try:
        torch.testing.assert_close(g, w, rtol=tol, atol=tol * _magnitude(w), equal_nan=True)
    except AssertionError as err:
        return "; ".join(line.strip() for line in str(err).splitlines() if line.strip())
    return None


def _magnitude(tensor: torch.Tensor) -> float:
    """max(1, max |finite value|): what absolute tolerances scale with."""
    if not tensor.is_floating_point():
        return 1.0
    finite = tensor[tensor.isfinite()]
    return max(1.0, float(finite.abs().max())) if finite.numel() else 1.0


def _signature(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{DTYPE_NAMES.get(value.dtype, value.dtype)}{list(value.shape)}"
    return type(value).__name__


def _flat(result: Any) -> list[Any]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _tensors(args: Sequence[Any]) -> list[torch.Tensor]:
    return [a for a in args if isinstance(a, torch.Tensor)]


def _cloned(args: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _is_unsupported(err: Exception) -> bool:
    return isinstance(err, HelionMLIRError) and any(
        m in _brief(err, 2) for m in UNSUPPORTED_MARKERS
    )


def _brief(err: BaseException, count: int = 1) -> str:
    """The first `count` non-empty lines of the message, joined, at most 300 characters."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return " ".join(lines[:count])[:300]


# ---------------------------------------------------------------- the child process


def worker_main(cases: range, options: Options) -> None:
    """Run `cases`, one JSON line per event on the original stdout: the case before it
    runs (again once its config is drawn), then its outcome. Anything else the kernels or
    compilers print goes to stderr, so it cannot garble the protocol."""
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    torch.set_num_threads(options.threads)
    names = options.only or (dynamic_twins() if options.dynamic else sample_kernels())
    for index in cases:
        case = (
            plan_program(index, options.seed)
            if options.programs
            else plan_case(index, options.seed, names)
        )
        _send(protocol, {"case": case.to_dict()})
        outcome = _run_in_worker(case, protocol, options)
        _send(protocol, {"outcome": {"status": outcome.status, "detail": outcome.detail}})
    protocol.close()
    os._exit(0)  # skip interpreter teardown: nothing is left to flush, and it is slow


def _run_in_worker(case: FuzzCase, protocol: IO[str], options: Options) -> Outcome:
    prepared = prepare_or_outcome(case)
    if isinstance(prepared, Outcome):
        return prepared
    _send(protocol, {"case": prepared.case.to_dict()})
    return check_both(prepared) if options.programs else check(prepared, options.bounds_checks)


def _send(protocol: IO[str], message: dict[str, Any]) -> None:
    protocol.write(json.dumps(message) + "\n")


# ---------------------------------------------------------------- the driver


def fuzz(cases: int, options: Options) -> list[Outcome]:
    """Run cases 0..cases-1 in child processes; outcomes in case order."""
    progress = Progress("fuzz", cases, "cases", FAILING)
    outcomes = run_striped(cases, options.jobs, lambda s: _run_stripe(s, options, progress))
    return sorted(outcomes, key=lambda o: o.case.index)


def _run_stripe(stripe: range, options: Options, progress: Progress) -> list[Outcome]:
    """Batches of the stripe, each in a fresh child; a batch that ends early (crash,
    timeout) resumes after the case that ended it."""
    outcomes: list[Outcome] = []
    while stripe:
        done = _run_batch(stripe[: options.batch], options, progress)
        outcomes += done
        stripe = stripe[len(done) :]
    return outcomes


def _run_batch(batch: range, options: Options, progress: Progress) -> list[Outcome]:
    """One child for `batch`; outcomes for the prefix of it that ran (a crash or timeout
    is the outcome of the case that was running)."""
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(
            _worker_args(batch, options), stdout=subprocess.PIPE, stderr=stderr, text=True
        )
        child = _Child(proc, stderr, _Watchdog(proc, options.timeout))
        child.read(progress)
        if child.current is None:
            if not child.outcomes and len(batch):
                raise RuntimeError(
                    f"fuzz worker died before its first case: {stderr_tail(child.stderr)}"
                )
            return child.outcomes
        status = "timeout" if child.watchdog.fired else "crash"
        detail = (
            f"no result within {options.timeout:g} s" if child.watchdog.fired else child.death()
        )
        progress.add(status)
        return [*child.outcomes, Outcome(child.current, status, detail)]


@dataclass
class _Child:
    """A worker process, what it has reported, and the case it is running."""

    proc: subprocess.Popen[str]
    stderr: IO[bytes]
    watchdog: _Watchdog
    outcomes: list[Outcome] = dataclasses.field(default_factory=list)
    current: FuzzCase | None = None
    case_stderr: int = 0  # where the current case's stderr begins

    def read(self, progress: Progress) -> None:
        """Follow the protocol until the child's output ends (it finished or died)."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "outcome" in message:
                assert self.current is not None, message
                self.outcomes.append(Outcome(self.current, **message["outcome"]))
                progress.add(message["outcome"]["status"])
                self.current = None
            elif self.current is None or message["case"]["index"] != self.current.index:
                self.watchdog.restart()
                self.case_stderr = os.fstat(self.stderr.fileno()).st_size
                self.current = FuzzCase.from_dict(message["case"])
            else:
                self.current = FuzzCase.from_dict(message["case"])  # now with its config
        self.proc.wait()
        self.watchdog.stop()

    def death(self) -> str:
        code = self.proc.returncode
        cause = signal_name(-code) if code < 0 else f"exit code {code}"
        return f"{cause}: {stderr_tail(self.stderr, self.case_stderr)}"


def _worker_args(batch: range, options: Options) -> list[str]:
    args = [
        *WORKER_COMMAND,
        "--seed",
        str(options.seed),
        "--start",
        str(batch.start),
        "--stop",
        str(batch.stop),
        "--step",
        str(batch.step),
    ]
    if options.only:
        args += ["--only", ",".join(options.only)]
    return (
        args
        + (["--bounds-checks"] if options.bounds_checks else [])
        + (["--programs"] if options.programs else [])
        + (["--dynamic"] if options.dynamic else [])
        + ["--threads", str(options.threads)]
    )


class _Watchdog:
    """Kills the child when one case runs longer than the timeout."""

    def __init__(self, proc: subprocess.Popen[str], timeout: float) -> None:
        self.proc, self.timeout, self.fired = proc, timeout, False
        self._timer: threading.Timer | None = None
        self.restart()

    def restart(self) -> None:
        self.stop()
        self._timer = threading.Timer(self.timeout, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _fire(self) -> None:
        self.fired = True
        self.proc.kill()


def summary(outcomes: Sequence[Outcome]) -> str:
    counts = Counter(o.status for o in outcomes)
    return f"fuzz: {len(outcomes)} cases: " + ", ".join(f"{s} {counts[s]}" for s in STATUSES)


def report(outcomes: Sequence[Outcome], bounds_checks: bool, threads: int = 1) -> str:
    """One line per case that did not pass or skip (what went wrong below it), then the summary."""
    lines = []
    for outcome in outcomes:
        if outcome.status not in ("ok", "skipped"):
            lines += [outcome.line(bounds_checks, threads), f"    {outcome.detail}"]
    return "\n".join([*lines, summary(outcomes)])


def failing(outcomes: Sequence[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.status in FAILING]


# ---------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(
        prog="python -m helion_fx_mlir.tools.fuzz.differential", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--cases", type=int, default=None, help="default: $FUZZ_CASES or 5000")
    parser.add_argument(
        "--seed", type=int, default=int(env("FUZZ_SEED", "0")), help="default: $FUZZ_SEED or 0"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=int(env("FUZZ_JOBS", "1")),
        help="child processes at once (default: $FUZZ_JOBS or 1)",
    )
    parser.add_argument(
        "--programs",
        action="store_true",
        help="generated programs (programs.py; count: --cases, default $FUZZ_PROGRAMS or 3000), "
        "each on the fast and the bounds-checked pipeline; failures are reduced",
    )
    parser.add_argument(
        "--dynamic",
        action="store_true",
        help="each sample kernel of static shapes as its twin declared static_shapes=False, "
        "compiled at the example's inputs and run at the case's shapes",
    )
    parser.add_argument("--only", default="", help="comma-separated example names (default: all)")
    parser.add_argument(
        "--bounds-checks", action="store_true", help="compile with run-time bounds checks"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=int(env("FUZZ_THREADS", "1")),
        help="torch threads each case runs on, so its grids split and group as on a CPU of "
        "that many cores (default: $FUZZ_THREADS or 1)",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--repro", metavar="JSON", help="run one reported case in this process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stop", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--step", type=int, help=argparse.SUPPRESS)
    return parser


def _options(ns: argparse.Namespace) -> Options:
    only = tuple(name for name in ns.only.split(",") if name)
    unknown = [name for name in only if name.removeprefix(DYNAMIC_PREFIX) not in EXAMPLES]
    if unknown:
        raise SystemExit(f"fuzz: unknown examples: {', '.join(unknown)}")
    unjudged = [n for n in only if not EXAMPLES[n.removeprefix(DYNAMIC_PREFIX)].reference_mode]
    if unjudged:  # reference mode means something else by them (their docstrings say what)
        raise SystemExit(f"fuzz: reference mode cannot judge: {', '.join(unjudged)}")
    if ns.dynamic:
        only = tuple(DYNAMIC_PREFIX + name.removeprefix(DYNAMIC_PREFIX) for name in only)
    return Options(
        ns.seed,
        only,
        ns.bounds_checks,
        max(1, ns.jobs),
        ns.timeout,
        programs=ns.programs,
        dynamic=ns.dynamic,
        threads=max(1, ns.threads),
    )


def _repro(text: str, bounds_checks: bool, threads: int) -> int:
    torch.set_num_threads(threads)
    case = FuzzCase.from_dict(json.loads(text))
    print(f"running {case.describe()}", flush=True)  # a crash prints nothing after this
    outcome = run_case(case, bounds_checks)
    print(
        outcome.trace
        + outcome.line(bounds_checks, threads)
        + (f"\n    {outcome.detail}" if outcome.detail else "")
    )
    return 1 if outcome.status in FAILING else 0


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    options = _options(ns)
    if ns.worker:
        worker_main(range(ns.start, ns.stop, ns.step), options)  # does not return
    if ns.repro:
        return _repro(ns.repro, ns.bounds_checks, max(1, ns.threads))
    cases = (
        ns.cases
        if ns.cases is not None
        else int(
            os.environ.get(
                "FUZZ_PROGRAMS" if ns.programs else "FUZZ_CASES", "3000" if ns.programs else "5000"
            )
        )
    )
    outcomes = fuzz(cases, options)
    print(report(outcomes, options.bounds_checks, options.threads))
    if options.programs:
        for outcome in failing(outcomes)[:REDUCED_PER_RUN]:
            print(programs.reduced_repro(outcome, options.timeout, options.threads), flush=True)
    return 1 if failing(outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
