"""What both command-line tools share: reading/writing files and exit codes.

Exit codes: 0 success, 1 invalid input (or a mismatch), 2 usage error. Every failure
prints one message; no Python traceback reaches the terminal.
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable

from .errors import HelionMLIRError, UsageError


def run_tool(prog: str, action: Callable[[], int]) -> int:
    """Run a tool's body, turning every failure into one message and an exit code."""
    try:
        return action()
    except UsageError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except HelionMLIRError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - kernels and passes can raise anything
        print(f"{prog}: error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


def read_input(path: str) -> str:
    """A file's text, or stdin for '-'."""
    try:
        return sys.stdin.read() if path == "-" else pathlib.Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise HelionMLIRError(f"cannot read {path}: {getattr(err, 'strerror', None) or err}") from None


def write_output(text: str, path: str | None) -> None:
    """To a file, or stdout for None / '-'."""
    if path is None or path == "-":
        sys.stdout.write(text)
        return
    try:
        pathlib.Path(path).write_text(text)
    except OSError as err:
        raise HelionMLIRError(f"cannot write {path}: {err.strerror}") from None
