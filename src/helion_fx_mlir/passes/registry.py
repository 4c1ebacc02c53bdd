"""Every pass by name: rewrites through the bindings and upstream pass pipelines alike.

A pipeline is a list of these names, and helion-opt runs any one of them as
`--NAME`, so each rewrite can be run and lit-tested alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch_mlir import ir

Rewrite = Callable[[ir.Module], None]


@dataclass(frozen=True)
class RewritePass:
    """A rewrite through the bindings; its errors name their own stage (RewriteError)."""

    name: str
    summary: str
    rewrite: Rewrite


@dataclass(frozen=True)
class PipelinePass:
    """An upstream pass pipeline, and the stage its failures are reported as."""

    name: str
    summary: str
    pipeline: str
    stage: str


Pass = RewritePass | PipelinePass

PASSES: dict[str, Pass] = {}


def _add(entry: Pass) -> None:
    if entry.name in PASSES:
        raise ValueError(f"pass '{entry.name}' is registered twice")
    PASSES[entry.name] = entry


def register(name: str, summary: str) -> Callable[[Rewrite], Rewrite]:
    """Decorator: register the rewrite as pass `name` (returned unchanged)."""

    def add(rewrite: Rewrite) -> Rewrite:
        _add(RewritePass(name, summary, rewrite))
        return rewrite

    return add


def register_pipeline(name: str, summary: str, pipeline: str, stage: str) -> None:
    """Register an upstream pass pipeline as pass `name`."""
    _add(PipelinePass(name, summary, pipeline, stage))
