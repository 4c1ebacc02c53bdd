"""Parsing and verifying MLIR text into modules, with diagnostics as 'file:line:col: msg'."""

from __future__ import annotations

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


def format_location(loc: ir.Location, fallback: str) -> str:
    """'file:line:col' for file locations (looking through names and fused locs)."""
    text = str(loc)
    start = text.find('"')
    if start < 0:
        return fallback
    end = text.find('"', start + 1)
    rest = text[end + 1 :].split(")")[0].split(" ")[0]
    name = text[start + 1 : end]
    return (fallback if name == "-" else name) + rest


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
