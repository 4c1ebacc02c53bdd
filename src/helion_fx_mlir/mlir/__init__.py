"""MLIR itself: one context with our dialects, parsing and verifying with located diagnostics,
checks on input MLIR, and finding ops in a module. Depends on nothing else in the package."""
