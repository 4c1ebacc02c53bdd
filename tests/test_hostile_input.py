"""Hostile MLIR through the Python API and the crash guard: diagnostics with a place,
never an exception from the validator, never a signal from the command-line tools."""

from __future__ import annotations

import ctypes
import faulthandler

import pytest

from helion_fx_mlir import MLIRTextError, lower_to_linalg, validate_with_helion_opt
from helion_fx_mlir.tools.shell import run_tool, stage

GET_SYMBOL = """module attributes {loom.block_size_0 = BS} {
  func.func @f() -> index {
    %0 = "loom.get_symbol"() {name = "block_size_0"} : () -> index
    return %0 : index
  }
}"""
DTYPE = """func.func @f(%a: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %c = torch.constant.int 99
  %0 = torch.prims.convert_element_type %a, %c : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}"""
DIVIDE_BY_ZERO = """func.func @f(%b: index) -> index {
  %0 = affine.apply affine_map<()[s0] -> (37 ceildiv 0)>()[%b]
  return %0 : index
}"""
DEEP = "module attributes {test.a = " + "[" * 5000 + "]" * 5000 + "} {}"
# `\\ff` is not UTF-8: the bindings raised converting the diagnostic that quotes the name.
BAD_ESCAPE = 'module {\n  func.func @f() {\n    func.call @"\\ff"() : () -> ()\n    return\n  }\n}'

HOSTILE = {
    "block-size-0": (
        GET_SYMBOL.replace("BS", "0 : index"),
        "k.mlir:1:1: error: module attribute 'loom.block_size_0' must be a positive integer",
    ),
    "block-size-str": (
        GET_SYMBOL.replace("BS", '"x"'),
        "k.mlir:1:1: error: module attribute 'loom.block_size_0' must be a positive integer",
    ),
    "dtype-code": (
        DTYPE,
        "k.mlir:3:8: error: 'torch.prims.convert_element_type' has dtype code 99",
    ),
    "affine-divisor-0": (
        DIVIDE_BY_ZERO,
        "k.mlir:2:8: error: 'affine.apply' has affine map ()[s0] -> (37 ceildiv 0) with divisor 0",
    ),
    "deep-nesting": (
        DEEP,
        "k.mlir:1:1028: error: nesting deeper than 1000 levels is not supported",
    ),
    "non-utf8-escape": (
        BAD_ESCAPE,
        "k.mlir:3:16: error: this string's escapes spell bytes that are not UTF-8",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_validator_returns_located_diagnostics(name: str) -> None:
    text, expected = HOSTILE[name]
    result = validate_with_helion_opt(text, "k.mlir")
    assert not result.ok
    assert result.diagnostics[0].startswith(expected), result.diagnostics


@pytest.mark.parametrize("name", list(HOSTILE))
def test_lowering_raises_our_error_with_a_place(name: str) -> None:
    with pytest.raises(MLIRTextError) as err:
        lower_to_linalg(HOSTILE[name][0])
    place = {
        "dtype-code": "<mlir>:3:8:",
        "affine-divisor-0": "<mlir>:2:8:",
        "non-utf8-escape": "<mlir>:3:16:",
    }.get(name, "<mlir>:1:")
    assert err.value.diagnostics[0].startswith(place)


def test_missing_symbol_is_located_at_the_op() -> None:
    text = GET_SYMBOL.replace("BS", "4 : index").replace(
        'name = "block_size_0"', 'name = "block_size_3"'
    )
    with pytest.raises(MLIRTextError) as err:
        lower_to_linalg(text)
    assert err.value.diagnostics == [
        "<mlir>:3:10: error: no module attribute 'loom.block_size_3' for loom.get_symbol"
    ]


def test_a_crash_in_a_guarded_tool_is_a_report_not_a_signal(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def crash() -> int:
        stage("the test step")
        faulthandler.disable()  # pytest's handler would dump the child's stack
        ctypes.string_at(0)  # reads address 0: SIGSEGV
        return 0

    assert run_tool("tool", crash, guard=True) == 1
    err = capfd.readouterr().err
    assert err == (
        "tool: internal error: the test step crashed on this input (signal 11, SIGSEGV); "
        "please report it with the input\n"
    )


def test_the_guard_keeps_exit_codes_and_messages(capfd: pytest.CaptureFixture[str]) -> None:
    assert run_tool("tool", lambda: 2, guard=True) == 2

    def fail() -> int:
        raise RuntimeError("boom")

    assert run_tool("tool", fail, guard=True) == 1
    assert capfd.readouterr().err == "tool: internal error: boom\n"
