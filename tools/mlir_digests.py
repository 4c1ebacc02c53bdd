"""Digests of the MLIR every sample kernel generates and lowers to, per dtype and config.

Run before and after a change that must not alter output (a refactor), then compare:
    python tools/mlir_digests.py > before.json   # on the old commit
    python tools/mlir_digests.py --compare before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys

import helion_fx_mlir
from helion_fx_mlir.examples import EXAMPLES

# Debug locations name the kernel's file: digests are the same from any checkout.
SOURCE_ROOT = str(pathlib.Path(helion_fx_mlir.__file__).resolve().parents[1])


def _digest(text: str) -> str:
    return hashlib.sha256(text.replace(SOURCE_ROOT, "<src>").encode()).hexdigest()[:16]


def _outputs(example, dtype, config) -> dict[str, str]:
    """The kernel's MLIR at each stage, or the error it raised."""
    try:
        bound = example.kernel.bind(example.args(dtype))
        text = helion_fx_mlir.generate_mlir(bound, config=config)
        located = helion_fx_mlir.generate_mlir(bound, config=config, debug_info=True)
        return {
            "emit": _digest(text),
            "debug": _digest(located),
            "llvm": _digest(helion_fx_mlir.lower_to_llvm(text)),
        }
    except Exception as error:  # a kernel that fails must keep failing the same way
        return {"error": f"{type(error).__name__}: {error}"[:200]}


def digests() -> dict[str, dict[str, str]]:
    """Every example x dtype x (default config, its extra configs)."""
    result = {}
    for name, example in sorted(EXAMPLES.items()):
        for dtype in example.dtypes:
            for index, config in enumerate((None, *example.configs)):
                result[f"{name}/{str(dtype).removeprefix('torch.')}/{index}"] = _outputs(
                    example, dtype, config
                )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", help="a JSON file written by an earlier run")
    args = parser.parse_args()
    current = digests()
    if not args.compare:
        json.dump(current, sys.stdout, indent=1, sort_keys=True)
        return 0
    with open(args.compare) as f:
        before = json.load(f)
    changed = sorted(k for k in before.keys() | current.keys() if before.get(k) != current.get(k))
    for key in changed:
        print(f"{key}: {before.get(key)} -> {current.get(key)}")
    print(f"{len(current)} kernel/dtype/config cases, {len(changed)} changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
