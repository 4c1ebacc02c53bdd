"""helion-opt: an mlir-opt-compatible driver for the dialects our modules use.

Upstream mlir-opt does not know torch/torch_c/helion/loom, and torch-mlir-opt does not
know affine; this driver runs on torch-mlir's bindings, where all of them are registered.
Exit codes: 0 success, 1 invalid input, failed pass or diagnostic mismatch, 2 usage
error. Failures print diagnostics or one message, never a Python traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata

from torch_mlir import ir, passmanager

from helion_fx_mlir.errors import RewriteError, UsageError
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.input_checks import module_problems, text_problem, unlocated_parse_failure
from helion_fx_mlir.mlir.parse import file_position
from helion_fx_mlir.passes.pipelines import PIPELINES
from helion_fx_mlir.passes.registry import PASSES, Pass, PipelinePass, Rewrite
from helion_fx_mlir.tools.shell import read_input, run_tool, stage, write_output

PROG = "helion-opt"
SPLIT_MARKER = "// -----"
STDIN_NAME = "<stdin>"
# The name ir.Module.parse gives every location (it has no filename argument).
PARSER_FILENAME = "-"
# mlir-opt turns this note off under --verify-diagnostics; the bindings cannot, so it is dropped.
OP_ON_DIAGNOSTIC_NOTE = "see current operation:"
DIRECTIVE = re.compile(r"expected-(?:error|warning|note|remark)\b")
DIRECTIVE_FORM = "expected-error[@+N|@-N|@above|@below] {{message}} (or warning, note, remark)"
EXPECTED = re.compile(
    r"expected-(error|warning|note|remark)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*)\}\}"
)


class StepFailed(Exception):
    """A step failed after emitting its diagnostics; the chunk has no output."""


# --- options and steps -----------------------------------------------------------------


@dataclass
class Options:
    """The parsed command line; steps run in command-line order."""

    input: str = "-"
    output: str | None = None
    steps: list[Step] = field(default_factory=list)
    split_marker: str | None = None
    verify_diagnostics: bool = False
    print_ir_after_all: bool = False
    print_debuginfo: bool = False
    print_op_generic: bool = False
    allow_unregistered_dialect: bool = False

    def asm(self, op: ir.Operation) -> str:
        """Print as mlir-opt does: locations only with --mlir-print-debuginfo."""
        return op.get_asm(
            enable_debug_info=self.print_debuginfo, print_generic_op_form=self.print_op_generic
        )


@dataclass(frozen=True)
class PassStep:
    """A textual pass pipeline, already checked to parse; `label` says where it came from."""

    pipeline: str
    label: str = "the pass pipeline"

    def run(self, module: ir.Module, opts: Options) -> None:
        stage(f"{self.label} '{self.pipeline}'")
        pm = passmanager.PassManager.parse(self.pipeline)
        if opts.print_ir_after_all:
            pm.enable_ir_printing(
                print_after_all=True,
                enable_debug_info=opts.print_debuginfo,
                print_generic_op_form=opts.print_op_generic,
            )
        pm.run(module.operation)


@dataclass(frozen=True)
class RewriteStep:
    """A registered rewrite through the bindings (e.g. helion-resolve-symbols), verified
    afterwards."""

    name: str
    rewrite: Rewrite

    def run(self, module: ir.Module, opts: Options) -> None:
        stage(f"the rewrite --{self.name}")
        try:
            self.rewrite(module)
        except RewriteError as err:
            for location, message in err.problems:
                location.emit_error(message)
            raise StepFailed from None
        module.operation.verify()
        if opts.print_ir_after_all:
            sys.stderr.write(
                f"// -----// IR Dump After {self.rewrite.__name__}: {self.name} //----- //\n"
            )
            sys.stderr.write(opts.asm(module.operation) + "\n\n")
            sys.stderr.flush()


Step = PassStep | RewriteStep


def parse_error(pipeline: str) -> str | None:
    """Why the pipeline does not parse (first line of MLIR's message), or None if it does."""
    with mlir_context():
        try:
            passmanager.PassManager.parse(pipeline)
        except (ValueError, ir.MLIRError) as err:
            return str(err).strip().splitlines()[0]
    return None


def schedules_on_module(name: str) -> bool:
    """Whether a pass can run on the module, found without running it: a Python pass put
    first records that the pipeline was scheduled, then stops it. (Passes on an interface,
    e.g. FunctionOpInterface, parse at module level but only schedule on their ops.)"""
    scheduled: list[bool] = []

    def probe(op: ir.Operation, pass_: passmanager.ExternalPass) -> None:
        scheduled.append(True)
        pass_.signal_pass_failure()

    with mlir_context(), ir.Location.unknown():
        pm = passmanager.PassManager("builtin.module")
        pm.add(probe, name="helion-opt-schedule-probe")
        try:
            pm.add(name)
            pm.run(ir.Module.create().operation)
        except (ValueError, ir.MLIRError):
            pass
    return bool(scheduled)


def nests_in_any(name: str) -> bool:
    return parse_error(f"builtin.module(any({name}))") is None


# mlir-opt nests a pass flag implicitly: on the module if the pass can run there, else on
# each top-level op it can run on (func.func, llvm.func, ...), which `any` selects.
IMPLICIT_NESTING: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("builtin.module({})", schedules_on_module),
    ("builtin.module(any({}))", nests_in_any),
)


def pass_flag_pipeline(name: str, options: str | None) -> str:
    """The pipeline of `--NAME[=OPTIONS]`, nested the way mlir-opt nests it."""
    element = f"{name}{{{options}}}" if options else name
    for shape, fits in IMPLICIT_NESTING:
        if fits(name):
            error = parse_error(shape.format(element))
            if error:
                raise UsageError(f"invalid options in '--{name}={options}': {error}")
            return shape.format(element)
    raise UsageError(f"unknown option or pass '--{name}' (see --help)")


def registered_step(entry: Pass) -> Step:
    """A registered pass as a step, named by its registered name."""
    if isinstance(entry, PipelinePass):
        return PassStep(entry.pipeline, f"the pass --{entry.name}: pipeline")
    return RewriteStep(entry.name, entry.rewrite)


def helion_steps(name: str) -> list[Step] | None:
    """The steps of a helion pipeline or of one registered pass; None for other names."""
    if name in PIPELINES:
        return [registered_step(PASSES[p]) for p in PIPELINES[name].passes]
    if name in PASSES:
        return [registered_step(PASSES[name])]
    return None


def steps_for_flag(name: str, options: str | None) -> list[Step]:
    steps = helion_steps(name)
    if steps is None:
        return [PassStep(pass_flag_pipeline(name, options))]
    if options is not None:
        raise UsageError(f"'--{name}' takes no options")
    return steps


# --- command line ------------------------------------------------------------------------


def _set(attr: str) -> Callable[[Options, str | None], None]:
    return lambda opts, _: setattr(opts, attr, True)


def _set_output(opts: Options, value: str | None) -> None:
    opts.output = value


def _set_split(opts: Options, value: str | None) -> None:
    opts.split_marker = value or SPLIT_MARKER


def _add_pipeline(opts: Options, value: str | None) -> None:
    error = parse_error(value or "")
    if error:
        raise UsageError(f"invalid --pass-pipeline: {error}")
    opts.steps.append(PassStep(value or ""))


@dataclass(frozen=True)
class Flag:
    """A driver option: whether it takes a value ('no', 'optional' after '=', 'required')."""

    value: str
    apply: Callable[[Options, str | None], None]
    help: str
    metavar: str = ""

    def spelling(self, name: str) -> str:
        dashes = "-" if len(name) == 1 else "--"
        suffix = {"required": f" {self.metavar}", "optional": f"[={self.metavar}]"}.get(
            self.value, ""
        )
        return f"{dashes}{name}{suffix}"


FLAGS: dict[str, Flag] = {
    "o": Flag("required", _set_output, "write the output to FILE (default: stdout)", "FILE"),
    "pass-pipeline": Flag(
        "required", _add_pipeline, "e.g. 'builtin.module(func.func(cse))'", "PIPELINE"
    ),
    "split-input-file": Flag(
        "optional",
        _set_split,
        f"process chunks between '{SPLIT_MARKER}' lines on their own",
        "MARKER",
    ),
    "verify-diagnostics": Flag(
        "no", _set("verify_diagnostics"), "check diagnostics against expected-* comments"
    ),
    "mlir-print-ir-after-all": Flag(
        "no", _set("print_ir_after_all"), "print the IR after every pass (stderr)"
    ),
    "mlir-print-debuginfo": Flag("no", _set("print_debuginfo"), "print locations"),
    "mlir-print-op-generic": Flag("no", _set("print_op_generic"), "print ops in the generic form"),
    "allow-unregistered-dialect": Flag(
        "no", _set("allow_unregistered_dialect"), "accept ops of unknown dialects"
    ),
}


def _listing(summaries: dict[str, str]) -> str:
    """One `--name  summary` line each, the summaries in a column past the longest name."""
    width = max([38, *(len(name) for name in summaries)]) + 2
    return "\n".join(f"  {'--' + name:<{width}}{summary}" for name, summary in summaries.items())


def pass_list() -> str:
    """The helion pipelines and every registered pass, each with its summary."""
    pipelines = _listing({name: p.summary for name, p in PIPELINES.items()})
    passes = _listing({name: p.summary for name, p in sorted(PASSES.items())})
    return f"helion pipelines:\n{pipelines}\n\nhelion passes:\n{passes}\n"


def usage() -> str:
    flags = "\n".join(f"  {flag.spelling(name):<32}{flag.help}" for name, flag in FLAGS.items())
    info = f"  {'--help, --version':<32}this text; the versions\n"
    info += f"  {'--list-passes':<32}the helion pipelines and passes\n"
    return (
        f"usage: {PROG} [options] [FILE | -] [-o FILE]\n\n{__doc__.splitlines()[0]}\n\n"
        f"options (-flag and --flag alike):\n{flags}\n{info}\n{pass_list()}\n"
        "passes: any pass registered in torch-mlir's bindings, as --NAME or --NAME=OPTIONS\n"
        "(e.g. --canonicalize, --convert-torch-to-linalg,\n"
        "--one-shot-bufferize=bufferize-function-boundaries), applied in command-line order.\n"
    )


def version() -> str:
    return (
        f"{PROG} (helion-fx-mlir {metadata.version('helion-fx-mlir')}), "
        f"MLIR from torch-mlir {metadata.version('torch-mlir')}\n"
    )


INFO: dict[str, Callable[[], str]] = {
    "help": usage,
    "h": usage,
    "version": version,
    "list-passes": pass_list,
}


def flag_value(flag: Flag, token: str, value: str | None, rest: Iterator[str]) -> str | None:
    """The flag's value: after '=' or, for required values, the next argument."""
    if flag.value == "no" and value is not None:
        raise UsageError(f"'{token}' takes no value")
    if flag.value == "required" and value is None:
        value = next(rest, None)
        if value is None:
            raise UsageError(f"'{token}' needs a value")
    return value


def parse_command_line(argv: Sequence[str]) -> Options | str:
    """Options, or the text to print for --help/--version. Accepts -flag and --flag."""
    opts, inputs, tokens = Options(), [], iter(argv)
    for token in tokens:
        if token == "--":
            inputs += list(tokens)
        elif token == "-" or not token.startswith("-"):
            inputs.append(token)
        else:
            name, eq, value = token.removeprefix("-").removeprefix("-").partition("=")
            if name in INFO:
                return INFO[name]()
            flag = FLAGS.get(name)
            if flag is None:
                opts.steps += steps_for_flag(name, value if eq else None)
            else:
                flag.apply(opts, flag_value(flag, token, value if eq else None, tokens))
    if len(inputs) > 1:
        raise UsageError(f"one input file expected, got {len(inputs)}: {' '.join(inputs)}")
    opts.input = inputs[0] if inputs else "-"
    return opts


# --- locations and diagnostics -----------------------------------------------------------


def relocated(loc: ir.Location, filename: str) -> ir.Location:
    """The location with the parser's '-' file replaced by the input's name (the parser
    only makes plain file locations; names, fusions and call sites come from the text)."""
    if isinstance(loc, ir.FileLineColLoc) and loc.filename == PARSER_FILENAME:
        return ir.Location.file(filename, loc.start_line, loc.start_col, loc.end_line, loc.end_col)
    return loc


def relocate(module: ir.Module, filename: str) -> None:
    """Name the input file in every op and block argument location, as mlir-opt does."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        op.location = relocated(op.location, filename)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    arg.set_location(relocated(arg.location, filename))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


@dataclass(frozen=True)
class Diagnostic:
    """A diagnostic copied out of the handler callback (the binding's object dies with it)."""

    kind: str
    message: str
    location: ir.Location | None = None
    notes: tuple[Diagnostic, ...] = ()

    @classmethod
    def of(cls, diag: ir.Diagnostic) -> Diagnostic:
        notes = tuple(cls.of(note) for note in diag.notes)
        return cls(diag.severity.name.lower(), diag.message.strip(), diag.location, notes)

    def where(self, filename: str) -> str:
        pos = file_position(self.location)
        if pos is None:
            return filename
        file, line, col = pos
        return f"{filename if file == PARSER_FILENAME else file}:{line}:{col}"

    def render(self, filename: str) -> str:
        lines = [f"{self.where(filename)}: {self.kind}: {self.message}"]
        return "\n".join(lines + [note.render(filename) for note in self.notes])


@contextlib.contextmanager
def diagnostics_into(sink: list[Diagnostic], allow_unregistered: bool) -> Iterator[None]:
    """Route every diagnostic of the shared context, errors included, to sink in order."""
    ctx = mlir_context()

    def handle(diag: ir.Diagnostic) -> bool:
        sink.append(Diagnostic.of(diag))
        return True

    saved = ctx.emit_error_diagnostics, ctx.allow_unregistered_dialects
    handler = ctx.attach_diagnostic_handler(handle)
    ctx.emit_error_diagnostics, ctx.allow_unregistered_dialects = True, allow_unregistered
    try:
        with ctx:
            yield
    finally:
        handler.detach()
        ctx.emit_error_diagnostics, ctx.allow_unregistered_dialects = saved


# --- processing --------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkResult:
    """What one chunk produced: printed module (None on failure) and its diagnostics."""

    output: str | None
    diagnostics: list[Diagnostic]


def split_input(text: str, marker: str | None) -> list[str]:
    """Chunks between marker lines, each padded with newlines so lines keep their numbers."""
    if marker is None:
        return [text]
    lines, chunks, start = text.split("\n"), [], 0
    for number, line in enumerate([*lines, marker]):
        if line.startswith(marker):
            chunks.append("\n" * start + "\n".join(lines[start:number]))
            start = number + 1
    return chunks


def process(chunk: str, opts: Options, filename: str) -> ChunkResult:
    """Parse, verify and run every step on one chunk; diagnostics instead of exceptions."""
    diagnostics: list[Diagnostic] = []
    module: ir.Module | None = None
    with diagnostics_into(diagnostics, opts.allow_unregistered_dialect):
        try:
            module = parse_checked(chunk, filename)
            for step in opts.steps:
                step.run(module, opts)
            return ChunkResult(opts.asm(module.operation), diagnostics)
        except ir.MLIRError as err:
            if not any(d.kind == "error" for d in diagnostics):
                diagnostics.append(_unreported(err, chunk, filename, module))
        except StepFailed:
            pass
        return ChunkResult(None, [_placed(d, module) for d in diagnostics])


def _unreported(
    err: ir.MLIRError, chunk: str, filename: str, module: ir.Module | None
) -> Diagnostic:
    """An error MLIR raised without a diagnostic: a parse failure is placed by looking at
    the text, a failed pass at the module it ran on."""
    if module is not None:
        return Diagnostic("error", str(err), module.operation.location)
    problem = unlocated_parse_failure(chunk)
    return Diagnostic(
        "error", problem.message, ir.Location.file(filename, problem.line, problem.col)
    )


def _placed(diag: Diagnostic, module: ir.Module | None) -> Diagnostic:
    """A diagnostic at no place in the input (a pass's op with an unknown location) is
    reported at the module the pass ran on, as MLIR reports a failed pass."""
    if module is None:
        return diag
    notes = tuple(_placed(note, module) for note in diag.notes)
    if file_position(diag.location) is not None:
        return dataclasses.replace(diag, notes=notes)
    return dataclasses.replace(diag, location=module.operation.location, notes=notes)


def parse_checked(chunk: str, filename: str) -> ir.Module:
    """Parse, name the input file in locations, and check what passes rely on; problems
    are emitted as located errors (then StepFailed)."""
    problem = text_problem(chunk)
    if problem is not None:
        ir.Location.file(filename, problem.line, problem.col).emit_error(problem.message)
        raise StepFailed
    stage("the MLIR parser")
    module = ir.Module.parse(chunk)
    relocate(module, filename)
    problems = module_problems(module)
    for location, message in problems:
        location.emit_error(message)
    if problems:
        raise StepFailed
    return module


# --- --verify-diagnostics ----------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """One `// expected-KIND@WHERE {{message}}` comment and the line it applies to."""

    kind: str
    message: str
    line: int
    comment_line: int
    comment_col: int


def expectations(text: str) -> tuple[list[Expectation], list[int]]:
    """Expected diagnostics in text (mlir-opt's @+N/@-N/@above/@below designators), and
    the lines of malformed directives (and of @below with no line below), which would
    otherwise be silently ignored."""
    found: list[Expectation] = []
    below: list[tuple[re.Match[str], int]] = []
    malformed: list[int] = []
    last_plain = 0
    for number, line in enumerate(text.split("\n"), start=1):
        match = EXPECTED.search(line)
        if match is None and DIRECTIVE.search(line):
            malformed.append(number)
        if match is None:
            found += [_expectation(m, number, n) for m, n in below]
            below, last_plain = [], number
        elif match.group(2) == "below":
            below.append((match, number))
        else:
            found.append(
                _expectation(match, _target_line(match.group(2), number, last_plain), number)
            )
    return found, malformed + [number for _, number in below]


def _target_line(designator: str | None, number: int, last_plain: int) -> int:
    if designator == "above":
        return last_plain
    return number + int(designator or 0)


def _expectation(match: re.Match[str], line: int, comment_line: int) -> Expectation:
    kind, _, message = match.groups()
    return Expectation(kind, message, line, comment_line, match.start() + 1)


def reported(diagnostics: list[Diagnostic]) -> Iterator[Diagnostic]:
    """Diagnostics and their notes as --verify-diagnostics sees them (one by one)."""
    for diag in diagnostics:
        yield diag
        yield from (
            note for note in diag.notes if not note.message.startswith(OP_ON_DIAGNOSTIC_NOTE)
        )


def verify_expectations(diagnostics: list[Diagnostic], chunk: str, filename: str) -> list[str]:
    """Mismatches between produced and expected diagnostics, as error lines."""
    pending, malformed = expectations(chunk)
    problems = [
        f"{filename}:{line}: error: malformed directive, want {DIRECTIVE_FORM}"
        for line in malformed
    ]
    for diag in reported(diagnostics):
        pos = file_position(diag.location)
        line = pos[1] if pos else None
        match = next(
            (
                e
                for e in pending
                if (e.kind, e.line) == (diag.kind, line) and e.message in diag.message
            ),
            None,
        )
        if match is None:
            problems.append(
                f"{diag.where(filename)}: error: unexpected {diag.kind}: {diag.message}"
            )
        else:
            pending.remove(match)
    problems += [
        f"{filename}:{e.comment_line}:{e.comment_col}: error: "
        f'expected {e.kind} "{e.message}" was not produced'
        for e in pending
    ]
    return problems


# --- driver ------------------------------------------------------------------------------


def report(results: list[ChunkResult], chunks: list[str], opts: Options, filename: str) -> bool:
    """Print diagnostics (or, under --verify-diagnostics, mismatches); True on success."""
    if opts.verify_diagnostics:
        problems = [
            p
            for r, c in zip(results, chunks)
            for p in verify_expectations(r.diagnostics, c, filename)
        ]
    else:
        problems = [d.render(filename) for r in results for d in r.diagnostics]
    for problem in problems:
        print(problem, file=sys.stderr)
    if opts.verify_diagnostics:
        return not problems
    return all(r.output is not None for r in results)


def run(opts: Options) -> int:
    filename = STDIN_NAME if opts.input == "-" else opts.input
    chunks = split_input(read_input(opts.input), opts.split_marker)
    results = [process(chunk, opts, filename) for chunk in chunks]
    ok = report(results, chunks, opts, filename)
    if ok or opts.output is None:
        write_output(f"{SPLIT_MARKER}\n".join(r.output or "" for r in results), opts.output)
    return 0 if ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (argv None: the process's, guarded against crashes) or argv."""
    return run_tool(PROG, lambda: _main(sys.argv[1:] if argv is None else argv), guard=argv is None)


def _main(argv: Sequence[str]) -> int:
    parsed = parse_command_line(argv)
    if isinstance(parsed, str):
        sys.stdout.write(parsed)
        return 0
    return run(parsed)


if __name__ == "__main__":
    sys.exit(main())
