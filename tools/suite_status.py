"""Status of every sample kernel through the pipeline: bind, generate_mlir, validate, run.

For every example x dtype (default config) and example x extra config (float32), reports
  bind      Helion accepts the kernel and its args (a failure here is a bug in the example)
  mlir      generate_mlir succeeds
  valid     the text parses and verifies
  run       compile_kernel(...) matches the eager reference
and, independently, whether the kernel itself is right:
  ref       Helion's ref mode (the kernel body run as eager PyTorch) matches the reference
            ("n/a" where ref mode cannot run on CPU, e.g. addmm's aten::mm.dtype)
and, on failure, the first line of the error. Then a per-failing-target summary
(target -> kernels) built from our LoweringError (it names the FX node's target).

    .venv/bin/python tools/suite_status.py                 # every family module
    .venv/bin/python tools/suite_status.py control_flow    # some families
    .venv/bin/python tools/suite_status.py -k attention    # examples whose name contains a string
    .venv/bin/python tools/suite_status.py --no-run        # stop after validation (fast)

Families are imported here, not from FAMILIES, so new modules are reported before the
test suite runs them.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import time
import traceback
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import helion
import torch

import helion_fx_mlir as hfm
from helion_fx_mlir.errors import LoweringError

FAMILY_MODULES = (
    "kernels",
    "elementwise",
    "reductions",
    "matmuls",
    "attention",
    "jagged_moe",
    "control_flow",
    "coverage_ops",
)
STAGES = ("bind", "mlir", "valid", "run")
COLUMNS = ("ref", *STAGES)


@dataclass
class Case:
    family: str
    name: str
    dtype: torch.dtype
    config_index: int | None  # None: the default config
    config: Any = None
    results: dict[str, str] = field(default_factory=dict)  # stage -> "ok" | "FAIL" | "-"
    failed_stage: str | None = None
    error: str = ""
    target: str | None = None
    seconds: float = 0.0

    @property
    def label(self) -> str:
        dt = str(self.dtype).removeprefix("torch.")
        return (
            f"{self.name}-{dt}"
            if self.config_index is None
            else f"{self.name}-cfg{self.config_index}"
        )


def first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    line = re.sub(r"\S*/([\w.]+\.py:\d+)", r"\1", text.splitlines()[0])
    if not isinstance(err, hfm.HelionMLIRError):
        line = f"{type(err).__name__}: {line}"
    return line[:200]


def error_target(err: BaseException) -> str:
    """What failed, for the summary: the FX target of a LoweringError, else a short key."""
    if isinstance(err, LoweringError):
        return err.target
    cause = err.__cause__ or err.__context__
    if isinstance(cause, LoweringError):
        return cause.target
    text = first_line(err)
    match = re.search(r"\(target ([^)]+)\)", text)
    if match:
        return match.group(1)
    if isinstance(err, hfm.MLIRTextError):
        diag = err.diagnostics[0] if err.diagnostics else ""
        return f"<{err.stage}: {re.sub(r'^.*?error: ', '', diag)[:80]}>"
    if isinstance(err, AssertionError):
        return "<mismatch against the eager reference>"
    message = re.sub(
        r"\b([su])\d+\b", r"\1*", str(err).strip().splitlines()[0] if str(err).strip() else ""
    )
    return f"<{type(err).__name__}: {message[:70]}>"


def run_case(case: Case, example: Any) -> None:
    start = time.perf_counter()
    if REF and case.config_index is None:
        case.results["ref"] = ref_mode_status(example, case.dtype)
    stage = "bind"
    try:
        args = example.args(case.dtype)
        bound = example.kernel.bind(args)
        case.results["bind"] = "ok"
        stage = "mlir"
        text = hfm.generate_mlir(bound, config=case.config)
        case.results["mlir"] = "ok"
        stage = "valid"
        result = hfm.validate_with_helion_opt(text)
        if not result.ok:
            raise hfm.MLIRTextError("validation", result.diagnostics or ["invalid"])
        case.results["valid"] = "ok"
        if RUN:
            stage = "run"
            got = hfm.compile_kernel(bound, config=case.config)(*example.args(case.dtype))
            torch.testing.assert_close(got, example.reference(*example.args(case.dtype)))
            case.results["run"] = "ok"
    except Exception as err:
        case.results[stage] = "FAIL"
        case.failed_stage = stage
        if isinstance(err, hfm.MLIRTextError):
            case.error = f"{err.stage}: {err.diagnostics[0] if err.diagnostics else ''}"[:200]
        else:
            case.error = first_line(err)
        case.target = error_target(err) if stage in ("mlir", "valid", "run") else "<bind>"
        if VERBOSE:
            traceback.print_exc()
    case.seconds = time.perf_counter() - start


def ref_mode_status(example: Any, dtype: torch.dtype) -> str:
    """The kernel run by Helion's ref mode (eager PyTorch) against the example's reference."""
    try:
        kernel = helion.kernel(
            example.kernel.fn,
            ref_mode=helion.RefMode.EAGER,
            static_shapes=example.kernel.settings.static_shapes,
            ignore_warnings=[helion.exc.TensorOperationInWrapper],
        )
        got = kernel(*example.args(dtype))
        torch.testing.assert_close(got, example.reference(*example.args(dtype)))
        return "ok"
    except NotImplementedError as err:
        if "backend" in str(err):
            return "n/a"
        return "FAIL"
    except Exception:
        if VERBOSE:
            traceback.print_exc()
        return "FAIL"


def collect(families: list[str], contains: str | None) -> list[tuple[Case, Any]]:
    cases: list[tuple[Case, Any]] = []
    seen: dict[str, str] = {}
    for family in families:
        try:
            module = importlib.import_module(f"helion_fx_mlir.examples.{family}")
        except Exception as err:
            print(f"!! cannot import family '{family}': {first_line(err)}")
            continue
        for example in module.EXAMPLES:
            if example.name in seen:
                print(
                    f"!! duplicate example name '{example.name}' in {family} "
                    f"and {seen[example.name]}"
                )
            seen[example.name] = family
            if contains and contains not in example.name:
                continue
            for dtype in example.dtypes:
                cases.append((Case(family, example.name, dtype, None), example))
            for i, config in enumerate(example.configs):
                cases.append((Case(family, example.name, example.dtypes[0], i, config), example))
    return cases


def print_table(cases: list[Case]) -> None:
    width = max(len(c.label) for c in cases) + 2
    fam_w = max(len(c.family) for c in cases) + 2
    print(f"{'family':<{fam_w}}{'case':<{width}}" + "".join(f"{s:<6}" for s in COLUMNS) + "  error")
    for c in cases:
        cells = "".join(f"{c.results.get(s, '-'):<6}" for s in COLUMNS)
        print(f"{c.family:<{fam_w}}{c.label:<{width}}{cells}  {c.error}")


def print_summary(cases: list[Case]) -> None:
    total = len(cases)
    counts = {s: sum(1 for c in cases if c.results.get(s) == "ok") for s in STAGES}
    passed = sum(1 for c in cases if c.failed_stage is None)
    examples = sorted({c.name for c in cases})
    ref_bad = sorted({c.name for c in cases if c.results.get("ref") == "FAIL"})
    green = sorted({c.name for c in cases} - {c.name for c in cases if c.failed_stage})
    print()
    stage_counts = ", ".join(f"{s} ok {counts[s]}" for s in STAGES if s != "run" or RUN)
    print(
        f"{len(examples)} examples, {total} cases: "
        + stage_counts
        + f"; fully passing {passed}/{total} cases, {len(green)}/{len(examples)} examples"
    )
    if REF:
        print(f"Helion ref mode disagrees with the reference: {', '.join(ref_bad) or 'none'}")
    by_family: dict[str, list[Case]] = defaultdict(list)
    for c in cases:
        by_family[c.family].append(c)
    for family, fcases in by_family.items():
        ok = sum(1 for c in fcases if c.failed_stage is None)
        print(f"  {family:<14} {ok:>3}/{len(fcases):<3} cases pass")
    failing: dict[str, dict[str, str]] = defaultdict(dict)  # target -> kernel -> first error
    for c in cases:
        if c.failed_stage is not None:
            failing[c.target or "?"].setdefault(c.name, f"[{c.failed_stage}] {c.error}")
    if not failing:
        return
    print("\nFailing targets (target -> kernels; first error line):")
    for target, kernels in sorted(failing.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {target}  ({len(kernels)}): {', '.join(sorted(kernels))}")
        errors = sorted(set(kernels.values()))
        for error in errors[:2]:
            print(f"      {error}")


RUN = True
REF = True
VERBOSE = False


def main(argv: list[str] | None = None) -> int:
    global RUN, REF, VERBOSE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", default=list(FAMILY_MODULES))
    parser.add_argument("-k", dest="contains", help="only examples whose name contains this")
    parser.add_argument(
        "--no-run", action="store_true", help="skip compile_kernel (bind/mlir/validate only)"
    )
    parser.add_argument(
        "--no-ref", action="store_true", help="skip the Helion ref-mode check of the kernels"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print tracebacks")
    ns = parser.parse_args(argv)
    RUN, REF, VERBOSE = not ns.no_run, not ns.no_ref, ns.verbose
    torch.set_num_threads(1)
    pairs = collect(ns.families, ns.contains)
    if not pairs:
        print("no cases")
        return 1
    for case, example in pairs:
        run_case(case, example)
        if VERBOSE:
            print(f"{case.label}: {case.failed_stage or 'ok'} {case.error}", flush=True)
    cases = [c for c, _ in pairs]
    print_table(cases)
    print_summary(cases)
    return 0 if all(c.results.get("bind") == "ok" for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
