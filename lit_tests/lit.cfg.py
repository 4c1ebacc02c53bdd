"""lit configuration: goldens of emitted MLIR, checked with FileCheck."""

import os
import pathlib

import lit.formats

config.name = "helion-fx-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".mlir"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

root = pathlib.Path(__file__).resolve().parent.parent
config.environment["PATH"] = os.pathsep.join(
    [str(root / ".venv" / "bin"), os.environ.get("PATH", "")]
)
# The tools import the package of this checkout (the venv may be shared by several).
config.environment["PYTHONPATH"] = str(root / "src")
config.substitutions.append(("%examples", str(root / "src" / "helion_fx_mlir" / "examples")))
config.substitutions.append(("FileCheck", "filecheck"))
