"""lit's ShTest, with `helion-mlir emit` run inside lit's worker process.

A `helion-mlir emit` process spends ~6 s importing torch, Helion and torch-mlir for ~1 s
of work. lit's workers live for the whole run, so a RUN line of the form
`helion-mlir emit ARGS | NEXT [| ...]` emits in the worker (the imports are paid once per
worker), in the test's environment and directory, writes the module to a file and runs
`NEXT < FILE [| ...]` in lit's shell: FileCheck, its options and its failure report are
ShTest's. An emit that fails in the worker runs its line as written, so the failure reads
as the shell's. Every other line runs as written.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Iterator, Mapping

import lit.formats
import lit.Test
import lit.TestRunner as runner

from helion_fx_mlir.tools import cli

# Plain words only in the emit and the command it feeds (no quotes, redirections,
# expansions, nor parentheses, which would end lit's %dbg(...)): splitting on blanks and
# on the first pipe is then the shell's own parse.
WORDS = r"[^|'\"<>&;$`\\()]+?"
EMIT = re.compile(rf"\s*helion-mlir emit (?P<args>{WORDS}) *\| *(?P<next>{WORDS})(?P<tail> *\|.*)?")


class EmitInProcess(lit.formats.ShTest):
    """ShTest whose `helion-mlir emit ... |` pipelines emit in the lit worker."""

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
    """The line, its emit done here into `output` and replaced by `< output`; or the line
    as written when it is no such pipeline or the emit failed."""
    located = re.fullmatch(runner.kPdbgRegex, line)
    match = located and EMIT.fullmatch(located.group(2))
    if not match:
        return line
    args = match["args"].split()
    code, text = _emit(args, cwd, env)
    if code != 0:
        return line
    with open(output, "w", encoding="utf-8") as file:
        file.write(text)
    where = f"{located.group(1)}: helion-mlir emit {match['args']} ran in lit, into {output}"
    return runner.buildPdbgCommand(where, f"{match['next']} < {output}{match['tail'] or ''}")


def _emit(args: list[str], cwd: str, env: Mapping[str, str]) -> tuple[int | None, str]:
    """`helion-mlir emit ARGS`'s exit code (None for a SystemExit, as of --help) and stdout."""
    out = io.StringIO()
    with (
        _environment(env),
        contextlib.chdir(cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        try:
            return cli.main(["emit", *args]), out.getvalue()
        except SystemExit:
            return None, ""


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
