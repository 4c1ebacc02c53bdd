// A K loop whose whole B strip is larger than the copy limit (module attribute
// helion.pack_bytes, here two 1 KB blocks) steps over as many blocks as make the fewest
// steps; where they do not divide the blocks, the loop ends early and the rest is one
// contraction after it, into the loop's result. Three blocks: one step of two, then one.
// RUN: helion-opt %s --helion-whole-k-contractions | FileCheck %s

#k_block = affine_map<(d0) -> (d0 * 16)>

// CHECK-LABEL: func.func @three_blocks(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<16x48xf32>, %[[Y:[a-z0-9_]+]]: tensor<48x32xf32>
// CHECK: %[[LOOP:[a-z0-9_]+]] = affine.for %[[K:[a-z0-9_]+]] = 0 to 2 step 2 iter_args
// CHECK: tensor.extract_slice %[[X]][0, %{{[a-z0-9_]+}}] [16, 32] [1, 1] : tensor<16x48xf32> to tensor<16x32xf32>
// CHECK: tensor.extract_slice %[[Y]][%{{[a-z0-9_]+}}, 0] [32, 16] [1, 1] : tensor<48x32xf32> to tensor<32x16xf32>
// CHECK: linalg.matmul ins(%{{.*}} : tensor<16x32xf32>, tensor<32x16xf32>)
// CHECK: affine.yield
// CHECK: %[[LHS:[a-z0-9_]+]] = tensor.extract_slice %[[X]][0, 32] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
// CHECK-NEXT: %[[RHS:[a-z0-9_]+]] = tensor.extract_slice %[[Y]][32, 0] [16, 16] [1, 1] : tensor<48x32xf32> to tensor<16x16xf32>
// CHECK-NEXT: %[[REST:[a-z0-9_]+]] = linalg.matmul ins(%[[LHS]], %[[RHS]] : tensor<16x16xf32>, tensor<16x16xf32>) outs(%[[LOOP]] : tensor<16x16xf32>)
// CHECK-NEXT: return %[[REST]] : tensor<16x16xf32>
module attributes {helion.pack_bytes = 2048 : i64} {
  func.func @three_blocks(%x: tensor<16x48xf32>, %y: tensor<48x32xf32>) -> tensor<16x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %e = tensor.empty() : tensor<16x16xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
    %r = affine.for %k = 0 to 3 iter_args(%a = %acc) -> (tensor<16x16xf32>) {
      %off = affine.apply #k_block(%k)
      %lhs = tensor.extract_slice %x[0, %off] [16, 16] [1, 1] : tensor<16x48xf32> to tensor<16x16xf32>
      %rhs = tensor.extract_slice %y[%off, 0] [16, 16] [1, 1] : tensor<48x32xf32> to tensor<16x16xf32>
      %mm = linalg.matmul ins(%lhs, %rhs : tensor<16x16xf32>, tensor<16x16xf32>) outs(%a : tensor<16x16xf32>) -> tensor<16x16xf32>
      affine.yield %mm : tensor<16x16xf32>
    }
    return %r : tensor<16x16xf32>
  }
}
