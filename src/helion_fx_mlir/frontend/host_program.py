"""The kernel's host code as a plain Python function, with the device loops replaced.

Helion's HostFunction keeps the kernel body as statements; top-level `for` loops over
`hl.tile`/`hl.grid` are the device part. We keep every other statement (shape math,
allocations, views, the return) and put one launch call where the last device loop
was, so the compiled MLIR func runs exactly where Helion would launch its kernel.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

import helion.language as hl
from helion._compiler.ast_extension import LoopType
from helion._compiler.output_header import SOURCE_MODULE
from helion.language._decorators import is_api_func

LAUNCH = "__helion_fx_mlir_launch__"
BLOCK_SIZE = "__helion_fx_mlir_block_size__"


def is_device_loop(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.For) and getattr(stmt, "_loop_type", None) == LoopType.GRID


def host_source(host_function: Any) -> str:
    """Source of `def <kernel>(<params>)` running the host statements and one launch;
    `hl.register_block_size(...)` calls read the config's block size of their block id.
    Each statement starts on its line in the kernel's file where it can, so that a failing
    host statement (an assert on the shapes) is reported at the user's own line."""
    body = list(host_function.body)
    last = max(i for i, stmt in enumerate(body) if is_device_loop(stmt))
    statements = []
    for i, stmt in enumerate(body):
        if i == last:
            statements.append((stmt, f"{LAUNCH}(locals())"))
        elif not is_device_loop(stmt):
            statements.append((stmt, _unparse_with_block_sizes(stmt)))
    params = ast.unparse(host_function.args)
    lines = [""] * (_source_line(statements[0][0]) - 2) + [f"def {host_function.name}({params}):"]
    for stmt, text in statements:
        lines += [""] * (_source_line(stmt) - 1 - len(lines))
        lines += textwrap.indent(text, "    ").splitlines()
    return "\n".join(lines)


def _source_line(stmt: ast.stmt) -> int:
    """The statement's line in the kernel's file (0 when Helion kept none)."""
    location = getattr(stmt, "_location", None)
    return getattr(location, "lineno", 0) or 0


def host_value(scope: dict[str, Any], name: str) -> Any:
    """A host variable, or a value Helion names by a Python expression over them (a tensor
    or scalar a closure captures: `epilogue.__closure__[0].cell_contents`)."""
    return scope[name] if name.isidentifier() else eval(name, {}, scope)


def _unparse_with_block_sizes(stmt: ast.stmt) -> str:
    """The statement's source with each call Helion typed as a block size (register_block_size)
    replaced by `BLOCK_SIZE(block_id)`; built on a plain copy, so Helion's AST stays as is."""
    return ast.unparse(ast.fix_missing_locations(_plain(stmt)))


def _plain(node: Any) -> Any:
    """A copy of Helion's AST as plain `ast` nodes, block-size calls replaced."""
    if isinstance(node, list):
        return [_plain(item) for item in node]
    if not isinstance(node, ast.AST):
        return node
    info = getattr(node, "_type_info", None)
    if isinstance(node, ast.Call) and info is not None and type(info).__name__ == "BlockSizeType":
        return ast.Call(ast.Name(BLOCK_SIZE, ast.Load()), [ast.Constant(info.block_id)], [])
    plain = next(cls for cls in type(node).__mro__ if cls.__module__ == "ast")
    return plain(
        **{name: _plain(getattr(node, name)) for name in node._fields if hasattr(node, name)}
    )


def _eager(value: Any) -> Any:
    """Helion API functions called on the host run their eager (ref-mode) implementation."""
    if value is hl:
        return _eager_language()
    if is_api_func(value) and value._ref_fn is not None:
        return value._ref_fn
    return value


@functools.cache
def _eager_language() -> types.SimpleNamespace:
    return types.SimpleNamespace(
        **{name: _eager(getattr(hl, name)) for name in dir(hl) if not name.startswith("__")}
    )


@dataclasses.dataclass(frozen=True)
class HostProgram:
    """What the host function is built from: the host source, the kernel function whose
    globals and closure it reads, and the modules Helion names it imports (by alias).
    `to_json`/`from_json` carry it to a new process that never binds the kernel."""

    name: str
    source: str
    fn: Callable[..., Any]
    imports: dict[str, tuple[str, str | None]]  # alias -> (module, member)
    values: dict[str, Any] | None = None  # alias -> the imported value, when traced here

    @classmethod
    def of(cls, host_function: Any) -> HostProgram:
        imported = host_function.global_imports.values()
        return cls(
            host_function.name,
            host_source(host_function),
            host_function.fn,
            {i.alias: (i.module, i.member) for i in imported},
            {i.alias: i.value for i in imported},
        )

    def modules(self) -> dict[str, Any]:
        """The imported values by alias. Helion names module globals by the module they
        live in (`_source_module.scale`), which code Helion generates may not register."""
        values: dict[str, Any] = {SOURCE_MODULE: _source_module(self.fn)}
        if self.values is not None:
            return {**values, **self.values}
        for alias, (module, member) in self.imports.items():
            if alias != SOURCE_MODULE or module in sys.modules:
                imported = importlib.import_module(module)
                values[alias] = getattr(imported, member) if member is not None else imported
        return values

    def portable(self) -> bool:
        """Whether importing each module by name gives the value traced here, as a new
        process rebuilding the program from JSON would."""
        if self.values is None:
            return True
        try:
            rebuilt = dataclasses.replace(self, values=None).modules()
        except (ImportError, AttributeError):
            return False
        return all(rebuilt.get(alias) is value for alias, value in self.values.items())

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "imports": self.imports}

    @classmethod
    def from_json(cls, fields: dict[str, Any], fn: Callable[..., Any]) -> HostProgram:
        imports = {alias: (module, member) for alias, (module, member) in fields["imports"].items()}
        return cls(fields["name"], fields["source"], fn, imports)


def build_host_function(
    host: Any,
    launch: Callable[[dict[str, Any]], None],
    config: Any,
    block_sizes: dict[int, int],
) -> Callable[..., Any]:
    """Compile the host source (of a `HostProgram`, or of Helion's HostFunction) against
    the kernel's globals and closure. As in Helion's host code, `hl.register_tunable`
    gives the config's value and `hl.register_block_size` the config's block size
    (`block_sizes`, by block id): the device uses the same ones."""
    program = host if isinstance(host, HostProgram) else HostProgram.of(host)
    fn = program.fn
    scope = {name: _eager(value) for name, value in fn.__globals__.items()}
    scope.update(inspect.getclosurevars(fn).nonlocals)
    modules = program.modules()
    scope = _with_tunables(scope, config)
    scope[BLOCK_SIZE] = block_sizes.__getitem__
    scope[LAUNCH] = lambda variables: launch({**modules, **variables})
    code = compile(program.source, fn.__code__.co_filename, "exec")
    exec(code, scope)
    return scope[program.name]


def _source_module(fn: Any) -> Any:
    """The module whose globals `fn` reads. Code Helion generates (its backward kernels)
    runs in globals of a module it never registers: those globals stand in for it."""
    return sys.modules.get(fn.__module__) or types.SimpleNamespace(**fn.__globals__)


def _with_tunables(scope: dict[str, Any], config: Any) -> dict[str, Any]:
    """`register_tunable(name, fragment)` (however the kernel's module names it) returns
    config[name], or the fragment's default when the config has no entry."""

    def tunable(name: str, fragment: Any) -> Any:
        return config.config.get(name, fragment.default())

    language = types.SimpleNamespace(**{**vars(_eager_language()), "register_tunable": tunable})
    replaced = [
        (hl.register_tunable, tunable),
        (_eager(hl.register_tunable), tunable),
        (_eager_language(), language),
    ]
    return {
        name: next((new for old, new in replaced if value is old), value)
        for name, value in scope.items()
    }
