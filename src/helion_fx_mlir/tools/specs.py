"""Command-line specs: kernel references (FILE.py:KERNEL), arguments (37x50xf32), configs."""

from __future__ import annotations

import ast
import importlib.util
import math
import pathlib
import sys
from dataclasses import dataclass
from typing import Any

import helion
import torch

from helion_fx_mlir.errors import HelionMLIRError, SpecError

DTYPES: dict[str, torch.dtype] = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "u8": torch.uint8,
    "i1": torch.bool,
    "f8E4M3FN": torch.float8_e4m3fn,
}


def load_kernel(ref: str) -> Any:
    """Import FILE.py and return its KERNEL attribute (a helion kernel)."""
    path_text, sep, name = ref.rpartition(":")
    if not sep or not path_text or not name:
        raise SpecError(f"expected FILE.py:KERNEL, got '{ref}'")
    path = pathlib.Path(path_text)
    if not path.is_file():
        raise HelionMLIRError(f"no such file: {path}")
    module = import_file(path)
    kernel = getattr(module, name, None)
    if not isinstance(kernel, helion.Kernel):
        raise HelionMLIRError(f"{path} has no helion kernel named '{name}'")
    return kernel


def import_file(path: pathlib.Path) -> Any:
    """Import a .py file; inside a package (dirs with __init__.py) by its dotted name,
    so relative imports work, else as a standalone module."""
    path = path.resolve()
    parts, root = [path.stem], path.parent
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    if len(parts) > 1:
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        return importlib.import_module(".".join(parts))
    module_name = f"_helion_fx_mlir_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument before it is made: '37x50xf32' is shape (37, 50), float32."""

    shape: tuple[int, ...]
    dtype: torch.dtype

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def make(self, generator: torch.Generator, device: str = "cpu") -> torch.Tensor:
        """Random values on the CPU; on 'meta', shape and dtype only (nothing allocated)."""
        if device == "meta":
            return torch.empty(self.shape, dtype=self.dtype, device="meta")
        if self.dtype.is_floating_point and self.dtype.itemsize > 1:
            return torch.randn(self.shape, generator=generator).to(self.dtype)
        if self.dtype == torch.bool:
            return torch.randint(0, 2, self.shape, generator=generator).bool()
        if self.dtype.is_floating_point:
            return torch.randn(self.shape, generator=generator).clamp(-8, 8).to(self.dtype)
        return torch.randint(-8, 9, self.shape, generator=generator).to(self.dtype)


def parse_spec(spec: str) -> Any:
    """'37x50xf32' -> TensorSpec; 'f32' -> a 0-d TensorSpec; '1e-5' / '3' -> the scalar."""
    try:
        return ast.literal_eval(spec)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    *dims, dtype_name = spec.split("x")
    dtype = DTYPES.get(dtype_name)
    if dtype is None or not all(d.isdigit() for d in dims):
        raise SpecError(
            f"cannot parse argument spec '{spec}' (expected e.g. 128x256xf32, f32 or 1e-5)"
        )
    tensor = TensorSpec(tuple(int(d) for d in dims), dtype)
    if tensor.nbytes > INT64_MAX:
        raise SpecError(
            f"argument '{spec}' needs {tensor.nbytes} bytes, more than a 64-bit size can hold"
        )
    return tensor


def parse_specs(specs: list[str]) -> list[Any]:
    return [parse_spec(s) for s in specs]


def make_args(specs: list[Any], seed: int = 0, device: str = "cpu") -> tuple[Any, ...]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(s.make(generator, device) if isinstance(s, TensorSpec) else s for s in specs)


def parse_args(specs: list[str], seed: int = 0) -> tuple[Any, ...]:
    """Argument specs -> random CPU tensors and scalars."""
    return make_args(parse_specs(specs), seed)


def parse_config(items: list[str]) -> helion.Config | None:
    """KEY=VALUE pairs (VALUE a Python literal; '32,32' is a list) -> helion.Config."""
    if not items:
        return None
    values: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep:
            raise SpecError(f"config entries are KEY=VALUE, got '{item}'")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise SpecError(f"cannot parse config value '{text}' for '{key}'") from None
        values[key] = list(value) if isinstance(value, tuple) else value
    return helion.Config(**values)
