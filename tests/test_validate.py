"""validate_with_helion_opt: invalid IR is a result with located diagnostics, never a raise."""

from __future__ import annotations

import pytest

from helion_fx_mlir import MLIRTextError, lower_to_linalg, validate_with_helion_opt

PHI_TYPE_MISMATCH = """func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  %0 = "helion.phi"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
SYMBOL_WITHOUT_NAME = """func.func @f() -> index {
  %0 = "loom.get_symbol"() : () -> index
  return %0 : index
}"""
UNKNOWN_OP = """func.func @f() {
  "helion.nope"() : () -> ()
  return
}"""
SYNTAX_ERROR = """func.func @f( {
  return
}"""
USE_OF_UNDEFINED = """func.func @f() -> index {
  return %x : index
}"""


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (PHI_TYPE_MISMATCH, 2, "tensor<4xf16>"),
        (SYMBOL_WITHOUT_NAME, 2, "name"),
        (UNKNOWN_OP, 2, "helion.nope"),
        (SYNTAX_ERROR, 1, "expected"),
        (USE_OF_UNDEFINED, 2, "undeclared SSA value"),
    ],
    ids=["phi-types", "get-symbol-no-name", "unknown-op", "syntax", "undefined-value"],
)
def test_invalid_ir_gives_located_diagnostics(text: str, line: int, message: str) -> None:
    result = validate_with_helion_opt(text, "bad.mlir")
    assert not result.ok
    first = result.diagnostics[0]
    assert first.startswith(f"bad.mlir:{line}:"), first
    assert "error:" in first and message in first


def test_valid_helion_and_loom_ops_verify_without_unregistered_dialects() -> None:
    text = """module attributes {loom.block_size_0 = 8 : index} {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %bs = "loom.get_symbol"() {name = "block_size_0"} : () -> index
    %0 = "helion.phi"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}"""
    assert validate_with_helion_opt(text).ok


def test_symbols_resolve_from_module_attributes() -> None:
    text = """module attributes {loom.block_size_0 = 8 : index} {
  func.func @f() -> index {
    %bs = "loom.get_symbol"() {name = "block_size_0"} : () -> index
    return %bs : index
  }
}"""
    assert "arith.constant 8 : index" in lower_to_linalg(text)


def test_lowering_invalid_text_raises_with_diagnostics() -> None:
    with pytest.raises(MLIRTextError) as err:
        lower_to_linalg(UNKNOWN_OP)
    assert err.value.diagnostics and "helion.nope" in err.value.diagnostics[0]
