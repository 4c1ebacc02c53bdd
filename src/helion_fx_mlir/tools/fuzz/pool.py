"""What both fuzzers' drivers share: cases striped over worker threads (each driving one
child process), a progress line, and the tail of a child's stderr."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TypeVar

Result = TypeVar("Result")


class Progress:
    """A line on stderr every 100 results, for long runs."""

    def __init__(self, label: str, total: int, noun: str, failing: Collection[str]) -> None:
        self.label, self.total, self.noun, self.failing = label, total, noun, failing
        self.counts, self._lock = Counter[str](), threading.Lock()

    def add(self, kind: str) -> None:
        with self._lock:
            self.counts[kind] += 1
            done = sum(self.counts.values())
            if done % 100 == 0 and done < self.total:
                failing = sum(self.counts[k] for k in self.failing)
                print(
                    f"{self.label}: {done}/{self.total} {self.noun}, {failing} failing",
                    file=sys.stderr,
                    flush=True,
                )


def run_striped(
    total: int, jobs: int, run_stripe: Callable[[range], Sequence[Result]]
) -> list[Result]:
    """Cases 0..total-1 in `jobs` stripes (job j takes j, j + jobs, ...), one thread each,
    results in stripe order (callers sort by case index)."""
    stripes = [range(job, total, jobs) for job in range(jobs)]
    with ThreadPoolExecutor(jobs) as pool:
        return [result for done in pool.map(run_stripe, stripes) for result in done]


def stderr_tail(stderr: IO[bytes], start: int = 0) -> str:
    """The last lines a child wrote to stderr since `start` (a crash's own message)."""
    stderr.seek(start)
    lines = [line.strip() for line in stderr.read().decode(errors="replace").splitlines()]
    lines = [line for line in lines if line]
    return " | ".join(lines[-3:])[-300:] if lines else "(no stderr)"
