"""Tiles that Device IR cannot tell apart: an outer tile used inside a loop over the same
block size (`hl.tile(n, block_size=bs)` nested in a loop over the same registered `bs`).

Helion traces both tiles to one block id, so in Device IR a subscript by the outer tile
inside the inner loop is the inner loop's tile (what Helion's compiled backends read),
while its reference mode reads the outer tile. Lowering either would return numbers the
other contradicts without a word, so such a kernel is refused, at the use."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from helion._compiler.type_propagation import TileIndexType


@dataclass(frozen=True)
class AmbiguousTile:
    """A load of `name`, the tile of an enclosing loop over `block_id`, inside a loop that
    tiles the same block id again."""

    name: str
    block_id: int
    lineno: int


def _lineno(node: ast.Name) -> int:
    """The node's line in the kernel's file (Helion's AST counts from the function)."""
    line: int = getattr(getattr(node, "_location", None), "lineno", None) or node.lineno
    return line


def _tile_block(node: ast.AST) -> int | None:
    info = getattr(node, "_type_info", None)
    return info.block_id if isinstance(info, TileIndexType) else None


def _loop_tiles(loop: ast.For) -> dict[str, int]:
    """The loop's target names and the block id each tiles (from their typed uses)."""
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    return {
        node.id: block
        for stmt in loop.body
        for node in ast.walk(stmt)
        if isinstance(node, ast.Name)
        and node.id in targets
        and (block := _tile_block(node)) is not None
    }


def _ambiguous(stmts: list[ast.stmt], outer: dict[str, int]) -> Iterator[AmbiguousTile]:
    """Uses, in `stmts`, of tiles bound by enclosing loops (`outer`) whose block id an
    inner loop between the binding and the use tiles again."""
    for stmt in stmts:
        for loop in (n for n in ast.walk(stmt) if isinstance(n, ast.For)):
            own = _loop_tiles(loop)
            shadowed = {
                name: block
                for name, block in outer.items()
                if name not in own and block in own.values()
            }
            for node in (n for s in loop.body for n in ast.walk(s)):
                if not isinstance(node, ast.Name):
                    continue
                block = _tile_block(node)
                if block is not None and shadowed.get(node.id) == block:
                    yield AmbiguousTile(node.id, block, _lineno(node))


def ambiguous_tiles(host_body: list[ast.stmt]) -> list[AmbiguousTile]:
    """Every ambiguous tile use in the kernel, in source order, once per line and name."""
    found: dict[tuple[int, str], AmbiguousTile] = {}
    for loop in (n for stmt in host_body for n in ast.walk(stmt) if isinstance(n, ast.For)):
        for use in _ambiguous(loop.body, _loop_tiles(loop)):
            found.setdefault((use.lineno, use.name), use)
    return sorted(found.values(), key=lambda use: (use.lineno, use.name))


def reason(use: AmbiguousTile) -> str:
    """The error's text: what is ambiguous, and the fix."""
    return (
        f"tile '{use.name}' is used inside a loop that tiles its block size (block id "
        f"{use.block_id}) again: Helion traces both tiles to one block id, so its compiled "
        f"code reads the inner loop's tile where its reference mode reads '{use.name}'. "
        "Give the inner loop its own block size (another hl.register_block_size)"
    )


def node_at(graphs: list[Any], lineno: int) -> Any:
    """The first FX node traced from kernel line `lineno` that takes a tile (the error
    names it), else None."""
    for graph in graphs:
        for node in graph.graph.nodes:
            location = node.meta.get("location")
            if getattr(location, "lineno", None) == lineno and any(
                isinstance(arg.meta.get("val"), torch.SymInt) for arg in node.all_input_nodes
            ):
                return node
    return None
