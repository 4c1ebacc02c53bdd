// Multi-reductions over outer dims become lane-wise combines of their rows with the
// accumulator; reductions of the innermost dim (row reductions) stay for MLIR's lowering.
// RUN: helion-opt %s --helion-combine-outer-reductions | FileCheck %s

// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME: %[[ROWS:[a-z0-9_]+]]: vector<4x64xf32>, %[[ACC:[a-z0-9_]+]]: vector<64xf32>
// CHECK-NEXT: %[[R0:.*]] = vector.extract %[[ROWS]][0] : vector<64xf32> from vector<4x64xf32>
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[ACC]], %[[R0]] : vector<64xf32>
// CHECK-NEXT: %[[R1:.*]] = vector.extract %[[ROWS]][1]
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[S0]], %[[R1]]
// CHECK: %[[R3:.*]] = vector.extract %[[ROWS]][3]
// CHECK-NEXT: %[[S3:.*]] = arith.addf %{{.*}}, %[[R3]]
// CHECK-NEXT: return %[[S3]] : vector<64xf32>
func.func @column_sum(%rows: vector<4x64xf32>, %acc: vector<64xf32>) -> vector<64xf32> {
  %0 = vector.multi_reduction <add>, %rows, %acc [0] : vector<4x64xf32> to vector<64xf32>
  return %0 : vector<64xf32>
}

// A unit parallel dim before the reduced one: reshaped to rows x lanes, the result back.
// CHECK-LABEL: func.func @batched_column_max(
// CHECK: %[[TABLE:.*]] = vector.shape_cast %{{.*}} : vector<1x2x16xf32> to vector<2x16xf32>
// CHECK: %[[FLAT:.*]] = vector.shape_cast %{{.*}} : vector<1x16xf32> to vector<16xf32>
// CHECK: arith.maxnumf %[[FLAT]], %{{.*}} : vector<16xf32>
// CHECK: %[[MAX:.*]] = arith.maxnumf
// CHECK: vector.shape_cast %[[MAX]] : vector<16xf32> to vector<1x16xf32>
// CHECK-NOT: vector.multi_reduction
func.func @batched_column_max(%rows: vector<1x2x16xf32>, %acc: vector<1x16xf32>) -> vector<1x16xf32> {
  %0 = vector.multi_reduction <maxnumf>, %rows, %acc [1] : vector<1x2x16xf32> to vector<1x16xf32>
  return %0 : vector<1x16xf32>
}

// CHECK-LABEL: func.func @integer_column_sum(
// CHECK: arith.addi
// CHECK-NOT: vector.multi_reduction
func.func @integer_column_sum(%rows: vector<2x8xi32>, %acc: vector<8xi32>) -> vector<8xi32> {
  %0 = vector.multi_reduction <add>, %rows, %acc [0] : vector<2x8xi32> to vector<8xi32>
  return %0 : vector<8xi32>
}

// Row reductions, outer reductions behind a longer parallel dim, and masked ones stay.
// CHECK-LABEL: func.func @kept(
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<8x16xf32> to vector<8xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [1] : vector<2x4x16xf32> to vector<2x16xf32>
// CHECK: vector.mask %{{.*}} { vector.multi_reduction <add>, %{{.*}}, %{{.*}} [0] : vector<4x64xf32> to vector<64xf32> }
func.func @kept(%rows: vector<8x16xf32>, %acc: vector<8xf32>, %cube: vector<2x4x16xf32>, %plane: vector<2x16xf32>, %tile: vector<4x64xf32>, %sums: vector<64xf32>, %mask: vector<4x64xi1>) -> (vector<8xf32>, vector<2x16xf32>, vector<64xf32>) {
  %0 = vector.multi_reduction <add>, %rows, %acc [1] : vector<8x16xf32> to vector<8xf32>
  %1 = vector.multi_reduction <add>, %cube, %plane [1] : vector<2x4x16xf32> to vector<2x16xf32>
  %2 = vector.mask %mask { vector.multi_reduction <add>, %tile, %sums [0] : vector<4x64xf32> to vector<64xf32> } : vector<4x64xi1> -> vector<64xf32>
  return %0, %1, %2 : vector<8xf32>, vector<2x16xf32>, vector<64xf32>
}
