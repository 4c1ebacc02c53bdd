"""lit's ShTest, with `helion-mlir emit` and `helion-opt` run inside lit's worker process.

A `helion-mlir emit` process spends ~6 s importing torch, Helion and torch-mlir for ~1 s
of work, a `helion-opt` process 0.55 s of imports for a few milliseconds. lit's workers
live for the whole run, so a RUN line whose leading stages are those tools
(`helion-mlir emit ARGS | helion-opt ARGS | NEXT [| ...]`, `helion-opt ARGS | NEXT`) runs
them in the worker (the imports are paid once per worker), in the test's environment and
directory, each stage's output the next one's stdin, writes the last one's output to a
file and runs `NEXT < FILE [| ...]` in lit's shell: FileCheck, its options and its
failure report are ShTest's. A stage that fails in the worker runs its line as written, so
the failure reads as the shell's. Every other line (`not helion-opt ...`, a tool's output
read by no pipe) runs as written.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator, Mapping

import lit.formats
import lit.Test
import lit.TestRunner as runner

from helion_fx_mlir.tools import cli, opt

# Plain words only in the in-process stages (no quotes, redirections, expansions, nor
# parentheses, which would end lit's %dbg(...)): splitting them on blanks and pipes is then
# the shell's own parse.
WORDS = r"[^|'\"<>&;$`\\()]*?"
STAGE = re.compile(rf"\s*(?P<tool>helion-mlir emit|helion-opt)(?P<args>(?: {WORDS})?) *\| *")
NEXT = re.compile(rf"(?P<next>{WORDS}[^ |'\"<>&;$`\\()]) *(?P<tail>\|.*)?")
TOOLS = {"helion-mlir emit": lambda args: cli.main(["emit", *args]), "helion-opt": opt.main}


class EmitInProcess(lit.formats.ShTest):
    """ShTest whose `helion-mlir emit ... |` and `helion-opt ... |` stages run in the lit
    worker."""

    def execute(self, test: lit.Test.Test, lit_config: object) -> lit.Test.Result:
        if test.config.unsupported:
            return lit.Test.Result(lit.Test.UNSUPPORTED, "Test is unsupported")
        script = runner.parseIntegratedTestScript(test)
        if isinstance(script, lit.Test.Result):
            return script
        tmp_dir, tmp_base = runner.getTempPaths(test)
        script = runner.applySubstitutions(
            script,
            runner.getDefaultSubstitutions(test, tmp_dir, tmp_base),
            dict.fromkeys(test.config.available_features, True),
            recursion_limit=test.config.recursiveExpansionLimit,
        )
        os.makedirs(os.path.dirname(tmp_base), exist_ok=True)
        cwd = os.path.dirname(test.getExecPath())
        env = test.config.environment
        script = [
            _emit_in_process(line, f"{tmp_base}.emit{index}.mlir", cwd, env)
            for index, line in enumerate(script)
        ]
        return runner._runShTest(test, lit_config, False, script, tmp_base)


def _emit_in_process(line: str, output: str, cwd: str, env: Mapping[str, str]) -> str:
    """The line, its leading tool stages run here into `output` and replaced by
    `< output`; or the line as written when it has none, or one of them failed."""
    located = re.fullmatch(runner.kPdbgRegex, line)
    command = located.group(2) if located else ""
    stages, rest = [], 0
    while match := STAGE.match(command, rest):
        stages.append((match["tool"], match["args"].split()))
        rest = match.end()
    following = NEXT.fullmatch(command, rest)
    if not located or not stages or not following:
        return line
    text: str | None = ""
    for tool, args in stages:
        text = _run(tool, args, text, cwd, env)
        if text is None:
            return line
    with open(output, "w", encoding="utf-8") as file:
        file.write(text)
    ran = " | ".join(f"{tool} {' '.join(args)}" for tool, args in stages)
    where = f"{located.group(1)}: {ran} ran in lit, into {output}"
    tail = f" {following['tail']}" if following["tail"] else ""
    return runner.buildPdbgCommand(where, f"{following['next']} < {output}{tail}")


def _run(tool: str, args: list[str], stdin: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The tool's stdout, given `stdin`; None if it exited with a failure (or a SystemExit,
    as of --help)."""
    out = io.StringIO()
    with (
        _environment(env),
        contextlib.chdir(cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(io.StringIO()),
        _stdin(stdin),
    ):
        try:
            code = TOOLS[tool](args)
        except SystemExit:
            return None
    return out.getvalue() if code == 0 else None


@contextlib.contextmanager
def _stdin(text: str) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """os.environ as lit gives a test's commands (Helion and torch read settings from it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
