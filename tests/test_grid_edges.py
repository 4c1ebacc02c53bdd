"""Grids whose last row or column of tiles is partial run as the grid of whole tiles and
the edges' grids (`grid_edges.py`), the edges' matmuls over their valid rows and columns
only (`trimmed_accumulators.py`); every program's values are evaluated, not assumed
(`grid_values.py`). The results still match eager, with and without bounds checks."""

from __future__ import annotations

import re

import helion
import pytest
import torch
from torch_mlir import ir

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.grid_values import GridValues
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.grid_groups import target_threads
from helion_fx_mlir.passes.pipelines import LINALG, apply
from helion_fx_mlir.tools.eager_reference import eager_reference

# Shapes no block size below divides, along every dim.
SHAPES = {
    "matmul": ((100, 72), (72, 84)),
    "bmm": ((3, 40, 72), (3, 72, 36)),
    "add": ((100, 84), (100, 84)),
}
CONFIGS = {
    "matmul": [helion.Config(block_sizes=[32, 32, 32]), helion.Config(block_sizes=[16, 64, 16])],
    "bmm": [helion.Config(block_sizes=[1, 16, 16, 32]), helion.Config(block_sizes=[2, 32, 8, 16])],
    "add": [helion.Config(block_sizes=[32, 32]), helion.Config(block_sizes=[16, 64])],
}
CASES = [
    pytest.param(name, dtype, config, id=f"{name}-{str(dtype)[6:]}-{i}")
    for name in SHAPES
    for dtype in (torch.float32, torch.bfloat16)
    for i, config in enumerate(CONFIGS[name])
]


def _args(name: str, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return tuple(torch.randn(*shape, dtype=dtype) for shape in SHAPES[name])


def _linalg(name: str, dtype: torch.dtype, config: helion.Config) -> ir.Module:
    """The kernel's linalg module, its grids shared by 2 threads (the split needs as many
    programs before an edge)."""
    bound = EXAMPLES[name].kernel.bind(_args(name, dtype))
    module = apply(parse_module(generate_mlir(bound, config=config)), LINALG)
    target_threads(module, 2)
    return module


def _split_module(name: str, dtype: torch.dtype, config: helion.Config) -> str:
    return str(apply(_linalg(name, dtype, config), ("helion-split-grid-edges",)))


@pytest.mark.parametrize(("name", "dtype", "config"), CASES)
@pytest.mark.parametrize("bounds_checks", [False, True], ids=["fast", "checked"])
def test_split_grids_match_eager(
    name: str, dtype: torch.dtype, config: helion.Config, bounds_checks: bool
) -> None:
    assert _split_module(name, dtype, config).count("scf.forall (") > 1
    example = EXAMPLES[name]
    args = _args(name, dtype)
    kernel = compile_kernel(example.kernel.bind(args), config=config, bounds_checks=bounds_checks)
    tolerance = 2e-2 if dtype == torch.bfloat16 else None
    torch.testing.assert_close(
        kernel(*args), example.reference(*args), rtol=tolerance, atol=tolerance
    )


def test_edge_matmuls_take_their_valid_rows_only() -> None:
    """100 rows in 32-row blocks: the last row of programs multiplies 4 rows, not 32."""
    module = _linalg("matmul", torch.float32, CONFIGS["matmul"][0])
    passes = ("helion-split-grid-edges", "helion-fold-accumulations", "helion-fuse-elementwise")
    text = str(
        apply(module, (*passes, "helion-fold-accumulations", "helion-trim-padded-accumulators"))
    )
    edge = r"linalg.matmul ins\(.*\) outs\(%\w+ : tensor<4x32xf32>\) -> tensor<4x32xf32>"
    assert re.search(edge, text)
    assert re.search(edge.replace("4x32", "4x20"), text)  # the corner


@pytest.mark.parametrize(("batches", "grids"), [(21, 2), (32, 1)])
def test_a_dimension_of_two_programs_splits_where_its_tile_is_partial(
    batches: int, grids: int
) -> None:
    """A batch of 21 in blocks of 16 (two programs, the second 5 deep): the first program's
    tiles are whole, the second's static (every program padded a dynamic 3-D copy before).
    A batch of 32 (both whole) does not split along it: there the offset changes, not the
    size. Columns and rows divide their blocks; as reference mode computes, in bounds."""
    torch.manual_seed(0)
    args = (torch.randn(batches, 32, 64), torch.randn(64))
    bound = EXAMPLES["bias_add_3d"].kernel.bind(args)
    config = helion.Config(block_sizes=[16, 16, 32])
    module = apply(parse_module(generate_mlir(bound, config=config)), LINALG)
    target_threads(module, 2)
    split = str(apply(module, ("helion-split-grid-edges",)))
    assert split.count("scf.forall (") == grids and "affine.min" not in split
    expected = eager_reference(EXAMPLES["bias_add_3d"].kernel)(*args)
    for checks in (False, True):
        got = compile_kernel(bound, config=config, bounds_checks=checks)(*args)
        torch.testing.assert_close(got, expected)


def test_grids_whose_loops_carry_several_tiles_stay_whole() -> None:
    """Attention's loop carries its running max, sum and accumulator: not split (static,
    their unit dims would fold into reshapes and each step allocate its tiles anew)."""
    example = EXAMPLES["attention"]
    torch.manual_seed(0)
    args = tuple(torch.randn(1, 2, 100, 32) for _ in range(3))
    config = helion.Config(block_sizes=[1, 16, 16])
    module = apply(parse_module(generate_mlir(example.kernel.bind(args), config=config)), LINALG)
    target_threads(module, 2)
    assert str(apply(module, ("helion-split-grid-edges",))).count("scf.forall (") == 1
    got = compile_kernel(example.kernel.bind(args), config=config)(*args)
    torch.testing.assert_close(got, example.reference(*args), rtol=1e-4, atol=1e-4)


def _grid_values(module: ir.Module) -> tuple[GridValues, list[ir.Value]]:
    """The values of the module's one grid and its body's results, in order."""
    function = module.body.operations[0].regions[0].blocks[0]
    grid = next(op for op in function.operations if op.name == "scf.forall")
    body = grid.regions[0].blocks[0]
    trips = list(ir.DenseI64ArrayAttr(grid.attributes["staticUpperBound"]))
    results = [op.results[0] for op in body.operations if len(op.results)]
    return GridValues(list(body.arguments), [range(t) for t in trips]), results


GRID = """
func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  scf.forall (%i, %j) in (3, 5) {
    %size = affine.min affine_map<(d0) -> (d0 * -16 + 40, 16)>(%i)
    %short = arith.cmpi slt, %size, %c8 : index
    %both = arith.addi %size, %j : index
    %quarter = arith.divui %j, %c0 : index
    %dynamic = arith.addi %n, %j : index
    %rest = arith.remsi %both, %c8 : index
  }
  return
}
"""


def test_grid_values_are_evaluated_on_every_program() -> None:
    with mlir_context():
        module = parse_module(GRID)  # alive while its values are
        values, (size, short, both, *_) = _grid_values(module)
        assert values.of(size).items == (16, 16, 8)
        assert values.uniform(short) == 0
        assert values.uniform(size) is None
        assert values.of(both).shape == (3, 5)
        assert values.changes_last(size, 0)
        assert not values.changes_last(size, 1)
        assert not values.changes_last(both, 1)  # changes all along the second id


def test_grid_values_left_unknown_are_none() -> None:
    """A division by zero or a function argument: no value, never a guess."""
    with mlir_context():
        module = parse_module(GRID)
        values, (*_, quarter, dynamic, rest) = _grid_values(module)
        assert values.of(quarter) is None
        assert values.of(dynamic) is None
        assert values.of(rest).items[:5] == (0, 1, 2, 3, 4)
