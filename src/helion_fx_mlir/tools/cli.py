"""helion-mlir: emit, validate, run and benchmark Helion kernels from the shell.

Exit codes: 0 success, 1 invalid input or mismatch, 2 usage error. Failures print
one message, never a Python traceback.
"""

from __future__ import annotations

import argparse
import logging
import pathlib
import sys
import time
from collections.abc import Sequence
from typing import Any

from helion_fx_mlir.errors import HelionMLIRError, SpecError, UsageError
from helion_fx_mlir.tools.shell import read_input, run_tool, stage, write_output

PROG = "helion-mlir"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _kernel_args(parser: argparse.ArgumentParser, several: bool = False) -> None:
    if several:
        parser.add_argument(
            "kernel",
            nargs="+",
            help="FILE.py:KERNEL; several sample kernels, each with its own "
            "inputs, print one module each, separated by '// -----'",
        )
    else:
        parser.add_argument("kernel", help="FILE.py:KERNEL")
    parser.add_argument(
        "--args",
        nargs="+",
        required=not several,
        metavar="SPEC",
        help="argument specs: 128x256xf32 (random tensor), f32 (0-d), 1e-5 (scalar)"
        + ("; default: a sample kernel's own inputs" if several else ""),
    )
    parser.add_argument(
        "--config",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="config entries, e.g. block_sizes=32,32 reduction_loops=None",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    emit = sub.add_parser("emit", help="print a kernel's MLIR")
    _kernel_args(emit, several=True)
    emit.add_argument("--name", help="func name (default: the kernel's)")
    emit.add_argument("-o", "--output", help="write to FILE instead of stdout")
    emit.add_argument(
        "--mlir-print-debuginfo",
        action="store_true",
        help='attach loc("kernel.py":LINE:COL) of the producing kernel line to every op',
    )
    validate = sub.add_parser("validate", help="parse and verify an MLIR file; print diagnostics")
    validate.add_argument("file", help="FILE.mlir, or - for stdin")
    run = sub.add_parser(
        "run",
        help="compile and run a kernel on random inputs as the mlir backend does (its "
        "default config without --config); compare with eager",
    )
    _kernel_args(run)
    run.add_argument(
        "--reference",
        help="FILE.py:FN computing the expected result (default: the "
        "kernel's Python body run eagerly by Helion's ref mode)",
    )
    run.add_argument("--rtol", type=float, default=None)
    run.add_argument("--atol", type=float, default=None)
    _autotune_arg(run)
    run.add_argument(
        "--bounds-checks",
        action="store_true",
        help="verify every memory access at run time; an out-of-bounds one aborts naming "
        "the kernel line",
    )
    bench = sub.add_parser(
        "bench", help="time sample kernels against eager PyTorch (same process, same threads)"
    )
    bench.add_argument("names", nargs="*", help="bench cases (default: the whole suite)")
    bench.add_argument(
        "--sizes",
        choices=("small", "large"),
        default="large",
        help="large: realistic shapes (default); small: each sample kernel's own test inputs",
    )
    bench.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for ours and eager alike (default: torch.get_num_threads())",
    )
    bench.add_argument("--rounds", type=int, default=5, help="alternating rounds of ours and eager")
    bench.add_argument(
        "--autotune",
        choices=("quick", "full"),
        default=None,
        help="also search each kernel with Helion's autotuner (this effort) through the mlir "
        "backend and time the tuned config in its own columns",
    )
    return parser


def _autotune_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--autotune",
        choices=("quick", "full"),
        help="search the config with Helion's autotuner on this CPU (the best config is "
        "cached on disk: a second run reuses it)",
    )


def cmd_emit(ns: argparse.Namespace) -> int:
    from helion_fx_mlir.frontend.lower import generate_mlir
    from helion_fx_mlir.tools.specs import parse_config

    if len(ns.kernel) > 1 and (ns.args or ns.name):
        raise UsageError(
            "--args and --name take one kernel; several kernels must be sample kernels"
        )
    config = parse_config(ns.config)
    texts = []
    for ref in ns.kernel:
        stage(f"generating MLIR for {ref}")
        bound = _emit_inputs(ref, ns, config)
        texts.append(
            generate_mlir(bound, ns.name, config=config, debug_info=ns.mlir_print_debuginfo)
        )
    write_output("\n// -----\n".join(texts), ns.output)
    return 0


# --args up to this size are made as CPU tensors: Helion's tracing of some ops (int sums,
# copysign with a scalar) fails for the meta device.
EMIT_CPU_BYTES = 256 * 2**20


def _emit_inputs(ref: str, ns: argparse.Namespace, config: Any) -> Any:
    """The bound kernel: for --args, after the kernel's host code accepted them, on CPU
    tensors, or meta tensors past EMIT_CPU_BYTES (emitting allocates nothing, whatever the
    sizes); else a sample's own inputs."""
    from helion_fx_mlir.tools.arg_checks import bind, check_host_code
    from helion_fx_mlir.tools.specs import TensorSpec, load_kernel, make_args, parse_specs

    if not ns.args:
        kernel, args = sample_kernel(ref, ns.seed)
        return bind(kernel, args)
    specs = parse_specs(ns.args)
    size = sum(s.nbytes for s in specs if isinstance(s, TensorSpec))
    kernel, args = (
        load_kernel(ref),
        make_args(specs, ns.seed, device="cpu" if size <= EMIT_CPU_BYTES else "meta"),
    )
    bound = bind(kernel, args)
    check_host_code(bound, config, args)
    return bound


def sample_kernel(ref: str, seed: int) -> tuple[object, tuple[object, ...]]:
    """FILE.py:NAME of a sample kernel (or of a sample, when one kernel serves several with
    different closures) and its own inputs, so goldens and users need no --args."""
    from helion_fx_mlir.examples import EXAMPLES
    from helion_fx_mlir.tools.specs import load_kernel

    path, _, name = ref.rpartition(":")
    example = EXAMPLES.get(name)
    if (
        example is not None
        and pathlib.Path(path).resolve()
        == pathlib.Path(example.kernel.fn.__code__.co_filename).resolve()
    ):
        return example.kernel, example.args(seed=seed)
    kernel = load_kernel(ref)
    example = next((e for e in EXAMPLES.values() if e.kernel is kernel), None)
    if example is None:
        raise UsageError(f"{ref} is not a sample kernel: give its inputs with --args")
    return kernel, example.args(seed=seed)


def cmd_validate(ns: argparse.Namespace) -> int:
    from helion_fx_mlir.mlir.parse import (
        validate_text,
    )  # validate_with_helion_opt, without importing torch

    name = "<stdin>" if ns.file == "-" else ns.file
    text = read_input(ns.file)
    stage("the MLIR parser and verifier")
    result = validate_text(text, name)
    for diag in result.diagnostics:
        print(diag, file=sys.stderr)
    if result.ok:
        print(f"{name}: valid")
    return 0 if result.ok else 1


def cmd_run(ns: argparse.Namespace) -> int:
    import torch

    from helion_fx_mlir.runtime.autotune import mlir_copy, tune
    from helion_fx_mlir.runtime.jit import compile_kernel
    from helion_fx_mlir.tools.arg_checks import bind, check_memory, rejected
    from helion_fx_mlir.tools.eager_reference import eager_reference
    from helion_fx_mlir.tools.specs import load_kernel, make_args, parse_config, parse_specs

    # As the `mlir` backend runs it: without --config or --autotune, the backend's default.
    kernel, specs = mlir_copy(load_kernel(ns.kernel), "none"), parse_specs(ns.args)
    check_memory(specs)
    args = make_args(specs, ns.seed)
    config = parse_config(ns.config)
    if ns.autotune:
        if config is not None:
            raise UsageError("--autotune searches the config: give it or --config, not both")
        stage(f"autotuning the kernel ({ns.autotune})")
        config = tune(kernel, _clone(args), ns.autotune)
    stage("lowering and JIT-compiling the kernel")
    compiled = compile_kernel(bind(kernel, args), config=config, bounds_checks=ns.bounds_checks)
    stage("the compiled kernel")
    start = time.perf_counter()
    try:
        got = compiled(*_clone(args))
    except AssertionError as err:
        raise rejected(err, kernel.fn, "the kernel rejects these arguments") from None
    mlir_ms = (time.perf_counter() - start) * 1e3
    reference = load_kernel_fn(ns.reference) if ns.reference else eager_reference(kernel)
    stage("the reference")
    start = time.perf_counter()
    try:
        want = reference(*_clone(args))
    except Exception as err:
        raise rejected(
            err, getattr(reference, "fn", reference), "the reference fails on these arguments"
        ) from None
    eager_ms = (time.perf_counter() - start) * 1e3
    try:
        torch.testing.assert_close(got, want, rtol=ns.rtol, atol=ns.atol, equal_nan=True)
    except AssertionError as err:
        print(f"MISMATCH against eager PyTorch:\n{err}")
        return 1
    print(f"match: compiled MLIR {mlir_ms:.3f} ms, eager PyTorch {eager_ms:.3f} ms")
    return 0


def load_kernel_fn(ref: str) -> Any:
    """FILE.py:FN -> the function (a custom reference for `run`)."""
    from helion_fx_mlir.tools.specs import import_file

    path, sep, name = ref.rpartition(":")
    fn = (
        getattr(import_file(pathlib.Path(path)), name, None)
        if sep and pathlib.Path(path).is_file()
        else None
    )
    if not callable(fn):
        raise SpecError(f"cannot find a function for --reference '{ref}' (expected FILE.py:FN)")
    return fn


def _clone(args: Sequence[object]) -> tuple[object, ...]:
    return tuple(a.clone() if hasattr(a, "clone") else a for a in args)


def cmd_bench(ns: argparse.Namespace) -> int:
    from helion_fx_mlir.tools.bench import CASES
    from helion_fx_mlir.tools.bench import main as bench_main

    unknown = [name for name in ns.names if name not in CASES]
    if unknown:
        raise UsageError(f"unknown bench case {', '.join(unknown)}; known: {', '.join(CASES)}")
    if (ns.threads is not None and ns.threads < 1) or ns.rounds < 1:
        raise UsageError("--threads and --rounds take a positive count")
    bench_main(ns.names or None, ns.rounds, ns.threads, ns.sizes, ns.autotune)
    return 0


COMMANDS = {"emit": cmd_emit, "validate": cmd_validate, "run": cmd_run, "bench": cmd_bench}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (argv None: the process's, guarded against crashes) or argv."""
    return run_tool(PROG, lambda: _main(argv), guard=argv is None)


# torch logs the traceback of a failed shape check in the kernel body before Helion raises
# it; Helion's error reaches the user as one located line, so the log is noise.
QUIET_LOGGERS = ("torch._subclasses.fake_tensor",)


def _drop(_record: logging.LogRecord) -> bool:
    """A log filter; one function, so a process running many commands adds it once."""
    return False


def _main(argv: Sequence[str] | None) -> int:
    ns = build_parser().parse_args(argv)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).addFilter(_drop)
    try:
        return COMMANDS[ns.command](ns)
    except Exception as err:
        helion = sys.modules.get("helion")  # imported by the commands that use kernels
        if helion is None or not isinstance(err, helion.exc.Base):
            raise
        from helion_fx_mlir.tools.arg_checks import helion_message

        raise HelionMLIRError(helion_message(err)) from None  # about the kernel or its config


if __name__ == "__main__":
    sys.exit(main())
