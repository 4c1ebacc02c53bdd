// Input that used to kill helion-opt (segfaults, LLVM aborts) or give errors without a
// place: each is now a located diagnostic, checked before any pass runs.
// RUN: helion-opt %s --verify-diagnostics --split-input-file
// RUN: helion-opt %s --verify-diagnostics --split-input-file --helion-lower-to-linalg
// RUN: helion-opt %s --verify-diagnostics --split-input-file --helion-lower-to-llvm

// A block size of 0 made --helion-lower-to-linalg divide by zero (SIGSEGV).
// expected-error @below {{module attribute 'loom.block_size_0' must be a positive integer, got 0 : index}}
module attributes {loom.block_size_0 = 0 : index} {
  func.func @f() -> index {
    %0 = "loom.get_symbol"() {name = "block_size_0"} : () -> index
    return %0 : index
  }
}

// -----

// A block size that is not an integer leaked `ValueError: Cannot cast attribute to IntegerAttr`.
// expected-error @below {{module attribute 'loom.block_size_0' must be a positive integer, got "x"}}
module attributes {loom.block_size_0 = "x"} {
}

// -----

// expected-error @below {{module attribute 'loom.block_size_1' must be a positive integer, got -4 : i64}}
module attributes {loom.block_size_1 = -4} {
}

// -----

// A dtype code torch-mlir has no type for aborted the process in torch-to-linalg
// (LLVM ERROR: unhandled type for getTypeForScalarType).
func.func @unknown_dtype(%a: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %code = torch.constant.int 99
  // expected-error @below {{'torch.prims.convert_element_type' has dtype code 99, which is not a torch dtype torch-mlir supports}}
  %0 = torch.prims.convert_element_type %a, %code : !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}

// -----

// A constant dim past the tensor's rank made torch-to-linalg fail at no location
// ("failed to legalize operation 'torch.constant.bool'").
func.func @dim_out_of_range(%a: !torch.vtensor<[4,5],f32>) -> !torch.vtensor<[4,1],f32> {
  %dim = torch.constant.int 99
  %dims = torch.prim.ListConstruct %dim : (!torch.int) -> !torch.list<int>
  %keep = torch.constant.bool true
  // expected-error @below {{'torch.aten.amax' has dim 99, out of range for a tensor of rank 2}}
  %0 = torch.aten.amax %a, %dims, %keep : !torch.vtensor<[4,5],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,1],f32>
  return %0 : !torch.vtensor<[4,1],f32>
}

// -----

// Our IRDL ops have only the generic form; the custom form failed with no location
// ("Unable to parse module assembly").
func.func @custom_form() -> index {
  // expected-error @below {{'loom.get_symbol' has no custom assembly form}}
  %0 = loom.get_symbol
  return %0 : index
}

// -----

// A grid trip count that divides by 0 (found by make fuzz-mlir): canonicalization folded
// it to a poison loop bound, then crashed (SIGSEGV).
func.func @divide_by_zero(%block: index) -> index {
  // expected-error @below {{'affine.apply' has affine map ()[s0] -> (37 ceildiv 0) with divisor 0; floordiv, ceildiv and mod need a positive constant}}
  %trips = affine.apply affine_map<()[s0] -> (37 ceildiv 0)>()[%block]
  return %trips : index
}
