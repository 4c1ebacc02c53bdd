"""Scalar literals and location file names come out as MLIR's own printer writes them, so
both MLIR builds (torch-mlir's bindings and upstream LLVM 22.1 mlir-opt) read them back."""

from __future__ import annotations

import importlib.util
import math
import re
import shutil
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import torch
from torch_mlir import ir

from helion_fx_mlir import compile_kernel, generate_mlir, lower_to_linalg, validate_with_helion_opt
from helion_fx_mlir.errors import mlir_location, mlir_string
from helion_fx_mlir.frontend.emitter import (
    MLIRBuilder,
    format_scalar,
    literal,
    torch_dtype_to_mlir_element_type,
)
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.tools.upstream_check import verify_with_mlir_opt
from kernels_literals import special_values, special_values_reference

needs_tools = pytest.mark.usefixtures("upstream_tools")

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# Specials, values Python prints without a '.', denormals of each width, extremes, overflow.
FLOAT_VALUES = (
    math.inf,
    -math.inf,
    math.nan,
    -0.0,
    0.0,
    1e-05,
    0.1,
    3.0,
    5e-324,
    1e-45,
    1e-40,
    6e-08,
    9.2e-41,
    1.7976931348623157e308,
    3.0e38,
    65504.0,
    1e6,
)
SAME_WIDTH_INT = {2: torch.int16, 4: torch.int32, 8: torch.int64}
NAMES = ("kernel.py", 'a"b.py', "a\\b.py", "ü/é.py", "tab\there.py", "日本.py")


@pytest.mark.parametrize(
    ("value", "mlir_type", "text"),
    [
        (math.inf, "f32", "0x7F800000 : f32"),
        (-math.inf, "f32", "0xFF800000 : f32"),
        (math.nan, "f32", "0x7FC00000 : f32"),
        (-math.inf, "bf16", "0xFF80 : bf16"),
        (math.inf, "f16", "0x7C00 : f16"),
        (-math.inf, "f64", "0xFFF0000000000000 : f64"),
        ("-inf", "f64", "0xFFF0000000000000 : f64"),
        (-0.0, "f32", "-0.000000e+00 : f32"),
        (1e-05, "f64", "1.000000e-05 : f64"),
        (True, "i1", "true"),
        ("false", "i1", "false"),
        (200, "i8", "-56 : i8"),
        (-4, "index", "-4 : index"),
    ],
)
def test_literal_is_what_mlir_prints(value: object, mlir_type: str, text: str) -> None:
    assert literal(value, mlir_type) == text


def test_integer_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ValueError, match="300 does not fit in i8"):
        literal(300, "i8")


def _bits(value: float, dtype: torch.dtype) -> int:
    return torch.tensor(value, dtype=dtype).view(SAME_WIDTH_INT[dtype.itemsize]).item()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_literal_parses_back_to_the_bits_torch_rounds_to(dtype: torch.dtype) -> None:
    elt = torch_dtype_to_mlir_element_type(dtype)
    with mlir_context():
        for value in FLOAT_VALUES:
            parsed = ir.FloatAttr(ir.Attribute.parse(literal(value, elt))).value
            assert _bits(parsed, dtype) == _bits(value, dtype), (value, elt, literal(value, elt))


def test_constant_is_hoisted_once_per_literal() -> None:
    b = MLIRBuilder()
    b.emit_func_start("f", [], [])
    assert b.constant(True, "i1", "true") == b.constant("true", "i1", "t") == "%true"
    assert b.constant(0.0, "f32", "cst") != b.constant(-0.0, "f32", "cst")
    assert "  %true = arith.constant true" in b.lines


def _module_of_every_literal() -> str:
    """One func with a constant per float value and width (as hl.full emits them), plus i1
    and ints."""
    b = MLIRBuilder()
    b.emit_func_start("literals", [], [])
    for dtype in (*FLOATS, torch.bool, torch.int8, torch.uint8, torch.int64):
        for value in FLOAT_VALUES if dtype.is_floating_point else (True, False, 0, 1, 127):
            b.constant(format_scalar(value, dtype), torch_dtype_to_mlir_element_type(dtype), "cst")
    b.constant(-3, "index", "c")
    b.emit_func_end([], [])
    return b.text()


def test_every_literal_parses_with_the_bindings() -> None:
    parse_module(_module_of_every_literal())


@needs_tools
def test_every_literal_parses_with_upstream_mlir_opt() -> None:
    result = verify_with_mlir_opt(_module_of_every_literal(), "literals.mlir")
    assert result.ok, "\n".join(result.diagnostics)


@pytest.mark.parametrize("name", NAMES)
def test_location_escapes_the_file_name_as_mlir_does(name: str) -> None:
    with mlir_context():
        expected = str(ir.Location.file(name, 3, 5))
    assert mlir_location(SimpleNamespace(filename=name, lineno=3, colno=4)) == expected


def _module_with_locations() -> str:
    """A func whose ops carry loc(...) of every awkward file name."""
    locations = [mlir_location(SimpleNamespace(filename=name, lineno=1, colno=0)) for name in NAMES]
    body = "".join(
        f"    %c{i} = arith.constant {i} : i32 {loc}\n" for i, loc in enumerate(locations)
    )
    return f"module {{\n  func.func @f() {{\n{body}    return\n  }}\n}}\n"


def test_escaped_locations_parse_back_with_the_bindings() -> None:
    module = parse_module(_module_with_locations())
    printed = module.operation.get_asm(enable_debug_info=True)
    assert all(mlir_string(name) in printed for name in NAMES)


@needs_tools
def test_escaped_locations_parse_with_upstream_mlir_opt() -> None:
    result = verify_with_mlir_opt(_module_with_locations(), "locations.mlir")
    assert result.ok, "\n".join(result.diagnostics)


def _bind(dtype: torch.dtype, kernel: object = special_values) -> tuple[object, torch.Tensor]:
    x = torch.randn(37, dtype=dtype)
    return kernel.bind((x,)), x


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_special_values_kernel_emits_mlir_literals_and_runs(dtype: torch.dtype) -> None:
    bound, x = _bind(dtype)
    text = generate_mlir(bound)
    elt = torch_dtype_to_mlir_element_type(dtype)
    for value in (math.inf, -math.inf, -0.0):
        assert f"arith.constant {literal(value, elt)}\n" in text
    assert "arith.constant true\n" in text
    torch.testing.assert_close(
        compile_kernel(bound)(x), special_values_reference(x), equal_nan=True
    )


def _constants_only(text: str) -> str:
    """The emitted arith.constant lines in a func of their own: upstream mlir-opt knows no
    torch/helion/loom ops, so it reads our literals only this way before lowering."""
    lines = "".join(
        f"    {line.strip()}\n"
        for line in text.splitlines()
        if re.search(r"= arith\.constant ", line)
    )
    return f"func.func @constants() {{\n{lines}    return\n}}\n"


@needs_tools
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_special_values_kernel_reads_in_upstream_mlir_opt(dtype: torch.dtype) -> None:
    text = generate_mlir(_bind(dtype)[0])
    for stage, module in (
        ("emitted constants", _constants_only(text)),
        ("linalg", lower_to_linalg(text)),
    ):
        result = verify_with_mlir_opt(module, f"special_values.{stage}.mlir")
        assert result.ok, f"{stage}:\n" + "\n".join(result.diagnostics)


def _import_copy(directory: Path) -> ModuleType:
    """kernels_literals.py imported from another directory (Helion reads the kernel's source
    file)."""
    directory.mkdir(parents=True)
    path = directory / "kernels_literals.py"
    shutil.copy(Path(__file__).with_name("kernels_literals.py"), path)
    spec = importlib.util.spec_from_file_location("kernels_literals_copy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_debug_info_of_a_kernel_in_an_awkward_directory_parses(tmp_path: Path) -> None:
    module = _import_copy(tmp_path / 'quote" back\\slash ü')
    text = generate_mlir(_bind(torch.float32, module.special_values)[0], debug_info=True)
    assert f"loc({mlir_string(module.__file__)}:" in text
    result = validate_with_helion_opt(text)
    assert result.ok, "\n".join(result.diagnostics)
