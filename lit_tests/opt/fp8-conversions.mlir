// LLVM has no fp8 types: --helion-lower-to-llvm (the same steps as compile_kernel) turns
// f8E4M3FN truncations and extensions into integer bit manipulation, so the output has no
// fp8 arithmetic left, only i8 loads and stores.
// RUN: helion-opt %s --helion-lower-to-llvm | FileCheck %s

func.func @round_trip(%x: tensor<37xf32>) -> tensor<37xf32> {
  %empty = tensor.empty() : tensor<37xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<37xf32>) outs(%empty : tensor<37xf8E4M3FN>) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<37xf8E4M3FN>
  %empty_f32 = tensor.empty() : tensor<37xf32>
  %back = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%q : tensor<37xf8E4M3FN>) outs(%empty_f32 : tensor<37xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %e = arith.extf %in : f8E4M3FN to f32
    linalg.yield %e : f32
  } -> tensor<37xf32>
  return %back : tensor<37xf32>
}

// CHECK: llvm.func @round_trip
// CHECK-NOT: arith.
// CHECK-NOT: f8E4M3FN
// Saturation at 448 (0x7E) and the NaN pattern (0x7F), on the whole 37-lane vector:
// CHECK-DAG: llvm.mlir.constant(dense<126> : vector<37xi32>)
// CHECK-DAG: llvm.mlir.constant(dense<127> : vector<37xi32>)
// CHECK: llvm.intr.umin
