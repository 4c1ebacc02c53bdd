"""Rules for tile attributes: indices, begin/end, id and block size of a tile."""

from __future__ import annotations

from typing import TYPE_CHECKING

from helion.language import tile_ops
from torch import fx

from helion_fx_mlir.errors import LoweringError
from helion_fx_mlir.frontend.dispatch import lowers
from helion_fx_mlir.frontend.symbols import emit_expr
from helion_fx_mlir.frontend.values import Value, element_type, mlir_type

if TYPE_CHECKING:
    from helion_fx_mlir.frontend.visitor import IRVisitor


@lowers(tile_ops.tile_index)
def tile_index(v: IRVisitor, node: fx.Node) -> Value:
    """tensor.generate of begin + i over the tile's width (its global indices).

    Lanes past the extent are masked where they are used (gathers, stores)."""
    tile = v.tile_of(node.args[0])
    ty = mlir_type(v.val(node))
    dynamic = v.as_index(tile.width) if "?" in ty else ""
    elt = element_type(ty)
    ssa = v.builder.fresh(node.name)
    i, pos = v.builder.fresh(f"{node.name}_i"), v.builder.fresh(f"{node.name}_pos")
    cast = v.builder.fresh(f"{node.name}_elt")
    v.builder.emit(
        f"{ssa} = tensor.generate {dynamic} {{\n"
        f"^bb0({i}: index):\n"
        f"  {pos} = arith.addi {v.as_index(tile.offset)}, {i} : index\n"
        f"  {cast} = arith.index_cast {pos} : index to {elt}\n"
        f"  tensor.yield {cast} : {elt}\n"
        f"}} : {ty}"
    )
    return Value(ssa, ty)


@lowers(tile_ops.tile_begin, tile_ops.tile_end, tile_ops.tile_id)
def tile_attribute(v: IRVisitor, node: fx.Node) -> Value:
    """index arith: begin = offset, end = offset + size, id = offset floordiv block."""
    return Value(emit_expr(v, node.meta["val"].node.expr), "index")


@lowers(tile_ops.tile_count)
def tile_count(v: IRVisitor, node: fx.Node) -> Value:
    """The trip count of the tile's loop: ceildiv(end - begin, block)."""
    tile = v.tile_of(node.args[0])
    if tile is None or tile.count is None:
        raise LoweringError(node, "tile.count of a tile without its loop here is not supported")
    return Value(tile.count, "index")


@lowers(tile_ops.tile_block_size)
def tile_block_size(v: IRVisitor, node: fx.Node) -> Value:
    """The block size (loom.get_symbol), also on a partial last tile."""
    origin = v.ctx.origin(node.args[0].meta["val"].node.expr)
    return Value(v.block_size_ssa[origin.block_id], "index")
