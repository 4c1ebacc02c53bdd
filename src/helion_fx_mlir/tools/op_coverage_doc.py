"""docs/op-coverage.md, generated: one row per FX target, what MLIR it becomes and
which tests prove it. `make docs` writes it; tests/test_op_coverage.py checks it is current.

Rows: every target of the inventory of Helion's own example kernels (INVENTORY, measured
once with helion 1.5.1 and copied here as data), every target with a lowering rule, and
every target a sample kernel uses. The MLIR column is the first docstring line of the
target's rule in `dispatch.LOWERINGS`; ATen/prims overloads without a rule go through
torch-mlir's FxImporter (`torch.aten.<name>`). The proving tests are found by binding
every example of `examples.EXAMPLES` and walking the graphs reachable from its roots.
"""

from __future__ import annotations

import pathlib
import re
import sys
from collections.abc import Iterable
from typing import Any

import torch

import helion_fx_mlir.frontend.rules  # noqa: F401 - importing it registers every rule in LOWERINGS
from helion_fx_mlir.errors import target_name
from helion_fx_mlir.frontend.dispatch import LOWERINGS
from helion_fx_mlir.frontend.lowering_context import LoweringContext

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "op-coverage.md"
EXECUTION_TEST = "tests/test_execution.py"
IDS_SHOWN = 4  # pytest ids listed per target; further examples are listed by name

# Target -> number of Helion's own example kernels (92 binding on CPU) whose reachable
# graphs use it (persistent reductions). Copied from the measured inventory.
INVENTORY: dict[str, int] = {
    "hl._tracing_ops._get_symnode": 92,
    "hl._tracing_ops._host_tensor": 92,
    "hl.memory_ops.load": 92,
    "hl.memory_ops.store": 91,
    "aten.mul.Tensor": 64,
    "prims.convert_element_type.default": 61,
    "aten.add.Tensor": 60,
    "operator.getitem": 60,
    "hl._tracing_ops._for_loop": 59,
    "hl._tracing_ops._new_var": 59,
    "hl._tracing_ops._phi": 58,
    "aten.sub.Tensor": 54,
    "hl.creation_ops.full": 54,
    "aten.sym_size.int": 54,
    "aten.sum.dim_IntList": 40,
    "hl.view_ops.subscript": 39,
    "hl._tracing_ops._mask_to": 37,
    "aten.div.Tensor": 31,
    "aten.amax.default": 26,
    "aten.permute.default": 23,
    "hl.tile_ops.tile_index": 22,
    "aten.exp.default": 19,
    "aten.where.self": 15,
    "aten.addmm.default": 15,
    "aten.maximum.default": 14,
    "aten.full.default": 13,
    "hl.matmul_ops.dot": 12,
    "aten.scalar_tensor.default": 11,
    "aten.view.default": 11,
    "aten.exp2.default": 11,
    "hl.tile_ops.tile_begin": 10,
    "aten.baddbmm.default": 9,
    "hl._tracing_ops._if": 8,
    "aten.bmm.dtype": 8,
    "aten.mm.default": 8,
    "operator.add": 8,
    "aten.gt.Scalar": 7,
    "aten.neg.default": 7,
    "aten.log.default": 7,
    "aten.lt.Scalar": 6,
    "aten.rsqrt.default": 6,
    "hl.tile_ops.tile_id": 6,
    "operator.floordiv": 6,
    "operator.sub": 6,
    "aten.ge.Tensor": 5,
    "aten.lt.Tensor": 5,
    "aten.sigmoid.default": 5,
    "hl.tile_ops.tile_end": 5,
    "operator.mul": 5,
    "aten.clamp_min.default": 4,
    "aten.log2.default": 4,
    "aten.squeeze.dim": 4,
    "aten.__rshift__.Scalar": 3,
    "aten.bitwise_and.Scalar": 3,
    "hl._tracing_ops._inductor_lowering_extra": 3,
    "prims.iota.default": 3,
    "aten.mean.dim": 3,
    "aten.tanh.default": 3,
    "aten.unsqueeze.default": 3,
    "aten.__lshift__.Scalar": 2,
    "aten.bitwise_or.Tensor": 2,
    "aten.bitwise_xor.Tensor": 2,
    "hl.atomic_ops.atomic_add": 2,
    "aten.bitwise_and.Tensor": 2,
    "aten.bmm.default": 2,
    "aten.clamp_max.default": 2,
    "aten.clone.default": 2,
    "aten.div.Tensor_mode": 2,
    "aten.ge.Scalar": 2,
    "aten.minimum.default": 2,
    "aten.ne.Scalar": 2,
    "aten.sqrt.default": 2,
    "hl._gelu_tanh_approx._gelu_erf": 2,
    "hl.view_ops.join": 2,
    "hl.view_ops.split": 2,
    "operator.eq": 2,
    "operator.ne": 2,
    "aten.sum.default": 1,
    "aten.eq.Tensor": 1,
    "aten.expand.default": 1,
    "aten.gt.Tensor": 1,
    "aten.pow.Tensor_Scalar": 1,
    "aten.relu.default": 1,
    "aten.remainder.Scalar": 1,
    "aten.remainder.Scalar_Tensor": 1,
    "aten.stack.default": 1,
    "operator.truediv": 1,
    "hl.scan_ops._associative_scan": 0,
    "aten.argmax.default": 0,
    "aten.eq.Scalar": 0,
    "aten.max.dim": 0,
    "aten.topk.default": 0,
    "hl._tracing_ops._while_loop": 0,
    "hl.atomic_ops.atomic_cas": 0,
    "hl.atomic_ops.atomic_max": 0,
    "hl.reduce_ops._reduce": 0,
}


# Why a target has no passing execution test yet (measured; see the issue notes).
KNOWN_GAPS: dict[str, str] = {
    "hl.tile_ops.tile_block_size": (
        "never in Device IR: Helion's fake returns the tile's SymInt, so hl.tile_block_size(t) "
        "and t.block_size trace to the block-size _get_symnode (proven by tile_attributes); "
        "the rule serves hand-built graphs"
    ),
}


def display_name(target: Any) -> str:
    """The inventory's spelling of a target: hl.<module>.<fn>, operator.<fn>,
    aten.<op>.<overload>."""
    name = target if isinstance(target, str) else target_name(target)
    if name.startswith("helion.language."):
        return "hl." + name.removeprefix("helion.language.")
    if name.startswith("_operator."):
        return "operator." + name.removeprefix("_operator.")
    return name


def is_aten(name: str) -> bool:
    return name.startswith(("aten.", "prims."))


def torch_dialect_op(name: str) -> str:
    """aten.mul.Tensor -> torch.aten.mul.Tensor; prims.iota.default -> torch.prims.iota."""
    namespace, op, overload = (
        name.split(".", 2) if name.count(".") >= 2 else (*name.split("."), "default")
    )
    return f"torch.{namespace}.{op}" + ("" if overload == "default" else f".{overload}")


def rule_summary(rule: Any) -> str:
    doc = (rule.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else f"rule `{rule.__name__}` (no docstring)"


def example_cases(example: Any) -> Iterable[tuple[str, torch.dtype, Any]]:
    """(pytest id, dtype, config) of every execution test of an example, in test order."""
    for dtype in example.dtypes:
        yield (
            f"{EXECUTION_TEST}::test_matches_eager[{example.name}-{str(dtype).removeprefix('torch.')}]",
            dtype,
            None,
        )
    for i, config in enumerate(example.configs):
        test_id = f"{EXECUTION_TEST}::test_other_configs_give_the_same_numbers[{example.name}-{i}]"
        yield test_id, example.dtypes[0], config


def graph_targets(bound: Any, config: Any = None) -> set[str]:
    """Display names of the call_function targets of every graph reachable from the roots."""
    ctx = LoweringContext.from_bound_kernel(bound, config)
    found: set[str] = set()
    for gid in ctx.facts.reachable([root.graph_id for root in ctx.roots]):
        for node in ctx.facts.nodes(gid):
            if node.op == "call_function":
                found.add(display_name(node.target))
    return found


def example_proofs(example: Any) -> dict[str, str]:
    """target -> the first pytest id of the example whose graphs use it (Helion caches each
    bind, so a process that ran the example's tests binds nothing again)."""
    proofs: dict[str, str] = {}
    for test_id, dtype, config in example_cases(example):
        for target in graph_targets(example.bind(dtype), config):
            proofs.setdefault(target, test_id)
    return proofs


def proving_tests(examples: Iterable[Any]) -> dict[str, dict[str, str | None]]:
    """target -> {example name: the first pytest id of that example whose graphs use it}."""
    proofs: dict[str, dict[str, str | None]] = {}
    for example in examples:
        for target, test_id in example_proofs(example).items():
            proofs.setdefault(target, {})[example.name] = test_id
    return proofs


SHOWN = re.compile(r"`(\w+)` \(([^()]*)\)")
MORE = re.compile(r"; \+\d+ more: ")
CLAIMS = re.compile(rf"{SHOWN.pattern}(, {SHOWN.pattern})*({MORE.pattern}`\w+`(, `\w+`)*)?")


def claims(doc: str) -> dict[str, dict[str, str | None]]:
    """What a rendered doc says proves each target: {example: its test id, or None where
    only the name is listed}; the inverse of `render_proofs` on its "proven by" column."""
    found: dict[str, dict[str, str | None]] = {}
    for line in doc.splitlines():
        if not line.startswith("| `"):
            continue
        target = line[3 : line.index("`", 3)]
        cell = line.rsplit(" | ", 1)[1].removesuffix(" |")
        if not CLAIMS.fullmatch(cell):
            continue
        shown, *more = MORE.split(cell, 1)
        by_example: dict[str, str | None] = dict(SHOWN.findall(shown))
        by_example.update(dict.fromkeys(re.findall(r"`(\w+)`", "".join(more))))
        found[target] = by_example
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(examples: Iterable[Any] | None = None) -> str:
    """The text of docs/op-coverage.md (deterministic)."""
    if examples is None:
        from helion_fx_mlir.examples import EXAMPLES

        examples = EXAMPLES.values()
    examples = list(examples)
    return render_proofs(proving_tests(examples), len(examples))


def render_proofs(proofs: dict[str, dict[str, str | None]], example_count: int) -> str:
    """The doc for these proofs: a test id is printed only for the first IDS_SHOWN
    examples of a target, so the others' may be None."""
    rules = {display_name(t): rule for t, rule in LOWERINGS.items()}
    extra = sorted((set(rules) | set(proofs)) - set(INVENTORY))
    rows = [*INVENTORY, *extra]

    lines = [
        "# Op coverage",
        "",
        "<!-- Generated by `make docs` (src/helion_fx_mlir/tools/op_coverage_doc.py); "
        "do not edit by hand. -->",
        "",
        "One row per FX target of Helion's Device IR: every target used by Helion's own example",
        "kernels (column *Helion examples*: how many of the 92 that bind on CPU use it), every",
        "target with a lowering rule, and every target a sample kernel here uses.",
        "",
        "- **MLIR**: the first docstring line of the target's rule (`dispatch.LOWERINGS`); "
        "ATen/prims",
        "  overloads without a rule are imported by torch-mlir's `FxImporter` as the op shown.",
        "- **Proven by**: sample kernels (`helion_fx_mlir.examples.EXAMPLES`) whose graphs "
        "reachable",
        "  from the roots use the target, with the first execution test of each (compile_kernel",
        f"  against eager PyTorch); after {IDS_SHOWN} examples only names are listed.",
        "",
        f"{example_count} sample kernels; {len(rows)} targets, "
        f"{sum(1 for r in rows if r in proofs)} proven by a test, "
        f"{sum(1 for r in rows if r in rules)} with a rule.",
        "",
        "| target | Helion examples | MLIR | proven by |",
        "|---|---:|---|---|",
    ]
    for name in rows:
        if name in rules:
            mlir = rule_summary(rules[name])
        elif is_aten(name):
            mlir = f"`{torch_dialect_op(name)}` (FxImporter)"
        else:
            mlir = "no rule"
        by_example = proofs.get(name, {})
        if by_example:
            names = sorted(by_example)
            shown = [f"`{n}` ({by_example[n]})" for n in names[:IDS_SHOWN]]
            rest = names[IDS_SHOWN:]
            proven = ", ".join(shown) + (
                f"; +{len(rest)} more: " + ", ".join(f"`{n}`" for n in rest) if rest else ""
            )
        elif name in KNOWN_GAPS:
            proven = KNOWN_GAPS[name]
        elif name in rules:
            proven = "has a rule, not proven yet: no sample kernel uses it"
        elif is_aten(name):
            proven = "not lowered yet: no sample kernel uses it"
        else:
            proven = "not lowered yet: no rule"
        count = INVENTORY.get(name)
        uses = "" if count is None else count
        lines.append(f"| `{_cell(name)}` | {uses} | {_cell(mlir)} | {_cell(proven)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write docs/op-coverage.md (or the path given as the only argument)."""
    argv = sys.argv[1:] if argv is None else argv
    path = pathlib.Path(argv[0]) if argv else DOC
    torch.set_num_threads(1)
    text = render()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
