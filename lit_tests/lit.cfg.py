"""lit configuration: goldens of emitted MLIR, checked with FileCheck."""

import os
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
src = root / "src"
# This tree's package, for the emits run in lit's workers and for the tools' processes.
sys.path[:0] = [str(src), os.path.dirname(__file__)]

import emit_format  # noqa: E402

config.name = "helion-fx-mlir"
config.test_format = emit_format.EmitInProcess()
config.suffixes = [".test", ".mlir"]
config.excludes = ["lit.cfg.py", "emit_format.py", "Inputs", "__pycache__"]
config.test_source_root = os.path.dirname(__file__)

config.environment["PATH"] = os.pathsep.join(
    [str(root / ".venv" / "bin"), os.environ.get("PATH", "")]
)
config.environment["PYTHONPATH"] = str(src)
# Every run compiles (and the user's cache of compiled kernels stays as it was).
config.environment["HELION_FX_MLIR_DISK_CACHE"] = "0"
config.substitutions.append(("%examples", str(src / "helion_fx_mlir" / "examples")))
config.substitutions.append(("FileCheck", "filecheck"))
