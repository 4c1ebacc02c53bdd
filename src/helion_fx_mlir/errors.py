"""Error types the package raises to its users."""

from __future__ import annotations

from typing import Any


class HelionMLIRError(Exception):
    """Base class of every error this package raises on purpose."""


class LoweringError(HelionMLIRError):
    """An FX node could not be lowered; names the node, its target and source line."""

    def __init__(self, node: Any, reason: str) -> None:
        self.node_name = getattr(node, "name", str(node))
        self.target = target_name(getattr(node, "target", None))
        self.source = source_line(node)
        self.reason = reason
        super().__init__(
            f"cannot lower FX node '{self.node_name}' (target {self.target}) "
            f"at {self.source}: {reason}"
        )


class InternalError(HelionMLIRError):
    """A bug in helion-fx-mlir: a rule failed in a way no input should make it fail. Names
    the FX node, its target and the kernel line, so that the bug can be reported."""

    def __init__(self, node: Any, error: BaseException) -> None:
        self.node_name = getattr(node, "name", str(node))
        self.target = target_name(getattr(node, "target", None))
        self.source = source_line(node)
        super().__init__(
            f"internal error (a bug in helion-fx-mlir, please report it) while lowering FX "
            f"node '{self.node_name}' (target {self.target}) at {self.source}: "
            f"{type(error).__name__}: {error}"
        )


class CodegenError(HelionMLIRError):
    """LLVM aborts generating a kernel's machine code (found in a forked child, so the
    process is unharmed): a bug in helion-fx-mlir's output or in LLVM, to report."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"LLVM cannot generate the machine code of kernel '{name}' with this config: it "
            "aborts at every optimization level (in a child process; this one is unharmed). "
            "Another config may compile; please report it to helion-fx-mlir"
        )


class UsageError(HelionMLIRError):
    """A bad command line: the tools exit with code 2 and one message."""


class SpecError(UsageError):
    """A command-line spec (argument, config, kernel reference) could not be understood."""


class InputError(HelionMLIRError):
    """Input rejected at a place in it: the message is already 'file:line:col: error: ...'."""


class RewriteError(HelionMLIRError):
    """A rewrite through the bindings rejected ops: (location, message) pairs, so that
    each driver reports them at their place (helion-opt as diagnostics, the API as text)."""

    def __init__(self, stage: str, problems: list[tuple[Any, str]]) -> None:
        self.stage = stage
        self.problems = problems
        super().__init__(f"{stage} failed: " + "; ".join(message for _, message in problems))


class MLIRTextError(HelionMLIRError):
    """MLIR text failed to parse, verify or run through a pass pipeline."""

    def __init__(self, stage: str, diagnostics: list[str]) -> None:
        self.stage = stage
        self.diagnostics = diagnostics
        super().__init__(f"{stage} failed:\n" + "\n".join(diagnostics))


def target_name(target: Any) -> str:
    """A readable, stable name for an FX node target (op overload or function)."""
    if target is None:
        return "<none>"
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", "") or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if name is None or "OpOverload" in type(target).__name__:
        return str(target)
    return f"{module}.{name}" if module else name


def source_line(node: Any) -> str:
    """'file.py:LINE' of the kernel line that produced this node, if Helion kept it."""
    meta = getattr(node, "meta", {}) or {}
    loc = meta.get("location")
    if loc is not None and getattr(loc, "lineno", None):
        return f"{loc.filename}:{loc.lineno}"
    return "<unknown source>"


def mlir_location(loc: Any) -> str | None:
    """loc("file.py":LINE:COL) for a Helion SourceLocation (MLIR columns are 1-based)."""
    if loc is None or not getattr(loc, "lineno", None):
        return None
    return f"loc({mlir_string(loc.filename)}:{loc.lineno}:{(loc.colno or 0) + 1})"


def mlir_string(text: str) -> str:
    """A quoted MLIR string literal escaped as MLIR's printer does (llvm::printEscapedString:
    UTF-8 bytes other than printable ASCII, and '"', become \\XX), without loading MLIR."""
    return '"' + "".join(_escaped_byte(b) for b in text.encode(errors="surrogateescape")) + '"'


def _escaped_byte(byte: int) -> str:
    if byte == ord("\\"):
        return "\\\\"
    if 0x20 <= byte < 0x7F and byte != ord('"'):
        return chr(byte)
    return f"\\{byte:02X}"
