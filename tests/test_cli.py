"""helion-mlir: emit/validate/run from the shell, exit codes 0/1/2, never a traceback."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import warnings

import pytest

from helion_fx_mlir.frontend.lowering_context import resolve_config
from helion_fx_mlir.runtime import jit
from helion_fx_mlir.tools import cli

KERNELS = (
    pathlib.Path(__file__).resolve().parents[1]
    / "src"
    / "helion_fx_mlir"
    / "examples"
    / "kernels.py"
)


# Warnings Python's default filters hide; a shell prints the others (pytest collects them).
HIDDEN_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """cli.main(argv) in this process as the shell sees it: exit code, stdout, stderr (file
    descriptors too, as torch's log handlers write there, and the warnings a shell shows)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = cli.main(argv)
    out, err = capfd.readouterr()
    shown = [w for w in caught if not issubclass(w.category, HIDDEN_WARNINGS)]
    err += "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in shown
    )
    return code, out, err


def run_shell(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "helion_fx_mlir.tools.cli", *argv], capture_output=True, text=True
    )


def test_emit_prints_kernel_mlir_with_config(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        [
            "emit",
            f"{KERNELS}:matmul",
            "--args",
            "100x130xf32",
            "130x70xf32",
            "--config",
            "block_sizes=32,16,64",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "loom.block_size_0 = 32 : index, loom.block_size_1 = 16 : index, "
        "loom.block_size_2 = 64 : index" in out
    )
    assert "func.func @matmul(%x: tensor<100x130xf32>" in out


def test_emit_debuginfo_and_output_file(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "add.mlir"
    assert (
        cli.main(
            [
                "emit",
                f"{KERNELS}:add",
                "--args",
                "9x9xf32",
                "9x9xf32",
                "--mlir-print-debuginfo",
                "-o",
                str(target),
            ]
        )
        == 0
    )
    assert f'loc("{KERNELS}":' in target.read_text()


def test_validate_good_and_bad_files(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = tmp_path / "good.mlir", tmp_path / "bad.mlir"
    cli.main(["emit", f"{KERNELS}:add", "--args", "9x9xf32", "9x9xf32", "-o", str(good)])
    bad.write_text('func.func @f() {\n  "helion.phi"() : () -> ()\n  return\n}\n')
    assert cli.main(["validate", str(good)]) == 0
    assert cli.main(["validate", str(bad)]) == 1
    assert f"{bad}:2:3: error:" in capsys.readouterr().err


def test_emit_several_sample_kernels_with_their_own_inputs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    closures = pathlib.Path(KERNELS).parent / "closures.py"
    assert cli.main(["emit", f"{KERNELS}:add", f"{closures}:matmul_epilogue_bias_relu"]) == 0
    modules = capsys.readouterr().out.split("\n// -----\n")
    assert [m.count("func.func @") for m in modules] == [1, 1]
    assert "func.func @add(%x: tensor<37x50xf32>" in modules[0]
    assert "%epilogue_closure0: tensor<45xf32>" in modules[1]


def test_run_compares_with_eager(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli.main(["run", f"{KERNELS}:layer_norm", "--args", "37x100xf32", "100xf32", "100xf32"])
        == 0
    )
    assert "match" in capsys.readouterr().out


def test_run_with_bounds_checks(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "run",
        f"{KERNELS}:layer_norm",
        "--args",
        "37x100xf32",
        "100xf32",
        "100xf32",
        "--bounds-checks",
    ]
    assert cli.main(argv) == 0
    assert "match" in capsys.readouterr().out


def test_run_runs_a_contraction_at_the_mlir_backends_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """64x64 tiles in K steps of 64 (`runtime/seeds.py`), not Helion's 16^3 for GPUs; in
    bounds on shapes they do not divide."""
    configs, compile_kernel = [], jit.compile_kernel

    def spy(bound: object, config: object = None, **kwargs: object) -> object:
        configs.append(resolve_config(bound, config).config["block_sizes"])
        return compile_kernel(bound, config=config, **kwargs)

    monkeypatch.setattr(jit, "compile_kernel", spy)
    argv = ["run", f"{KERNELS}:matmul", "--args", "100x130xf32", "130x70xf32", "--bounds-checks"]
    assert cli.main(argv) == 0
    assert configs == [[64, 64, 64]]
    assert "match" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["emit", "missing.py:k", "--args", "3xf32"], 1, "no such file: missing.py"),
        (["emit", f"{KERNELS}:nope", "--args", "3xf32"], 1, "has no helion kernel named 'nope'"),
        (["emit", f"{KERNELS}:add", "--args", "3xq7"], 2, "cannot parse argument spec '3xq7'"),
        (
            ["emit", f"{KERNELS}:add", "--args", "3xf32", "3xf32", "--config", "block_sizes"],
            2,
            "KEY=VALUE",
        ),
        (["emit", "no-colon", "--args", "3xf32"], 2, "expected FILE.py:KERNEL"),
        (["validate", "missing.mlir"], 1, "cannot read missing.mlir"),
        (["frobnicate"], 2, "invalid choice"),
        (
            ["emit", f"{pathlib.Path(__file__).parent / 'kernels_guard.py'}:tile_sums"],
            2,
            "give its inputs with --args",
        ),
        (
            ["emit", f"{KERNELS}:add", f"{KERNELS}:sum_rows", "--args", "3xf32"],
            2,
            "several kernels must be sample kernels",
        ),
        (
            ["emit", f"{KERNELS}:add", "--args", "4x5xf32"],
            2,
            "got 1 --args: missing a required argument: 'y'",
        ),
        (
            ["run", f"{KERNELS}:add", "--args", "4x5xf32", "4x5xf32", "7"],
            2,
            "got 3 --args: too many positional arguments",
        ),
        (["bench", "no_such_kernel"], 2, "unknown bench case no_such_kernel; known: add, bias_add"),
        (["bench", "add", "--threads", "0"], 2, "--threads and --rounds take a positive count"),
        (
            [
                "run",
                f"{KERNELS}:add",
                "--args",
                "4x5xf32",
                "4x5xf32",
                "--config",
                "block_sizes=4,4",
                "--autotune",
                "quick",
            ],
            2,
            "--autotune searches the config: give it or --config, not both",
        ),
        (
            ["emit", f"{KERNELS}:add", "--args", "99999999999999999999xf32", "3xf32"],
            2,
            "more than a 64-bit size can hold",
        ),
        (
            [
                "run",
                f"{KERNELS}:add",
                "--args",
                "100000x100000x100000xf32",
                "100000x100000x100000xf32",
            ],
            1,
            "the arguments need about 21.3 PB under `run` (3 copies of the inputs), more than the",
        ),
        (
            ["emit", f"{KERNELS}:add", "--args", "4x5xf32", "4xf32"],
            1,
            f"{KERNELS}:17: Expected ndim=1, but got ndim=2",
        ),
        (
            ["emit", f"{KERNELS}:matmul", "--args", "4x5xf32", "6x7xf32"],
            1,
            f"{KERNELS}:25: the kernel rejects these arguments: inner dims differ: 5 != 6",
        ),
        (
            ["run", f"{KERNELS}:matmul", "--args", "4x5xf32", "6x7xf32"],
            1,
            "inner dims differ: 5 != 6",
        ),
        (
            ["run", f"{KERNELS}:matmul", "--args", "0x3xf32", "3x5xf32"],
            1,
            f"{KERNELS}:27: the reference fails on these arguments: not enough values to unpack",
        ),
        (
            ["run", f"{KERNELS}:add", "--args", "4x5xf32", "4x5xf32", "--config", "block_sizes=3"],
            1,
            "Not enough values for config['block_sizes']",
        ),
        (
            [
                "emit",
                f"{pathlib.Path(__file__).parent / 'kernels_rejected.py'}:mismatched_rows",
                "--args",
                "10x8xf32",
                "10x7xf32",
            ],
            1,
            "kernels_rejected.py:15: RuntimeError: a and b must have same reduction dim",
        ),
    ],
    ids=[
        "missing-file",
        "unknown-kernel",
        "bad-spec",
        "bad-config",
        "bad-ref",
        "missing-mlir",
        "bad-command",
        "no-args",
        "several-with-args",
        "too-few-args",
        "too-many-args",
        "unknown-bench",
        "bad-threads",
        "autotune-with-config",
        "dim-past-int64",
        "too-big-to-run",
        "rank-mismatch",
        "host-assert-emit",
        "host-assert-run",
        "reference-rejects",
        "config-mismatch",
        "body-rejected",
    ],
)
def test_bad_input_gives_one_message_and_an_exit_code(
    argv: list[str], code: int, message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    got, out, err = run(argv, capfd)
    assert got == code, err
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err + out


def test_bad_input_from_the_shell_gives_one_message_and_an_exit_code() -> None:
    """The shell's path: the work in a guarded child, torch's logging in a fresh process."""
    result = run_shell("emit", f"{KERNELS}:add", "--args", "4x5xf32", "4xf32")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(
        f"helion-mlir: error: {KERNELS}:17: Expected ndim=1, but got ndim=2"
    ), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


CRASHING_VALIDATE = """
import ctypes, sys
from helion_fx_mlir.tools import cli

def crash(ns):
    cli.stage("the crashing step")
    ctypes.string_at(0)  # reads address 0: SIGSEGV

cli.COMMANDS["validate"] = crash
sys.exit(cli.main())
"""


def test_a_crash_from_the_shell_is_one_line_and_exit_1() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CRASHING_VALIDATE, "validate", "k.mlir"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        "helion-mlir: internal error: the crashing step crashed on this input (signal 11, "
        "SIGSEGV); please report it with the input\n"
    )


def test_emit_of_huge_shapes_allocates_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """--args become meta tensors for emit: a 40 GB argument costs no memory."""
    assert (
        cli.main(["emit", f"{KERNELS}:add", "--args", "100000x100000xf32", "100000x100000xf32"])
        == 0
    )
    assert "func.func @add(%x: tensor<100000x100000xf32>" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args", [["0x50xf32", "0x50xf32"], ["37x0xf32", "37x0xf32"]], ids=["rows", "cols"]
)
def test_zero_size_extents_emit_valid_mlir_and_run(
    args: list[str], tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "k.mlir"
    assert cli.main(["emit", f"{KERNELS}:add", "--args", *args, "-o", str(target)]) == 0
    assert cli.main(["validate", str(target)]) == 0
    assert cli.main(["run", f"{KERNELS}:add", "--args", *args]) == 0
    assert "match" in capsys.readouterr().out


def test_bench_prints_a_row_per_case_and_the_geometric_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Small sizes: each case compiles, is checked against eager, and is timed beside it."""
    assert (
        cli.main(
            ["bench", "add", "matmul_64", "--sizes", "small", "--rounds", "1", "--threads", "1"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "small sizes, f32 unless named, 1 thread(s), median of 1 rounds" in out
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert [r.split("|")[1].strip() for r in rows[2:]] == ["add", "matmul_64", "geometric mean"]
    assert "GB/s" in rows[2] and "GFLOP/s" in rows[3]
