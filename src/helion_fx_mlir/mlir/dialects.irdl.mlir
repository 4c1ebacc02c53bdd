// The helion and loom dialects, defined with IRDL so that they are real,
// verified ops in any MLIR context that loads this file (no C++ build).
irdl.dialect @loom {
  // A named symbolic value (a block size) resolved from module attributes.
  irdl.operation @get_symbol {
    %index = irdl.is index
    irdl.results(result: %index)
    %string = irdl.base "#builtin.string"
    irdl.attributes { "name" = %string }
  }
}
irdl.dialect @helion {
  // The value of a loop-carried variable after its loop: init if the loop
  // ran no iteration, else the loop's result. All three types agree.
  irdl.operation @phi {
    %t = irdl.any
    irdl.operands(init: %t, loop_result: %t)
    irdl.results(result: %t)
  }
}
