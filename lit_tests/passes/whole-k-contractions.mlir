// A loop over K blocks of one contraction, whose blocks tile K exactly, becomes one
// contraction over the whole K range: the operands are sliced (and padded outside K) once.
// A last K block that is padded (K's tail) is contracted on its own after the whole
// blocks, over K's valid rows only; where M or N are padded too, the loop stays.
// RUN: helion-opt %s --helion-whole-k-contractions | FileCheck %s

#k_block = affine_map<(d0) -> (d0 * 16)>

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<16x32xf32>, %[[Y:[a-z0-9_]+]]: tensor<32x8xf32>
// CHECK: %[[ACC:[a-z0-9_]+]] = linalg.fill
// CHECK-NEXT: %[[LHS:[a-z0-9_]+]] = tensor.extract_slice %[[X]][0, 0] [16, 32] [1, 1] : tensor<16x32xf32> to tensor<16x32xf32>
// CHECK-NEXT: %[[RHS:[a-z0-9_]+]] = tensor.extract_slice %[[Y]][0, 0] [32, 8] [1, 1] : tensor<32x8xf32> to tensor<32x8xf32>
// CHECK-NEXT: %[[PADDED:[a-z0-9_]+]] = tensor.pad %[[RHS]] low[0, 0] high[0, %{{[a-z0-9_]+}}]
// CHECK: } : tensor<32x8xf32> to tensor<32x16xf32>
// CHECK-NEXT: %[[MM:[a-z0-9_]+]] = linalg.matmul ins(%[[LHS]], %[[PADDED]] : tensor<16x32xf32>, tensor<32x16xf32>) outs(%[[ACC]] : tensor<16x16xf32>)
// CHECK-NEXT: tensor.extract_slice %[[MM]][0, 0] [16, 8] [1, 1]
func.func @matmul(%x: tensor<16x32xf32>, %y: tensor<32x8xf32>) -> tensor<16x8xf32> {
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = affine.for %k = 0 to 2 iter_args(%a = %acc) -> (tensor<16x16xf32>) {
    %off = affine.apply #k_block(%k)
    %lhs = tensor.extract_slice %x[0, %off] [16, 16] [1, 1] : tensor<16x32xf32> to tensor<16x16xf32>
    %rhs = tensor.extract_slice %y[%off, 0] [16, 8] [1, 1] : tensor<32x8xf32> to tensor<16x8xf32>
    %padded = tensor.pad %rhs low[0, 0] high[0, %c8] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<16x8xf32> to tensor<16x16xf32>
    %mm = linalg.matmul ins(%lhs, %padded : tensor<16x16xf32>, tensor<16x16xf32>) outs(%a : tensor<16x16xf32>) -> tensor<16x16xf32>
    affine.yield %mm : tensor<16x16xf32>
  }
  %out = tensor.extract_slice %r[0, 0] [16, 8] [1, 1] : tensor<16x16xf32> to tensor<16x8xf32>
  return %out : tensor<16x8xf32>
}

// K = 24 in blocks of 16: the second block is padded, 8 rows of zeros after K's last 8.
// CHECK-LABEL: func.func @padded_k(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<16x24xf32>, %[[Y:[a-z0-9_]+]]: tensor<24x16xf32>
// CHECK-NOT: affine.for
// CHECK: %[[ACC:[a-z0-9_]+]] = linalg.fill
// CHECK-NEXT: %[[LHS:[a-z0-9_]+]] = tensor.extract_slice %[[X]][0, 0] [16, 16] [1, 1] : tensor<16x24xf32> to tensor<16x16xf32>
// CHECK-NEXT: %[[RHS:[a-z0-9_]+]] = tensor.extract_slice %[[Y]][0, 0] [16, 16] [1, 1] : tensor<24x16xf32> to tensor<16x16xf32>
// CHECK-NEXT: %[[WHOLE:[a-z0-9_]+]] = linalg.matmul ins(%[[LHS]], %[[RHS]] : tensor<16x16xf32>, tensor<16x16xf32>) outs(%[[ACC]] : tensor<16x16xf32>)
// CHECK-NEXT: %[[LHS_TAIL:[a-z0-9_]+]] = tensor.extract_slice %[[X]][0, 16] [16, 8] [1, 1] : tensor<16x24xf32> to tensor<16x8xf32>
// CHECK-NEXT: %[[RHS_TAIL:[a-z0-9_]+]] = tensor.extract_slice %[[Y]][16, 0] [8, 16] [1, 1] : tensor<24x16xf32> to tensor<8x16xf32>
// CHECK-NEXT: %[[TAIL:[a-z0-9_]+]] = linalg.matmul ins(%[[LHS_TAIL]], %[[RHS_TAIL]] : tensor<16x8xf32>, tensor<8x16xf32>) outs(%[[WHOLE]] : tensor<16x16xf32>)
// CHECK-NEXT: return %[[TAIL]]
func.func @padded_k(%x: tensor<16x24xf32>, %y: tensor<24x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = affine.for %k = 0 to 2 iter_args(%a = %acc) -> (tensor<16x16xf32>) {
    %off = affine.apply #k_block(%k)
    %size = affine.min affine_map<(d0) -> (16, d0 * -16 + 24)>(%k)
    %high = affine.apply affine_map<(d0) -> (16 - d0)>(%size)
    %lhs = tensor.extract_slice %x[0, %off] [16, %size] [1, 1] : tensor<16x24xf32> to tensor<16x?xf32>
    %rhs = tensor.extract_slice %y[%off, 0] [%size, 16] [1, 1] : tensor<24x16xf32> to tensor<?x16xf32>
    %lhs_p = tensor.pad %lhs low[0, 0] high[0, %high] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<16x?xf32> to tensor<16x16xf32>
    %rhs_p = tensor.pad %rhs low[0, 0] high[%high, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<?x16xf32> to tensor<16x16xf32>
    %mm = linalg.matmul ins(%lhs_p, %rhs_p : tensor<16x16xf32>, tensor<16x16xf32>) outs(%a : tensor<16x16xf32>) -> tensor<16x16xf32>
    affine.yield %mm : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// The same K, and M = 12 in a block of 16: the pads fill rows past M as well (programs on
// the grid's edge), and the loop stays.
// CHECK-LABEL: func.func @padded_k_and_m(
// CHECK: affine.for
// CHECK: linalg.matmul
func.func @padded_k_and_m(%x: tensor<12x24xf32>, %y: tensor<24x16xf32>) -> tensor<16x16xf32> {
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = affine.for %k = 0 to 2 iter_args(%a = %acc) -> (tensor<16x16xf32>) {
    %off = affine.apply #k_block(%k)
    %size = affine.min affine_map<(d0) -> (16, d0 * -16 + 24)>(%k)
    %high = affine.apply affine_map<(d0) -> (16 - d0)>(%size)
    %lhs = tensor.extract_slice %x[0, %off] [12, %size] [1, 1] : tensor<12x24xf32> to tensor<12x?xf32>
    %rhs = tensor.extract_slice %y[%off, 0] [%size, 16] [1, 1] : tensor<24x16xf32> to tensor<?x16xf32>
    %lhs_p = tensor.pad %lhs low[0, 0] high[%c4, %high] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<12x?xf32> to tensor<16x16xf32>
    %rhs_p = tensor.pad %rhs low[0, 0] high[%high, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<?x16xf32> to tensor<16x16xf32>
    %mm = linalg.matmul ins(%lhs_p, %rhs_p : tensor<16x16xf32>, tensor<16x16xf32>) outs(%a : tensor<16x16xf32>) -> tensor<16x16xf32>
    affine.yield %mm : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// M's block ends past M on the grid's edge (a slice of %rows rows, padded up to 16): the
// programs whose block is whole (%rows = 16, nothing padded) take one contraction over the
// whole K strips, sliced at the block's shape; the others the padded whole strips.
// CHECK-LABEL: func.func @edge_rows(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<40x32xf32>, %[[Y:[a-z0-9_]+]]: tensor<32x16xf32>, %[[ROW:[a-z0-9_]+]]: index
// CHECK: %[[PAD:[a-z0-9_]+]] = arith.subi
// CHECK: %[[ZERO:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[WHOLE:[a-z0-9_]+]] = arith.cmpi eq, %[[PAD]], %[[ZERO]] : index
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = scf.if %[[WHOLE]] -> (tensor<16x16xf32>) {
// CHECK-NEXT: %[[LHS:[a-z0-9_]+]] = tensor.extract_slice %[[X]][%[[ROW]], 0] [16, 32] [1, 1] : tensor<40x32xf32> to tensor<16x32xf32>
// CHECK-NEXT: %[[RHS:[a-z0-9_]+]] = tensor.extract_slice %[[Y]][0, 0] [32, 16] [1, 1] : tensor<32x16xf32> to tensor<32x16xf32>
// CHECK-NEXT: %[[MM:[a-z0-9_]+]] = linalg.matmul ins(%[[LHS]], %[[RHS]] : tensor<16x32xf32>, tensor<32x16xf32>)
// CHECK-NEXT: scf.yield %[[MM]] : tensor<16x16xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[EDGE:[a-z0-9_]+]] = tensor.extract_slice %[[X]][%[[ROW]], 0] [%{{[a-z0-9_]+}}, 32] [1, 1] : tensor<40x32xf32> to tensor<?x32xf32>
// CHECK-NEXT: %[[PADDED:[a-z0-9_]+]] = tensor.pad %[[EDGE]] low[0, 0] high[%[[PAD]], 0]
// CHECK: %[[EDGE_MM:[a-z0-9_]+]] = linalg.matmul ins(%[[PADDED]], %{{[a-z0-9_]+}} : tensor<16x32xf32>, tensor<32x16xf32>)
// CHECK-NEXT: scf.yield %[[EDGE_MM]] : tensor<16x16xf32>
// CHECK: return %[[R]] : tensor<16x16xf32>
func.func @edge_rows(%x: tensor<40x32xf32>, %y: tensor<32x16xf32>, %row: index) -> tensor<16x16xf32> {
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.000000e+00 : f32
  %rows = affine.min affine_map<(d0) -> (16, -d0 + 40)>(%row)
  %pad = arith.subi %c16, %rows : index
  %e = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = affine.for %k = 0 to 2 iter_args(%a = %acc) -> (tensor<16x16xf32>) {
    %off = affine.apply #k_block(%k)
    %lhs = tensor.extract_slice %x[%row, %off] [%rows, 16] [1, 1] : tensor<40x32xf32> to tensor<?x16xf32>
    %lhs_p = tensor.pad %lhs low[0, 0] high[%pad, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<?x16xf32> to tensor<16x16xf32>
    %rhs = tensor.extract_slice %y[%off, 0] [16, 16] [1, 1] : tensor<32x16xf32> to tensor<16x16xf32>
    %mm = linalg.matmul ins(%lhs_p, %rhs : tensor<16x16xf32>, tensor<16x16xf32>) outs(%a : tensor<16x16xf32>) -> tensor<16x16xf32>
    affine.yield %mm : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}
