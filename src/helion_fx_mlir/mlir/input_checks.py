"""Checks on input MLIR that MLIR itself does not make, run before any pass.

Each guards against input that would otherwise crash the process rather than fail:
bytes that are not UTF-8, nesting deep enough to overflow the parser's stack, block
sizes our rewrites divide by, affine maps that divide by a constant that is not positive
(canonicalization folds them to poison loop bounds, then crashes), dtype codes torch-mlir
aborts on. Problems come back as
(location, message) pairs so that each driver reports them in its own form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from torch_mlir import ir

from helion_fx_mlir.mlir.walk import ops_where

# MLIR's recursive-descent parser overflows an 8 MB stack at a few thousand levels; real
# kernels nest a few dozen deep.
MAX_NESTING = 1000
BLOCK_SIZE_PREFIX = "loom.block_size_"
# torch ScalarType codes torch-mlir's getTypeForScalarType maps (others abort the process):
# integers, floats, complex, bool, quantized ints, bfloat16, the float8 and float4 types.
KNOWN_DTYPE_CODES = frozenset([*range(16), 23, 24, 25, 26, 28, 44, 45])
DTYPE_OPERANDS = ("dtype", "out_dtype")
# Our IRDL ops (helion.phi, loom.get_symbol) have only the generic form; their custom form
# fails to parse without a diagnostic, so the driver finds it itself.
_CUSTOM_FORM = re.compile(
    r"^\s*(?:%[^=\n]*=\s*)?((?:helion|loom)\.[A-Za-z_]\w*)(?!\s*=)", re.MULTILINE
)
_TENSOR_SHAPE = re.compile(r"^!torch\.(?:v)?tensor<\[([^\]]*)\]")
_NESTING_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[\[{(<]|[\]})>]')


@dataclass(frozen=True)
class TextProblem:
    """A problem found in the text before parsing: 1-based line and column."""

    line: int
    col: int
    message: str


def decode(data: bytes) -> str | TextProblem:
    """The text, or where its first byte that is not UTF-8 is."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + 1
        col = len(data[line_start : err.start].decode("utf-8", errors="replace")) + 1
        return TextProblem(
            line, col, f"invalid UTF-8 byte 0x{data[err.start]:02x}; MLIR text must be UTF-8"
        )


def nesting_problem(text: str, limit: int = MAX_NESTING) -> TextProblem | None:
    """Where brackets (outside strings and comments) first nest deeper than `limit`."""
    depth = 0
    for match in _NESTING_TOKEN.finditer(text):
        token = match.group()
        if token in "[{(<":
            depth += 1
            if depth > limit:
                return _problem_at(
                    text, match.start(), f"nesting deeper than {limit} levels is not supported"
                )
        elif token in "]})>":
            depth = max(depth - 1, 0)
    return None


def text_problem(text: str) -> TextProblem | None:
    """The first problem of the text that would crash the parser or its diagnostics."""
    return nesting_problem(text) or escape_problem(text)


_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')
_HEX_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2})|\\.")


def escape_problem(text: str) -> TextProblem | None:
    """Where a string literal's `\\XX` escapes spell bytes that are not UTF-8. MLIR keeps
    them, but the bindings cannot hand such a string (or a diagnostic quoting it) to Python."""
    for match in _STRING_OR_COMMENT.finditer(text):
        literal = match.group()
        if not literal.startswith('"') or "\\" not in literal:
            continue
        data = _escaped_bytes(literal[1:-1])
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return _problem_at(
                text,
                match.start(),
                "this string's escapes spell bytes that are not UTF-8; MLIR strings must be UTF-8",
            )
    return None


def _escaped_bytes(body: str) -> bytes:
    """A string literal's bytes: `\\XX` is byte XX, other characters their UTF-8."""
    data, pos = bytearray(), 0
    for escape in _HEX_ESCAPE.finditer(body):
        data += body[pos : escape.start()].encode()
        data += bytes.fromhex(escape.group(1)) if escape.group(1) else escape.group().encode()
        pos = escape.end()
    return bytes(data + body[pos:].encode())


def _problem_at(text: str, offset: int, message: str) -> TextProblem:
    line = text.count("\n", 0, offset) + 1
    return TextProblem(line, offset - (text.rfind("\n", 0, offset) + 1) + 1, message)


def unlocated_parse_failure(text: str) -> TextProblem:
    """Where a parse that MLIR failed without a diagnostic went wrong: the first of our
    ops in custom form, else the start of the input."""
    match = _CUSTOM_FORM.search(text)
    if match is None:
        return TextProblem(1, 1, "the MLIR parser failed here or below without saying where")
    return _problem_at(
        text,
        match.start(1),
        f"'{match.group(1)}' has no custom assembly form; write it in the "
        f'generic form, e.g. %0 = "{match.group(1)}"(...) : (...) -> ...',
    )


def module_problems(module: ir.Module) -> list[tuple[ir.Location, str]]:
    """What our rewrites and torch-mlir rely on in a parsed module, where it does not hold."""
    return [
        *_block_size_problems(module),
        *_affine_divisor_problems(module),
        *_torch_operand_problems(module),
    ]


def _block_size_problems(module: ir.Module) -> Iterator[tuple[ir.Location, str]]:
    """Every loom.block_size_* a positive integer: tiling divides by it."""
    op = module.operation
    for name in op.attributes:
        if name.startswith(BLOCK_SIZE_PREFIX):
            value = integer_value(op.attributes[name])
            if value is None or value <= 0:
                yield (
                    op.location,
                    f"module attribute '{name}' must be a positive integer, "
                    f"got {op.attributes[name]}",
                )


def _affine_divisor_problems(module: ir.Module) -> list[tuple[ir.Location, str]]:
    """Affine maps in op attributes (affine.apply, affine.for bounds, indexing maps) whose
    floordiv, ceildiv or mod takes a constant that is not positive: MLIR's affine
    semantics require a positive divisor, and folding one crashes the canonicalizer."""
    found: list[tuple[ir.Location, str]] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        for name in op.attributes:
            for amap in _affine_maps(op.attributes[name]):
                divisor = _bad_divisor(amap)
                if divisor is not None:
                    found.append(
                        (
                            op.location,
                            f"'{op.name}' has affine map {amap} with divisor {divisor}; "
                            "floordiv, ceildiv and mod need a positive constant",
                        )
                    )
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _affine_maps(attr: ir.Attribute) -> Iterator[ir.AffineMap]:
    """The affine maps in an attribute, inside arrays and dictionaries too."""
    if isinstance(attr, ir.AffineMapAttr):
        yield attr.value
    elif isinstance(attr, ir.ArrayAttr):
        for element in attr:
            yield from _affine_maps(element)
    elif isinstance(attr, ir.DictAttr):
        for index in range(len(attr)):
            yield from _affine_maps(attr[index].attr)


_DIVISIONS = (ir.AffineFloorDivExpr, ir.AffineCeilDivExpr, ir.AffineModExpr)


def _bad_divisor(amap: ir.AffineMap) -> int | None:
    """The first constant divisor below 1 in the map's results, else None."""
    pending = list(amap.results)
    while pending:
        expr = pending.pop()
        if (
            isinstance(expr, _DIVISIONS)
            and isinstance(expr.rhs, ir.AffineConstantExpr)
            and expr.rhs.value < 1
        ):
            return expr.rhs.value
        if isinstance(expr, ir.AffineBinaryExpr):
            pending += [expr.lhs, expr.rhs]
    return None


def integer_value(attr: ir.Attribute) -> int | None:
    """The integer of an IntegerAttr (any width, index included), else None."""
    if not isinstance(attr, ir.IntegerAttr):
        try:
            attr = ir.IntegerAttr(attr)
        except ValueError:
            return None
    return attr.value


def _torch_operand_problems(module: ir.Module) -> Iterator[tuple[ir.Location, str]]:
    """torch ops with a constant dtype code torch-mlir cannot map (it aborts), or a
    constant dim outside their tensor's rank (the conversion fails at no location)."""
    for op in _torch_ops(module):
        for name in DTYPE_OPERANDS:
            code = _constant_int(_operand(op, name))
            if code is not None and code not in KNOWN_DTYPE_CODES:
                yield (
                    op.location,
                    f"'{op.operation.name}' has dtype code {code}, "
                    "which is not a torch dtype torch-mlir supports",
                )
        yield from _dim_problems(op)


def _dim_problems(op: ir.OpView) -> Iterator[tuple[ir.Location, str]]:
    """A dim counts in the larger of the input and result ranks (unsqueeze may name the new one)."""
    ranks = [
        r for r in (_rank(_operand(op, "self_")), *(_rank(r) for r in op.results)) if r is not None
    ]
    if not ranks or _rank(_operand(op, "self_")) is None:
        return
    rank = max(ranks)
    for dim in _constant_ints(_operand(op, "dim")):
        if not -max(rank, 1) <= dim < max(rank, 1):
            yield (
                op.location,
                f"'{op.operation.name}' has dim {dim}, out of range for a tensor of rank {rank}",
            )


def _rank(value: object) -> int | None:
    """The rank of a !torch.vtensor<[...],dtype> value, None when unknown."""
    match = _TENSOR_SHAPE.match(str(value.type)) if isinstance(value, ir.Value) else None
    if match is None:
        return None
    return len(match.group(1).split(",")) if match.group(1).strip() else 0


def _constant_ints(value: object) -> list[int]:
    """A constant int operand, or the constant ints of a prim.ListConstruct."""
    single = _constant_int(value)
    if single is not None:
        return [single]
    if not isinstance(value, ir.Value) or not isinstance(value.owner, ir.OpView):
        return []
    owner = value.owner.operation
    if owner.name != "torch.prim.ListConstruct":
        return []
    return [v for v in map(_constant_int, owner.operands) if v is not None]


def _torch_ops(module: ir.Module) -> list[ir.OpView]:
    return [op.opview for op in ops_where(module, lambda op: op.name.startswith("torch."))]


def _operand(op: ir.OpView, name: str) -> object:
    """The named operand, or None where the op has none (or its operands are malformed)."""
    try:
        return getattr(op, name, None)
    except (IndexError, ValueError):
        return None


def _constant_int(value: object) -> int | None:
    """The value of a `torch.constant.int` operand; None for anything else."""
    if not isinstance(value, ir.Value) or not isinstance(value.owner, ir.OpView):
        return None
    owner = value.owner.operation
    if owner.name != "torch.constant.int":
        return None
    return integer_value(owner.attributes["value"])
