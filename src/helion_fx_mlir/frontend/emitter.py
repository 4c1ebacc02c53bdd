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


def format_scalar(value: bool | int | float, dtype: torch.dtype) -> str:
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


def _integer(value: bool | int | float | str, ty: ir.Type) -> int:
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


def slice_operands(
    offsets: Sequence[object], sizes: Sequence[object], strides: Sequence[object]
) -> str:
    """'[offsets] [sizes] [strides]' of a tensor.extract_slice or insert_slice."""
    return f"[{_listed(offsets)}] [{_listed(sizes)}] [{_listed(strides)}]"


def insert_slice_op(
    op: str, value: str, value_type: str, dest: str, dest_type: str, where: str
) -> str:
    """tensor.insert_slice or tensor.parallel_insert_slice (no result name)."""
    return f"{op} {value} into {dest}{where} : {value_type} into {dest_type}"


def identity_map(rank: int) -> str:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({dims})>"


@dataclass(frozen=True)
class GenericOp:
    """A linalg.generic over `rank` parallel dims: its maps (one per input, then the
    output's), inputs as (value, type), init and body, whose last line yields the element
    (block args: (lane, type) of each input, then of the output)."""

    rank: int
    maps: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    init: str
    result_type: str
    block_args: tuple[tuple[str, str], ...]
    body: tuple[str, ...]


def _listed(items: Sequence[object]) -> str:
    return ", ".join(str(item) for item in items)


def _region_body(lines: Sequence[str]) -> str:
    return "".join(f"  {line}\n" for line in lines)


def results_name(name: str, n: int) -> str:
    """The name an op with `n` results binds: `%r:2` for a pack, `%r` for one."""
    return name if n == 1 else f"{name}:{n}"


def result_name(name: str, i: int, n: int) -> str:
    """Result `i` of an op with `n` results bound to `name`."""
    return name if n == 1 else f"{name}#{i}"


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

    def binary(self, op: str, lhs: str, rhs: str, ty: str, hint: str) -> str:
        """`op lhs, rhs : ty` (arith's binary ops on scalars)."""
        ssa = self.fresh(hint)
        self.emit(f"{ssa} = {op} {lhs}, {rhs} : {ty}")
        return ssa

    def index_op(self, op: str, lhs: str, rhs: str, hint: str) -> str:
        return self.binary(op, lhs, rhs, "index", hint)

    def index_as_f64(self, index: str) -> str:
        as_i64, ssa = self.fresh("as_i64"), self.fresh("as_f64")
        self.emit(f"{as_i64} = arith.index_cast {index} : index to i64")
        self.emit(f"{ssa} = arith.sitofp {as_i64} : i64 to f64")
        return ssa

    def tensor_dim(self, ssa: str, ty: str, dim: int) -> str:
        """tensor.dim of a (dynamic) dim of a tensor value."""
        result = self.fresh(f"{ssa.lstrip('%')}_dim{dim}")
        self.emit(f"{result} = tensor.dim {ssa}, {self.index(dim)} : {ty}")
        return result

    def open_for(
        self,
        kind: str,
        iv: str,
        upper: str,
        result: str,
        carried: Sequence[tuple[str, str, str]],
        lower: str | None = None,
    ) -> None:
        """The head of an affine.for [0, upper) or an scf.for [lower (default 0), upper)
        step 1, carrying (iter_arg, init, type) triples; its region is the caller's."""
        if kind == "affine":
            head = f"affine.for {iv} = 0 to {upper}"
        else:
            start = self.index(0) if lower is None else lower
            head = f"scf.for {iv} = {start} to {upper} step {self.index(1)}"
        if carried:
            pairs = ", ".join(f"{name} = {init}" for name, init, _ in carried)
            types = ", ".join(ty for _, _, ty in carried)
            head = f"{results_name(result, len(carried))} = {head} iter_args({pairs}) -> ({types})"
        self.emit(head + " {")

    def loop_yield(self, kind: str, values: Sequence[tuple[str, str]]) -> None:
        """The terminator of an affine.for or scf.for body yielding (ssa, type) pairs."""
        terminator = "affine.yield" if kind == "affine" else "scf.yield"
        if values:
            ssas, types = ", ".join(v for v, _ in values), ", ".join(t for _, t in values)
            self.emit(f"{terminator} {ssas} : {types}")
        elif kind == "scf":
            self.emit("scf.yield")

    def extract_slice(
        self, result: str, source: str, source_type: str, where: str, result_type: str
    ) -> None:
        """tensor.extract_slice; `where` is `slice_operands(...)`."""
        self.emit(
            f"{result} = tensor.extract_slice {source}{where} : {source_type} to {result_type}"
        )

    def insert_slice(
        self, result: str, value: str, value_type: str, dest: str, dest_type: str, where: str
    ) -> None:
        """tensor.insert_slice of `value` into `dest`; `where` is `slice_operands(...)`."""
        op = insert_slice_op("tensor.insert_slice", value, value_type, dest, dest_type, where)
        self.emit(f"{result} = {op}")

    def empty(self, result: str, dynamic: Sequence[str], ty: str) -> None:
        """tensor.empty with the SSA sizes of the type's dynamic dims."""
        self.emit(f"{result} = tensor.empty({', '.join(dynamic)}) : {ty}")

    def generate(
        self,
        result: str,
        dynamic: Sequence[str],
        lanes: Sequence[str],
        body: Sequence[str],
        ty: str,
    ) -> None:
        """tensor.generate: `body` computes the element at index `lanes` and yields it."""
        args = ", ".join(f"{lane}: index" for lane in lanes)
        head = f"{result} = tensor.generate {', '.join(dynamic)} {{\n^bb0({args}):\n"
        self.emit(f"{head}{_region_body(body)}}} : {ty}")

    def generic(self, result: str, op: GenericOp) -> None:
        """linalg.generic with one output and an all-parallel iteration."""
        maps = ", ".join(op.maps)
        iterators = ", ".join('"parallel"' for _ in range(op.rank))
        attrs = f"{{indexing_maps = [{maps}], iterator_types = [{iterators}]}}"
        ins = f"{_listed([v for v, _ in op.inputs])} : {_listed([t for _, t in op.inputs])}"
        operands = f"ins({ins}) outs({op.init} : {op.result_type})"
        lanes = _listed([f"{lane}: {ty}" for lane, ty in op.block_args])
        block = f"^bb0({lanes}):\n{_region_body(op.body)}"
        self.emit(f"{result} = linalg.generic {attrs} {operands} {{\n{block}}} -> {op.result_type}")

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
