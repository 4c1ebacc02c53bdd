"""Parsing and verifying MLIR text into modules, with diagnostics as 'file:line:col: msg'."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from torch_mlir import ir

from helion_fx_mlir.errors import MLIRTextError
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.input_checks import module_problems, text_problem, unlocated_parse_failure


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


def format_diagnostic(
    diag: ir.Diagnostic, filename: str, default: ir.Location | None = None
) -> str:
    """One diagnostic as a compiler would print it, notes indented below; a diagnostic at
    no place in the text (an op with an unknown location) is put at `default`."""
    location = (
        diag.location if file_position(diag.location) is not None or default is None else default
    )
    where = format_location(location, filename)
    severity = str(diag.severity).rsplit(".", 1)[-1].lower()
    lines = [f"{where}: {severity}: {diag.message.strip()}"]
    lines += [f"  {format_diagnostic(note, filename, location)}" for note in diag.notes]
    return "\n".join(lines)


def parse_module(text: str, filename: str = "<mlir>", *, verify: bool = True) -> ir.Module:
    """Parse (and verify, with the checks our passes rely on) text in the shared context;
    raise MLIRTextError with located diagnostics."""
    problem = text_problem(text)
    if problem is not None:
        raise MLIRTextError(
            "parse", [f"{filename}:{problem.line}:{problem.col}: error: {problem.message}"]
        )
    with mlir_context():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as err:
            raise MLIRTextError(
                "parse",
                [format_diagnostic(d, filename) for d in err.error_diagnostics]
                or [_unlocated_parse_error(text, filename)],
            ) from None
        try:
            if verify:
                module.operation.verify()
        except ir.MLIRError as err:
            raise MLIRTextError(
                "verify",
                [
                    format_diagnostic(d, filename, module.operation.location)
                    for d in err.error_diagnostics
                ]
                or [str(err)],
            ) from None
        problems = module_problems(module) if verify else []
        if problems:
            raise MLIRTextError("verify", located(problems, filename))
    return module


def _unlocated_parse_error(text: str, filename: str) -> str:
    problem = unlocated_parse_failure(text)
    return f"{filename}:{problem.line}:{problem.col}: error: {problem.message}"


def located(problems: list[tuple[ir.Location, str]], filename: str) -> list[str]:
    """(location, message) pairs as 'file:line:col: error: message' lines."""
    return [f"{format_location(loc, filename)}: error: {message}" for loc, message in problems]


def validate_text(text: str, filename: str = "<mlir>") -> ValidationResult:
    """Parse and verify; collect diagnostics instead of raising."""
    try:
        parse_module(text, filename)
    except MLIRTextError as err:
        return ValidationResult(False, err.diagnostics)
    return ValidationResult(True, [])


def validate_with_helion_opt(mlir_text: str, filename: str = "<mlir>") -> ValidationResult:
    """Parse and verify in process with torch, torch_c, helion and loom registered."""
    return validate_text(mlir_text, filename)
