"""Command-line specs: kernel references (FILE.py:KERNEL), arguments (37x50xf32), configs."""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import sys
from typing import Any

import helion
import torch

from .errors import HelionMLIRError, SpecError

DTYPES: dict[str, torch.dtype] = {
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
    "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
    "u8": torch.uint8, "i1": torch.bool, "f8E4M3FN": torch.float8_e4m3fn,
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
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def parse_arg(spec: str, generator: torch.Generator) -> Any:
    """'37x50xf32' -> a random tensor; 'f32' -> a 0-d tensor; '1e-5' / '3' -> a scalar."""
    try:
        return ast.literal_eval(spec)
    except (ValueError, SyntaxError):
        pass
    *dims, dtype_name = spec.split("x")
    dtype = DTYPES.get(dtype_name)
    if dtype is None or not all(d.isdigit() for d in dims):
        raise SpecError(f"cannot parse argument spec '{spec}' (expected e.g. 128x256xf32, f32 or 1e-5)")
    shape = [int(d) for d in dims]
    if dtype.is_floating_point and dtype.itemsize > 1:
        return torch.randn(shape, generator=generator).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator).clamp(-8, 8).to(dtype)
    return torch.randint(-8, 9, shape, generator=generator).to(dtype)


def parse_args(specs: list[str], seed: int = 0) -> tuple[Any, ...]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(parse_arg(s, generator) for s in specs)


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
