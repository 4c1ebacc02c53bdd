"""What both command-line tools share: reading/writing files, exit codes, the crash guard.

Exit codes: 0 success, 1 invalid input (or a mismatch), 2 usage error. Every failure
prints one message; no Python traceback reaches the terminal. From the shell, the work
runs in a forked child: a crash inside MLIR or torch-mlir that no check foresaw ends
with a report naming the step that crashed and exit 1, not with a signal.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sys
from collections.abc import Callable

from helion_fx_mlir import processes
from helion_fx_mlir.errors import HelionMLIRError, InputError, UsageError
from helion_fx_mlir.mlir.input_checks import TextProblem, decode

EXIT_INTERRUPTED = 130
# Where the guarded child reports the step it is in (None outside a guarded run).
_stage_pipe: int | None = None


def run_tool(prog: str, action: Callable[[], int], guard: bool = False) -> int:
    """Run a tool's body, turning every failure into one message and an exit code; with
    `guard`, in a child process whose crash is reported as an internal error."""
    return _guarded(prog, action) if guard else _run(prog, action)


def _run(prog: str, action: Callable[[], int]) -> int:
    try:
        return action()
    except InputError as err:
        print(err, file=sys.stderr)
        return 1
    except UsageError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except HelionMLIRError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as err:
        print(f"{prog}: internal error: {err}", file=sys.stderr)
        return 1


def stage(name: str) -> None:
    """Name the step about to run, so that a crash report can say which one crashed."""
    if _stage_pipe is not None:
        os.write(_stage_pipe, f"{name}\n".encode())


def _guarded(prog: str, action: Callable[[], int]) -> int:
    read_end, write_end = os.pipe()
    pid = processes.fork(lambda: _staged_run(prog, action, read_end, write_end))
    os.close(write_end)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the child gets ^C and ends
    try:
        stages = _read_all(read_end)
        ended = processes.wait(pid)
    finally:
        signal.signal(signal.SIGINT, previous)
    return _exit_code(prog, ended, stages)


def _staged_run(prog: str, action: Callable[[], int], read_end: int, write_end: int) -> int:
    global _stage_pipe
    os.close(read_end)
    _stage_pipe = write_end
    return _run(prog, action)


def _read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def _exit_code(prog: str, ended: processes.Ended, stages: str) -> int:
    """The child's exit code; a death by signal becomes a one-line report and 1."""
    if ended.signal is None:
        return ended.code or 0
    if ended.signal == signal.SIGINT:
        return EXIT_INTERRUPTED
    step = stages.splitlines()[-1] if stages.strip() else "the tool"
    print(
        f"{prog}: internal error: {step} crashed on this input (signal {ended.signal}, "
        f"{signal.Signals(ended.signal).name}); please report it with the input",
        file=sys.stderr,
    )
    return 1


def read_input(path: str) -> str:
    """A file's text, or stdin for '-'; bytes that are not UTF-8 are an error at their place."""
    name = "<stdin>" if path == "-" else path
    try:
        data = _stdin_bytes() if path == "-" else pathlib.Path(path).read_bytes()
    except OSError as err:
        raise HelionMLIRError(f"cannot read {name}: {err.strerror}") from None
    text = decode(data)
    if isinstance(text, TextProblem):
        raise InputError(f"{name}:{text.line}:{text.col}: error: {text.message}")
    return text


def _stdin_bytes() -> bytes:
    """stdin's bytes (a replaced text stdin, as in tests, has no buffer: its text is UTF-8)."""
    stream = getattr(sys.stdin, "buffer", None)
    return stream.read() if stream is not None else sys.stdin.read().encode()


def write_output(text: str, path: str | None) -> None:
    """To a file, or stdout for None / '-'."""
    if path is None or path == "-":
        sys.stdout.write(text)
        return
    try:
        pathlib.Path(path).write_text(text)
    except OSError as err:
        raise HelionMLIRError(f"cannot write {path}: {err.strerror}") from None
