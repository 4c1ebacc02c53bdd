"""MLIRBuilder: indented MLIR text emission with stable SSA names, plus type and literal helpers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context

_ELEMENT_TYPES: dict[torch.dtype, str] = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "i8",
    torch.bool: "i1",
    torch.float8_e4m3fn: "f8E4M3FN",
    torch.float8_e5m2: "f8E5M2",
}


def torch_dtype_to_mlir_element_type(dtype: torch.dtype) -> str:
    """MLIR builtin element type of a torch dtype (signless integers, as linalg wants)."""
    try:
        return _ELEMENT_TYPES[dtype]
    except KeyError:
        raise TypeError(f"dtype {dtype} has no MLIR element type here") from None


def is_concrete_size(size: object) -> bool:
    """True for sizes known at trace time (ints), False for SymInts."""
    return isinstance(size, int) and not isinstance(size, bool)


def format_tensor_type(shape: Sequence[object], element_type: str) -> str:
    """tensor<4x?xf32>: concrete sizes print as numbers, symbolic ones as '?'."""
    dims = "".join(f"{s if is_concrete_size(s) else '?'}x" for s in shape)
    return f"tensor<{dims}{element_type}>"


def ssa_identifier(name: str) -> str:
    """A readable SSA name for any Python expression naming a value: a closure's captured
    value `epilogue.__closure__[0].cell_contents` is `epilogue_closure0`."""
    name = re.sub(r"\.__closure__\[(\d+)\]\.cell_contents", r"_closure\1", name)
    name = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "v"
    return f"v{name}" if name[0].isdigit() else name


def format_scalar(value: object, dtype: torch.dtype) -> str:
    """The value of a scalar constant of `dtype` as `MLIRBuilder.constant` reads it."""
    if dtype == torch.bool:
        return "true" if value else "false"
    if dtype.is_floating_point:
        return repr(float(value))
    return str(int(value))


def literal(value: bool | int | float | str, mlir_type: str) -> str:
    """The typed attribute text MLIR's own printer writes for `value` ('0x7F800000 : f32',
    '9.99999974E-6 : f32', 'true', '3 : index'): every MLIR parser reads it back, while
    Python spellings ('inf', '1e-05', 'true : i1') are not MLIR. A str is a Python literal
    ('inf', '-0.0', '7') or 'true'/'false'."""
    with mlir_context(), ir.Location.unknown():
        ty = ir.Type.parse(mlir_type)
        if isinstance(ty, ir.FloatType):
            return str(ir.FloatAttr.get(ty, float(value)))
        return str(ir.IntegerAttr.get(ty, _integer(value, ty)))


def _integer(value: bool | int | str, ty: ir.Type) -> int:
    """An integer checked against the type's width: the bindings would silently wrap it."""
    word = {"true": 1, "false": 0}.get(value) if isinstance(value, str) else None
    number = int(value) if word is None else word
    if isinstance(ty, ir.IndexType):
        return number
    width = ir.IntegerType(ty).width
    if width == 1:
        return int(bool(number))
    if not -(1 << (width - 1)) <= number < (1 << width):
        raise ValueError(f"{value} does not fit in {ty}")
    return number


@dataclass
class MLIRBuilder:
    """Accumulates MLIR lines; hands out unique SSA names derived from FX node names."""

    indent_unit: str = "  "
    lines: list[str] = field(default_factory=list)
    depth: int = 0
    _used: set[str] = field(default_factory=set)
    _prologue_at: int = 0
    _prologue_depth: int = 0
    _hoisted: dict[str, str] = field(default_factory=dict)
    debug_info: bool = False  # append loc("file":line:col) to every op
    location: str | None = None  # the location of the ops emitted now
    _open_locations: list[str | None] = field(default_factory=list)
    _func_location: str | None = None
    _func: tuple[str, list[tuple[str, str]], list[str], int, int] = ("", [], [], 0, 0)

    def emit(self, text: str) -> None:
        for line in text.splitlines():
            self.lines.append(
                f"{self.indent_unit * self.depth}{line}{self._loc_suffix(line.strip())}"
            )

    def _loc_suffix(self, line: str) -> str:
        """' loc(...)' for an op line when debug info is on. A region op's location goes
        after its closing brace, so openings push it and closings pop it."""
        if not self.debug_info or not line or line.startswith("^"):
            return ""
        if line.endswith("{"):
            if not line.startswith("}"):  # '} else {' / '} do {' continue the same op
                self._open_locations.append(self.location)
            return ""
        location = self._open_locations.pop() if line.startswith("}") else self.location
        return f" {location}" if location else ""

    def push(self) -> None:
        self.depth += 1

    def pop(self) -> None:
        self.depth -= 1

    def fresh(self, hint: str) -> str:
        """'%hint', or '%hint_N' if taken: names stay readable and unique per function."""
        base = ssa_identifier(hint)
        name, n = base, 0
        while name in self._used:
            n += 1
            name = f"{base}_{n}"
        self._used.add(name)
        return f"%{name}"

    def reserve(self, ssa: str) -> str:
        """Mark a name another printer chose as taken, so fresh() never hands it out."""
        if ssa.lstrip("%") in self._used:
            raise ValueError(f"SSA name {ssa} is already in use")
        self._used.add(ssa.lstrip("%"))
        return ssa

    def hoist(self, rhs: str, hint: str) -> str:
        """A func-level value (constant, argument dim) defined once at the top of the body."""
        if rhs not in self._hoisted:
            name = self.fresh(hint)
            suffix = f" {self._func_location}" if self.debug_info and self._func_location else ""
            self.lines.insert(
                self._prologue_at,
                f"{self.indent_unit * self._prologue_depth}{name} = {rhs}{suffix}",
            )
            self._prologue_at += 1
            self._hoisted[rhs] = name
        return self._hoisted[rhs]

    def constant(self, value: bool | int | float | str, mlir_type: str, hint: str) -> str:
        """A hoisted arith.constant; the literal is printed by the bindings (see `literal`)."""
        return self.hoist(f"arith.constant {literal(value, mlir_type)}", hint)

    def index(self, value: int) -> str:
        return self.constant(value, "index", f"c{value}" if value >= 0 else f"c_neg{-value}")

    def emit_module_start(self, attrs: dict[str, str]) -> None:
        body = ", ".join(f"{k} = {v}" for k, v in attrs.items())
        self.emit(f"module attributes {{{body}}} {{")
        self.push()

    def emit_module_end(self) -> None:
        self.pop()
        self.emit("}")

    def emit_func_start(
        self, name: str, args: Sequence[tuple[str, str]], results: Sequence[str]
    ) -> None:
        for ssa, _ in args:
            self._used.add(ssa.lstrip("%"))
        self._func = (name, list(args), list(results), len(self.lines), self.depth)
        self._func_location = self.location
        self.emit(self._func_header())
        self.push()
        self._prologue_at = len(self.lines)
        self._prologue_depth = self.depth

    def add_func_arg(self, hint: str, mlir_type: str) -> str:
        """A func argument found while emitting the body (a host-side size); the header
        line is rendered again with it appended."""
        ssa = self.fresh(hint)
        _name, args, _results, line, depth = self._func
        args.append((ssa, mlir_type))
        self.lines[line] = f"{self.indent_unit * depth}{self._func_header()}"
        return ssa

    def _func_header(self) -> str:
        name, args, results, _, _ = self._func
        params = ", ".join(f"{ssa}: {ty}" for ssa, ty in args)
        ret = (
            ""
            if not results
            else " -> " + (results[0] if len(results) == 1 else f"({', '.join(results)})")
        )
        return f"func.func @{name}({params}){ret} {{"

    def emit_func_end(self, values: Sequence[str], types: Sequence[str]) -> None:
        if values:
            self.emit(f"return {', '.join(values)} : {', '.join(types)}")
        else:
            self.emit("return")
        self.pop()
        self.emit("}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
