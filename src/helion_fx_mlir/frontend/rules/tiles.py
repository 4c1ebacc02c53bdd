"""Rules for tile attributes: indices, begin/end, id and block size of a tile."""

from __future__ import annotations

from helion.language import tile_ops

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.rule_context import RuleContext
from helion_fx_mlir.frontend.values import Value, element_type, mlir_type


@lowers(tile_ops.tile_index)
def tile_index(cx: RuleContext) -> Value:
    """tensor.generate of begin + i over the tile's width (its global indices).

    Lanes past the extent are masked where they are used (gathers, stores)."""
    node = cx.node
    tile = cx.tile(node.args[0])
    ty = mlir_type(cx.meta(node))
    dynamic = [cx.as_index(tile.width)] if "?" in ty else []
    elt = element_type(ty)
    ssa = cx.builder.fresh(node.name)
    i, pos = cx.builder.fresh(f"{node.name}_i"), cx.builder.fresh(f"{node.name}_pos")
    cast = cx.builder.fresh(f"{node.name}_elt")
    body = [
        f"{pos} = arith.addi {cx.as_index(tile.offset)}, {i} : index",
        f"{cast} = arith.index_cast {pos} : index to {elt}",
        f"tensor.yield {cast} : {elt}",
    ]
    cx.builder.generate(ssa, dynamic, [i], body, ty)
    return Value(ssa, ty)


@lowers(tile_ops.tile_begin, tile_ops.tile_end, tile_ops.tile_id)
def tile_attribute(cx: RuleContext) -> Value:
    """index arith: begin = offset, end = offset + size, id = offset floordiv block."""
    node = cx.node
    return Value(cx.index_value(node.meta["val"].node.expr), "index")


@lowers(tile_ops.tile_count)
def tile_count(cx: RuleContext) -> Value:
    """The trip count of the tile's loop: ceildiv(end - begin, block)."""
    node = cx.node
    tile = cx.tile_of(node.args[0])
    if tile is None or tile.count is None:
        raise LoweringError(node, "tile.count of a tile without its loop here is not supported")
    return Value(tile.count, "index")


@lowers(tile_ops.tile_block_size)
def tile_block_size(cx: RuleContext) -> Value:
    """The block size (loom.get_symbol), also on a partial last tile."""
    node = cx.node
    origin = cx.origin(node.args[0].meta["val"].node.expr)
    return Value(cx.configured_block_size(origin.block_id), "index")
