"""Where Helion's search starts on the CPU: seed configs for the `mlir` backend.

Helion's defaults are sized for a GPU (tiles of 16 and 32), and a quick search samples the
space rather than sweeping it, so some kinds of kernel often came back from it far from
their best. Each is recognised from the Device IR and seeded as Helion's own backends seed
theirs (compiler heuristics, `HEURISTICS_BY_BACKEND`): the search plants the seeds in its
first population and keeps them among its finalists, which its final timing decides
between. The contraction tiles' first seed is also the default config without a search
(`HELION_AUTOTUNE_EFFORT=none`), as Helion's GPU heuristics promote theirs: it depends on
the kernel and its shapes only, so a default config's MLIR stays the same bytes on every
machine (the column strips' width depends on the thread count: those stay seeds). Measured
on the bench (AMD Zen 4, 2 threads):

- A loop around dot products (attention's loop over keys, a batched matmul's K) in steps
  of 128 or 256 instead of 16: attention 15.2 -> 12.1 ms, bmm 11.4 -> 10.4.
- Contraction tiles of 64x64 outputs (a batch block left at 1) in K steps of 64 or 128,
  where Helion's 16x16 tiles leave the register tile one or two rows (AMD EPYC Zen 3, AVX2,
  in one process against eager): bmm 8x512^3 0.75 -> 0.93 of torch.bmm, attention 1x8x1024
  0.76 -> 1.01 of scaled_dot_product_attention. As the default (Intel Sapphire Rapids,
  AVX-512, in one process, Helion's default -> this seed, ms): matmul 1024^3 9.14 -> 6.36
  (torch.mm 6.22), bmm 8x512^3 8.86 -> 6.55 (6.44), attention 1x8x1024x64 10.76 -> 8.46
  (eager 9.38).
- Column strips: a grid over a tensor's contiguous dim whose programs loop over another
  (column sums) as one strip of columns per thread, a few rows a step: col_sum on 4096^2
  3.9 -> 2.2 ms (32x32 tiles against 2048 columns by 8 rows).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import helion
import torch
from helion._compiler.autotuner_heuristics import HEURISTICS_BY_BACKEND
from helion._compiler.autotuner_heuristics.common import clamp_block_size_targets
from helion._compiler.autotuner_heuristics.registry import AutotunerHeuristic
from helion._compiler.device_ir import ForLoopGraphInfo, ReductionLoopGraphInfo
from helion.language import load

LOOP_STEPS = (128, 256)  # a contraction loop's step, in elements of the looped dim
TILE = 64  # a contraction's rows and columns per program, for register tiles of 4-8 rows
TILE_STEPS = (64, 128)  # its loop's step with those tiles
STRIP_ROWS = (8, 4)  # rows a column strip reads per step
MAX_STRIP = 2048  # columns of one strip: 8 KB rows of f32


@dataclass(frozen=True)
class Blocks:
    """How a kernel's block ids tile it: those with a block size in the config, the grid's,
    the device loops' (sized ones: an `hl.grid` index or a rolled reduction's loop has
    none), and which of those loops' loads index a tensor's last (contiguous) dim or
    another dim with each."""

    sized: frozenset[int]
    grid: frozenset[int]
    loop: frozenset[int]
    innermost: frozenset[int]
    outer: frozenset[int]

    @staticmethod
    def of(env: Any, device_ir: Any) -> Blocks:
        grid = frozenset(bid for ids in device_ir.grid_block_ids for bid in ids)
        loops = [
            g
            for g in device_ir.graphs
            if isinstance(g, ForLoopGraphInfo) and not isinstance(g, ReductionLoopGraphInfo)
        ]
        sized = frozenset(env.config_spec.block_sizes.valid_block_ids())
        loop = frozenset(bid for g in loops for bid in g.block_ids if bid in sized) - grid
        innermost: set[int | None] = set()
        outer: set[int | None] = set()
        for index in _loop_load_indices(loops):
            ids = [_block_id(env, i) for i in index]
            innermost.update(ids[-1:])
            outer.update(ids[:-1])
        return Blocks(sized, grid, loop, _ids(innermost), _ids(outer))


def _ids(found: set[int | None]) -> frozenset[int]:
    return frozenset(bid for bid in found if bid is not None)


def _loop_load_indices(loops: list[Any]) -> Iterator[list[Any]]:
    for graph in loops:
        for node in graph.graph.find_nodes(op="call_function", target=load):
            yield list(node.args[1])


def _block_id(env: Any, index: Any) -> int | None:
    """The block id whose tile indexes this dim (its size symbol), else None."""
    value = getattr(index, "meta", {}).get("val")
    if not isinstance(value, torch.SymInt):
        return None
    expr = value.node.expr
    return next((b.block_id for b in env.block_sizes if b.var.node.expr == expr), None)


def _with_blocks(env: Any, targets: dict[int, int]) -> helion.Config | None:
    """Helion's own default config (not a promoted seed) with these block ids' sizes, each
    clamped to what the config space allows (a power of two within its dim); None where
    one cannot be."""
    spec = env.config_spec
    ids = sorted(targets)
    sizes = clamp_block_size_targets(
        env, [(bid, spec.block_sizes.block_id_lookup(bid).size_hint, targets[bid]) for bid in ids]
    )
    if sizes is None:
        return None
    config = dict(spec.autotune_reference_config().config)
    block_sizes = list(config["block_sizes"])
    for bid, size in zip(ids, sizes):
        block_sizes[spec.block_sizes.block_id_to_index(bid)] = size
    return helion.Config(**{**config, "block_sizes": block_sizes})


class CPUSeeds(AutotunerHeuristic):
    """A family of seeds: `seeds` says which configs, `applies` when."""

    @classmethod
    def applies(cls, env: Any, blocks: Blocks) -> bool:
        raise NotImplementedError

    @classmethod
    def seeds(cls, env: Any, blocks: Blocks) -> list[dict[int, int]]:
        raise NotImplementedError

    @classmethod
    def is_eligible(cls, env: Any, device_ir: Any) -> bool:
        """Always: `get_seed_configs` reads the kernel's tiling once and returns no seed
        where the family does not apply (Helion records only heuristics with seeds)."""
        return True

    @classmethod
    def get_seed_configs(cls, env: Any, device_ir: Any) -> list[helion.Config]:
        blocks = Blocks.of(env, device_ir)
        if not cls.applies(env, blocks):
            return []
        found = (_with_blocks(env, targets) for targets in cls.seeds(env, blocks))
        return list(dict.fromkeys(config for config in found if config is not None))


class ContractionLoopSteps(CPUSeeds):
    """Loops around dot products in long steps: each step's dots run longer between the
    loop's own work (an online softmax's rescale, the accumulator's carry)."""

    name = "mlir_contraction_loop_steps"

    @classmethod
    def applies(cls, env: Any, blocks: Blocks) -> bool:
        return bool(env.config_spec.matmul_facts) and bool(blocks.loop)

    @classmethod
    def seeds(cls, env: Any, blocks: Blocks) -> list[dict[int, int]]:
        return [dict.fromkeys(blocks.loop, step) for step in LOOP_STEPS]


class ContractionTiles(CPUSeeds):
    """Dot products over 64x64 output tiles (a batch dim's block left at its default of 1)
    in steps of 64 or 128: Helion's 16x16 tiles give the register tile one or two rows,
    and each program packs a B strip for 256 outputs. The first (steps of 64) is the
    default config."""

    name = "mlir_contraction_tiles"
    promote_seed_to_default = True

    @classmethod
    def applies(cls, env: Any, blocks: Blocks) -> bool:
        return bool(env.config_spec.matmul_facts) and bool(_wide_grid(env, blocks))

    @classmethod
    def seeds(cls, env: Any, blocks: Blocks) -> list[dict[int, int]]:
        tiles = dict.fromkeys(_wide_grid(env, blocks), TILE)
        return [{**tiles, **dict.fromkeys(blocks.loop, step)} for step in TILE_STEPS]


def _wide_grid(env: Any, blocks: Blocks) -> list[int]:
    """The grid's sized blocks whose default is more than one row (not a batch's)."""
    spec = env.config_spec
    default = spec.autotune_reference_config().config["block_sizes"]
    return [
        bid
        for bid in sorted(blocks.grid & blocks.sized)
        if default[spec.block_sizes.block_id_to_index(bid)] > 1
    ]


class ColumnStrips(CPUSeeds):
    """A grid over a contiguous dim, its programs looping over another: a strip of columns
    per thread, read a few whole rows a step, streams where 32x32 tiles hop between rows."""

    name = "mlir_column_strips"

    @classmethod
    def applies(cls, env: Any, blocks: Blocks) -> bool:
        spec = env.config_spec
        return (
            not spec.matmul_facts
            and len(spec.reduction_loops) == 0
            and len(blocks.grid) == 1
            and blocks.grid <= blocks.innermost & blocks.sized
            and bool(blocks.loop)
            and blocks.loop <= blocks.outer - blocks.innermost
        )

    @classmethod
    def seeds(cls, env: Any, blocks: Blocks) -> list[dict[int, int]]:
        (column,) = blocks.grid
        size = env.config_spec.block_sizes.block_id_lookup(column).size_hint
        width = min(MAX_STRIP, max(1, size // torch.get_num_threads()))
        return [{column: width, **dict.fromkeys(blocks.loop, rows)} for rows in STRIP_ROWS]


SEEDS: tuple[type[CPUSeeds], ...] = (ContractionTiles, ContractionLoopSteps, ColumnStrips)


def register(backend: str) -> None:
    """Helion plants these seeds for every kernel of `backend` it binds."""
    HEURISTICS_BY_BACKEND[backend] = SEEDS
