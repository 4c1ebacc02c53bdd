"""helion-opt behaves as mlir-opt users expect: passes, pipelines, split files, diagnostics."""

from __future__ import annotations

import io
import pathlib
import subprocess
import sys

import pytest
from torch_mlir import ir

from helion_fx_mlir import generate_mlir, lower_to_linalg, lower_to_llvm
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.helion_ops import resolve_helion_ops
from helion_fx_mlir.passes.pipelines import PIPELINES
from helion_fx_mlir.passes.registry import PASSES
from helion_fx_mlir.tools.opt import Diagnostic, expectations, main, verify_expectations

HELION_OPT = pathlib.Path(sys.executable).parent / "helion-opt"

DUPLICATES = """func.func @f(%a: index) -> index {
  %c0 = arith.constant 0 : index
  %s0 = arith.addi %a, %a : index
  %s1 = arith.addi %a, %a : index
  %z = arith.addi %s0, %c0 : index
  %p = arith.muli %z, %s1 : index
  return %p : index
}
"""
TANH = """func.func @tanh(%a: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.tanh %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
"""
ADD_TENSORS = """func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
AFFINE_LOOP = """func.func @loop(%n: index) {
  affine.for %i = 0 to %n {
  }
  return
}
"""
SYNTAX_ERROR = "func.func @f( {\n  return\n}\n"
# An error in the second chunk, at line 7 of the whole file.
SPLIT = """func.func @first() {
  return
}
// -----
func.func @second() -> index {
  %c = arith.constant 1 : index
  return %undefined : index
}
// -----
func.func @third() {
  return
}
"""
# Every designator, and a remark emitted by the transform interpreter.
EXPECTED_DIAGNOSTICS = """// expected-remark @below {{the add}}
func.func @f(%a: index) -> index {
  %0 = arith.addi %a, %a : index
  // expected-remark @above {{the add}}
  // expected-remark @-2 {{the add}}
  return %0 : index // expected-remark {{the return}}
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %add = transform.structured.match ops{["arith.addi"]} in %root : (!transform.any_op) -> !transform.any_op
    %ret = transform.structured.match ops{["func.return"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.debug.emit_remark_at %func, "the add" : !transform.any_op
    transform.debug.emit_remark_at %add, "the add" : !transform.any_op
    transform.debug.emit_remark_at %add, "the add" : !transform.any_op
    transform.debug.emit_remark_at %ret, "the return" : !transform.any_op
    transform.yield
  }
}
"""
INVALID_EXPECTED = """func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 'tensor<4xf32>' but got 'tensor<4xf16>'}}
  %0 = "helion.phi"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def opt(capfd: pytest.CaptureFixture[str], *args: str | pathlib.Path) -> tuple[int, str, str]:
    """main() in process: (exit code, stdout, stderr), never a traceback."""
    code = main([str(a) for a in args])
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def write(tmp_path: pathlib.Path, text: str, name: str = "input.mlir") -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def matmul_mlir(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pathlib.Path]:
    text = generate_mlir(EXAMPLES["matmul"].bind())
    path = tmp_path_factory.mktemp("matmul") / "matmul.mlir"
    path.write_text(text)
    return text, path


def test_round_trip_prints_the_verified_module(capfd, matmul_mlir) -> None:
    text, path = matmul_mlir
    code, out, err = opt(capfd, path)
    assert (code, err) == (0, "")
    assert out == str(parse_module(text))
    assert '"loom.get_symbol"() {name = "block_size_0"}' in out


@pytest.mark.parametrize("args", [["-"], []], ids=["dash", "no-positional"])
def test_reads_stdin(capfd, monkeypatch, args) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(DUPLICATES))
    code, out, _ = opt(capfd, *args, "--canonicalize")
    assert code == 0
    assert "func.func @f" in out and "arith.constant" not in out


def _resolved(text: str) -> str:
    module = parse_module(text)
    resolve_helion_ops(module)
    return str(module)


def op_names(text: str) -> list[str]:
    """The module's ops in order: the LLVM lowering numbers its assert-message globals
    with a counter that persists across runs in a process, so texts differ in names."""
    names: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        names.append(op.name)
        return ir.WalkResult.ADVANCE

    parse_module(text).operation.walk(visit)
    return names


@pytest.mark.parametrize(
    ("flag", "library", "present", "absent"),
    [
        (
            "--helion-resolve-symbols",
            _resolved,
            "arith.constant 16 : index",
            ["loom.get_symbol", "helion.phi"],
        ),
        (
            "--helion-lower-to-linalg",
            lower_to_linalg,
            "linalg.matmul",
            ["torch", "loom.get_symbol", "helion.phi"],
        ),
        (
            "--helion-lower-to-llvm",
            lower_to_llvm,
            "llvm.func @_mlir_ciface_matmul",
            ["torch", "tensor.", "scf."],
        ),
    ],
)
def test_named_pipelines_match_the_library(
    capfd, matmul_mlir, flag, library, present, absent
) -> None:
    text, path = matmul_mlir
    code, out, err = opt(capfd, path, flag)
    assert (code, err) == (0, "")
    assert op_names(out) == op_names(library(text))
    assert present in out
    assert not [word for word in absent if word in out]


@pytest.mark.parametrize(
    ("text", "flags", "present", "absent"),
    [
        (DUPLICATES, ["--cse"], "%1 = arith.addi %0, %c0", "%2 = arith.addi"),
        (DUPLICATES, ["-cse", "-canonicalize"], "arith.muli %0, %0", "arith.constant"),
        (TANH, ["--convert-torch-to-linalg"], "math.tanh", "torch.aten.tanh"),
        (
            TANH,
            [
                "--torch-func-backend-type-conversion",
                "--convert-torch-to-linalg",
                "--torch-finalizing-backend-type-conversion",
                "--canonicalize",
            ],
            "func.func @tanh(%arg0: tensor<4xf32>) -> tensor<4xf32>",
            "torch",
        ),
        (AFFINE_LOOP, ["--lower-affine"], "scf.for", "affine.for"),
        (
            ADD_TENSORS,
            ["--one-shot-bufferize=bufferize-function-boundaries"],
            "memref<4xf32, strided",
            "tensor<",
        ),
        (
            ADD_TENSORS,
            [
                "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map"
            ],
            "func.func @add(%arg0: memref<4xf32>, %arg1: memref<4xf32>) -> memref<4xf32>",
            "strided",
        ),
    ],
    ids=[
        "cse",
        "single-dash",
        "func-pass-nested",
        "interface-pass-nested",
        "lower-affine",
        "options",
        "several-options",
    ],
)
def test_pass_flags(capfd, tmp_path, text, flags, present, absent) -> None:
    code, out, err = opt(capfd, write(tmp_path, text), *flags)
    assert (code, err) == (0, "")
    assert present in out
    assert absent not in out


@pytest.mark.parametrize(
    ("flags", "order"),
    [
        (["--cse", "--canonicalize"], ["CSEPass", "CanonicalizerPass"]),
        (["--canonicalize", "--cse"], ["CanonicalizerPass", "CSEPass"]),
    ],
)
def test_passes_run_in_command_line_order(capfd, tmp_path, flags, order) -> None:
    code, _, err = opt(capfd, write(tmp_path, DUPLICATES), "--mlir-print-ir-after-all", *flags)
    assert code == 0
    dumps = [
        line.split("After ")[1].split(":")[0]
        for line in err.splitlines()
        if "IR Dump After" in line
    ]
    assert dumps == order


def test_rewrite_steps_are_printed_after_too(capfd, matmul_mlir) -> None:
    _, path = matmul_mlir
    code, _, err = opt(
        capfd, path, "--helion-resolve-symbols", "--cse", "--mlir-print-ir-after-all"
    )
    assert code == 0
    dumps = [line for line in err.splitlines() if "IR Dump After" in line]
    assert "resolve_helion_ops: helion-resolve-symbols" in dumps[0]
    assert "CSEPass" in dumps[1]


def test_pass_pipeline(capfd, tmp_path) -> None:
    code, out, _ = opt(
        capfd, write(tmp_path, DUPLICATES), "--pass-pipeline", "builtin.module(func.func(cse))"
    )
    assert code == 0
    assert "%2 = arith.addi" not in out and "arith.constant 0" in out


def test_output_file(capfd, tmp_path) -> None:
    target = tmp_path / "out.mlir"
    code, out, _ = opt(capfd, write(tmp_path, DUPLICATES), "--canonicalize", "-o", target)
    assert (code, out) == (0, "")
    assert "arith.muli" in target.read_text()


def test_output_file_is_not_written_on_failure(capfd, tmp_path) -> None:
    target = tmp_path / "out.mlir"
    code, _, _ = opt(capfd, write(tmp_path, SYNTAX_ERROR), "-o", target)
    assert code == 1
    assert not target.exists()


def test_split_input_file_keeps_line_numbers(capfd, tmp_path) -> None:
    path = write(tmp_path, SPLIT)
    code, out, err = opt(capfd, path, "--split-input-file")
    assert code == 1
    assert err.splitlines()[0] == f"{path}:7:10: error: use of undeclared SSA value name"
    first, second, third = out.split("// -----\n")
    assert "@first" in first and second == "" and "@third" in third


def test_split_input_file_chunks_are_independent(capfd, tmp_path) -> None:
    text = "func.func @f() {\n  return\n}\n// -----\nfunc.func @f() {\n  return\n}\n"
    code, out, _ = opt(capfd, write(tmp_path, text), "--split-input-file")
    assert code == 0
    assert out.count("func.func @f()") == 2


def test_verify_diagnostics_matches_every_designator(capfd, tmp_path) -> None:
    path = write(tmp_path, EXPECTED_DIAGNOSTICS)
    code, out, err = opt(capfd, path, "--transform-interpreter", "--verify-diagnostics")
    assert (code, err) == (0, "")
    assert "func.func @f" in out


def test_verify_diagnostics_accepts_expected_errors(capfd, tmp_path) -> None:
    code, out, err = opt(capfd, write(tmp_path, INVALID_EXPECTED), "--verify-diagnostics")
    assert (code, out, err) == (0, "", "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            INVALID_EXPECTED.replace("@+1", "@+2"),
            ":3:8: error: unexpected error: expected 'tensor<4xf32>'",
        ),
        (INVALID_EXPECTED.replace("tensor<4xf32>' but", "tensor<8xf32>' but"), "unexpected error"),
        (
            DUPLICATES.replace("return %p", "// expected-error @+1 {{nope}}\n  return %p"),
            ':7:6: error: expected error "nope" was not produced',
        ),
        (INVALID_EXPECTED.replace("{{expected", "{expected"), ":2: error: malformed directive"),
    ],
    ids=["wrong-line", "wrong-message", "missing", "malformed"],
)
def test_verify_diagnostics_mismatches_fail(capfd, tmp_path, text, message) -> None:
    path = write(tmp_path, text)
    code, _, err = opt(capfd, path, "--verify-diagnostics")
    assert code == 1
    assert message in err
    assert err.startswith(str(path))


def test_expectation_designators() -> None:
    lines = [
        "a",
        "// expected-error@below {{x}}",
        "// expected-note@+2 {{y}}",
        "b",
        "c // expected-warning {{z}}",
        "// expected-remark@above {{w}}",
        "// expected-error {y}",
        "// expected-error @below {{nothing below}}",
    ]
    found, malformed = expectations("\n".join(lines))
    assert [(e.kind, e.line, e.message) for e in found] == [
        ("note", 5, "y"),
        ("error", 4, "x"),
        ("warning", 5, "z"),
        ("remark", 4, "w"),
    ]
    assert malformed == [7, 8]


def test_warnings_and_notes_are_matched_by_kind() -> None:
    text = "op // expected-warning {{careful}}\nop // expected-error {{careful}}"
    with mlir_context():
        line = ir.Location.file("f.mlir", 1, 4)
        warning = Diagnostic("warning", "be careful", line, (Diagnostic("note", "see here", line),))
        problems = verify_expectations([warning], text, "f.mlir")
    assert problems == [
        "f.mlir:1:4: error: unexpected note: see here",
        'f.mlir:2:7: error: expected error "careful" was not produced',
    ]


def test_print_debuginfo_names_the_input_file(capfd, tmp_path) -> None:
    path = write(tmp_path, DUPLICATES)
    code, out, _ = opt(capfd, path, "--mlir-print-debuginfo")
    assert code == 0
    assert f'loc("{path}":3:9)' in out and f'loc("{path}":1:14)' in out
    assert 'loc("-"' not in out
    assert "loc(" not in opt(capfd, path)[1]


def test_print_op_generic(capfd, tmp_path) -> None:
    code, out, _ = opt(capfd, write(tmp_path, DUPLICATES), "--mlir-print-op-generic")
    assert code == 0
    assert '"func.func"() <{function_type = (index) -> index' in out
    assert '"arith.addi"(%arg0, %arg0)' in out


def test_allow_unregistered_dialect_is_only_for_foreign_input(capfd, tmp_path) -> None:
    path = write(tmp_path, 'func.func @f() {\n  "foreign.op"() : () -> ()\n  return\n}\n')
    code, out, _ = opt(capfd, path, "--allow-unregistered-dialect")
    assert code == 0 and '"foreign.op"()' in out
    code, _, err = opt(capfd, path)
    assert (
        code == 1
        and f"{path}:2:15: error: operation being parsed with an unregistered dialect" in err
    )
    ctx = mlir_context()
    assert not ctx.allow_unregistered_dialects and not ctx.emit_error_diagnostics


@pytest.mark.parametrize(
    ("text", "flags", "message"),
    [
        (SYNTAX_ERROR, [], ":1:14: error: expected non-function type"),
        (INVALID_EXPECTED, [], ":3:8: error: expected 'tensor<4xf32>' but got 'tensor<4xf16>'"),
        (
            'func.func @f() -> index {\n  %0 = "loom.get_symbol"() {name = "block_size_7"} : () -> index\n'
            "  return %0 : index\n}\n",
            ["--helion-resolve-symbols"],
            "error: no module attribute 'loom.block_size_7' for loom.get_symbol",
        ),
        (
            TANH,
            ["--torch-finalizing-backend-type-conversion"],
            ":2:8: error: failed to legalize operation",
        ),
    ],
    ids=["syntax", "verifier", "unresolved-symbol", "failed-pass"],
)
def test_invalid_input_exits_1_with_located_diagnostics(
    capfd, tmp_path, text, flags, message
) -> None:
    path = write(tmp_path, text)
    code, out, err = opt(capfd, path, *flags)
    assert (code, out) == (1, "")
    assert err.startswith(str(path)) and message in err


def test_missing_input_file(capfd, tmp_path) -> None:
    code, _, err = opt(capfd, tmp_path / "nope.mlir")
    assert code == 1
    assert (
        err
        == f"helion-opt: error: cannot read {tmp_path / 'nope.mlir'}: No such file or directory\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unknown option or pass '--bogus'"),
        (["--canonicalize=bogus"], "invalid options in '--canonicalize=bogus'"),
        (["--convert-torch-to-linalg=bogus=1"], "no such option bogus"),
        (["--pass-pipeline=builtin.module(bogus)"], "invalid --pass-pipeline"),
        (["--pass-pipeline"], "'--pass-pipeline' needs a value"),
        (["--verify-diagnostics=yes"], "takes no value"),
        (["--helion-lower-to-llvm=fast"], "'--helion-lower-to-llvm' takes no options"),
        (["--helion-emit-c-interface=x"], "'--helion-emit-c-interface' takes no options"),
        (["a.mlir", "b.mlir"], "one input file expected, got 2"),
    ],
)
def test_usage_errors_exit_2_with_one_message(capfd, args, message) -> None:
    code, out, err = opt(capfd, *args)
    assert (code, out) == (2, "")
    assert err.startswith("helion-opt: error: ") and message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("flag", "text"), [("--help", "--helion-lower-to-linalg"), ("--version", "torch-mlir")]
)
def test_help_and_version(capfd, flag, text) -> None:
    code, out, _ = opt(capfd, flag)
    assert code == 0 and text in out


@pytest.mark.parametrize("flag", ["--help", "--list-passes"])
def test_every_registered_pass_is_listed_with_its_summary(capfd, flag) -> None:
    code, out, _ = opt(capfd, flag)
    assert code == 0
    for name, entry in [*PASSES.items(), *PIPELINES.items()]:
        assert f"--{name} " in out and entry.summary in out


def test_every_registered_pass_has_a_lit_test() -> None:
    lit_dir = pathlib.Path(__file__).parent.parent / "lit_tests" / "passes"
    tested = {path.stem for path in lit_dir.glob("*.mlir")}
    assert [name for name in PASSES if name.removeprefix("helion-") not in tested] == []


def test_a_rewrite_flag_runs_that_rewrite_alone(capfd, matmul_mlir) -> None:
    _, path = matmul_mlir
    code, out, err = opt(capfd, path, "--helion-emit-c-interface", "--mlir-print-ir-after-all")
    assert code == 0
    assert "loom.get_symbol" in out and "llvm.emit_c_interface" in out
    dumps = [line for line in err.splitlines() if "IR Dump After" in line]
    assert dumps == [
        "// -----// IR Dump After emit_c_interface: helion-emit-c-interface //----- //"
    ]


@pytest.mark.parametrize(
    ("args", "stdin", "code", "stream", "text"),
    [
        (["--cse", "--canonicalize"], DUPLICATES, 0, "stdout", "arith.muli %0, %0"),
        ([], SYNTAX_ERROR, 1, "stderr", "<stdin>:1:14: error: expected non-function type"),
        (
            ["--no-such-pass"],
            "",
            2,
            "stderr",
            "helion-opt: error: unknown option or pass '--no-such-pass'",
        ),
    ],
    ids=["ok", "invalid", "usage"],
)
def test_console_script(args, stdin, code, stream, text) -> None:
    proc = subprocess.run(
        [HELION_OPT, *args], input=stdin, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == code
    assert text in getattr(proc, stream)
    assert "Traceback" not in proc.stdout + proc.stderr
