"""Where compiled kernels and tuned configs live on disk, and what makes an entry valid.

An entry is only as good as its key: the code that made it (torch, Helion, torch-mlir and
this package, down to the bytes of its sources, so an edited checkout never reads entries
of the code before) and the CPU it was made for (model and instruction-set flags, since
LLVM generates code for the host's features). Entries are written into a temporary
directory and renamed into place, so a reader never sees half an entry and two processes
compiling the same kernel both succeed (the second rename finds the entry there and
drops its own copy).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import pathlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

from helion_fx_mlir.host_cpu import cpu_flags, cpu_model

CACHE_DIR_ENV = "HELION_FX_MLIR_CACHE_DIR"
PACKAGES = ("torch", "helion", "torch-mlir")


def cache_root() -> pathlib.Path:
    """`$HELION_FX_MLIR_CACHE_DIR`, else `$XDG_CACHE_HOME/helion-fx-mlir`, else
    `~/.cache/helion-fx-mlir`."""
    if explicit := os.environ.get(CACHE_DIR_ENV):
        return pathlib.Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "helion-fx-mlir"


@functools.cache
def machine_id() -> str:
    """The CPU model and its instruction-set flags: code generated for one CPU's features
    may not run, or not run as fast, on another."""
    return _digest([cpu_model(), " ".join(sorted(cpu_flags()))])


@functools.cache
def toolchain_id() -> str:
    """The versions of the packages the code comes from, and this package's own sources."""
    package = pathlib.Path(__file__).resolve().parents[1]
    sources = sorted(p for p in package.rglob("*") if p.suffix in {".py", ".mlir"})
    versions = [f"{name}=={importlib.metadata.version(name)}" for name in PACKAGES]
    return _digest([sys.version, *versions, *(p.read_bytes() for p in sources)])


def _digest(parts: Iterable[str | bytes]) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little"))
        hasher.update(data)
    return hasher.hexdigest()


def entry_key(fields: dict[str, Any]) -> str:
    """The key of an entry described by `fields` (JSON-serializable), on this machine
    and toolchain."""
    return _digest([json.dumps(fields, sort_keys=True), machine_id(), toolchain_id()])


def publish(kind: str, key: str, write: Callable[[pathlib.Path], None]) -> pathlib.Path:
    """Write an entry with `write(directory)` into a fresh temporary directory, then
    rename it into `<root>/<kind>/<key>`; an entry already there (another process won
    the race, or an earlier one) is kept and ours dropped."""
    final = cache_root() / kind / key
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=final.parent))
    try:
        write(staging)
        os.rename(staging, final)
    except OSError:
        if not final.is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def discard(entry: pathlib.Path) -> None:
    """Remove a corrupt or stale entry (renamed away first, so no reader sees it half
    removed)."""
    doomed = entry.with_name(f".{entry.name}.discarded-{os.getpid()}")
    try:
        os.rename(entry, doomed)
    except OSError:
        return
    shutil.rmtree(doomed, ignore_errors=True)
