"""Parsing and verifying MLIR text into modules, with diagnostics as 'file:line:col: msg'."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from torch_mlir import ir

from .dialects import mlir_context
from .errors import MLIRTextError


@dataclass(frozen=True)
class ValidationResult:
    """Outcome of verifying MLIR text: invalid IR is a result, never an exception."""

    ok: bool
    diagnostics: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok


def file_position(loc: ir.Location | None) -> tuple[str, int, int] | None:
    """(file, line, col) a location points at, looking through names, call sites, fusions."""
    for kind, position in _POSITION.items():
        typed = _as(kind, loc)
        if typed is not None:
            return position(typed)
    return None


def _as(kind: type, loc: ir.Location | None) -> ir.Location | None:
    """Diagnostics hand out plain ir.Location; the typed view is a cast that may refuse."""
    if loc is None or isinstance(loc, kind):
        return loc
    try:
        return kind(loc)
    except (ValueError, TypeError):
        return None


_POSITION: dict[type, Callable[[ir.Location], tuple[str, int, int] | None]] = {
    ir.FileLineColLoc: lambda loc: (loc.filename, loc.start_line, loc.start_col),
    ir.NameLoc: lambda loc: file_position(loc.child_loc),
    ir.CallSiteLoc: lambda loc: file_position(loc.callee),
    ir.FusedLoc: lambda loc: next(filter(None, map(file_position, loc.locations)), None),
}


def format_location(loc: ir.Location, fallback: str) -> str:
    """'file:line:col'; text parsed from a string reports file '-', shown as `fallback`."""
    position = file_position(loc)
    if position is None:
        return fallback
    name, line, col = position
    return f"{fallback if name == '-' else name}:{line}:{col}"


def format_diagnostic(diag: object, filename: str) -> str:
    """One diagnostic as a compiler would print it, notes indented below."""
    where = format_location(diag.location, filename)
    severity = str(diag.severity).rsplit(".", 1)[-1].lower()
    lines = [f"{where}: {severity}: {diag.message.strip()}"]
    lines += [f"  {format_diagnostic(note, filename)}" for note in diag.notes]
    return "\n".join(lines)


def parse_module(text: str, filename: str = "<mlir>", *, verify: bool = True) -> ir.Module:
    """Parse (and verify) text in the shared context; raise MLIRTextError with diagnostics."""
    ctx = mlir_context()
    with ctx:
        try:
            module = ir.Module.parse(text)
            if verify:
                module.operation.verify()
        except ir.MLIRError as err:
            diags = [format_diagnostic(d, filename) for d in err.error_diagnostics]
            raise MLIRTextError("parse" if not verify else "verify", diags or [str(err)]) from None
    return module


def validate_text(text: str, filename: str = "<mlir>") -> ValidationResult:
    """Parse and verify; collect diagnostics instead of raising."""
    try:
        parse_module(text, filename)
    except MLIRTextError as err:
        return ValidationResult(False, err.diagnostics)
    return ValidationResult(True, [])
