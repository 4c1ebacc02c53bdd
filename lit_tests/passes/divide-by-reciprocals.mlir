// A division by a value broadcast along the vector becomes its reciprocal's corrected
// product (the reciprocal once, an fma residual and an fma correction per lane), with the
// division kept in a branch for vectors where the product may not be the IEEE quotient.
// RUN: helion-opt %s --helion-divide-by-reciprocals | FileCheck %s

// CHECK-LABEL: func.func @row_by_sum(
// CHECK-SAME: %[[X:.*]]: vector<1x64xf32>, %[[S:.*]]: vector<1xf32>
// CHECK: %[[D:.*]] = vector.broadcast %[[S]] : vector<1xf32> to vector<1x64xf32>
// CHECK: %[[R1:.*]] = arith.divf %{{.*}}, %[[S]] : vector<1xf32>
// CHECK: %[[R:.*]] = vector.broadcast %[[R1]] : vector<1xf32> to vector<1x64xf32>
// CHECK: %[[Q0:.*]] = arith.mulf %[[X]], %[[R]] : vector<1x64xf32>
// CHECK: %[[NEG:.*]] = arith.negf %[[Q0]] : vector<1x64xf32>
// CHECK: %[[E:.*]] = math.fma %[[NEG]], %[[D]], %[[X]] : vector<1x64xf32>
// CHECK: %[[Q1:.*]] = math.fma %[[E]], %[[R]], %[[Q0]] : vector<1x64xf32>
// The range check one zmm register of q1 at a time, the registers' flags and-ed:
// CHECK: %[[FLAT:.*]] = vector.shape_cast %[[Q1]] : vector<1x64xf32> to vector<64xf32>
// CHECK: vector.extract_strided_slice %[[FLAT]] {offsets = [48], sizes = [16], strides = [1]}
// CHECK-COUNT-4: arith.andi %{{.*}}, %{{.*}} : vector<16xi1>
// CHECK-NEXT: %[[FIRST:.*]] = arith.andi %{{.*}}, %{{.*}} : vector<16xi1>
// CHECK-NEXT: %[[SECOND:.*]] = arith.andi %[[FIRST]], %{{.*}} : vector<16xi1>
// CHECK-NEXT: %[[ALL:.*]] = arith.andi %[[SECOND]], %{{.*}} : vector<16xi1>
// CHECK: %[[SUM_FITS:.*]] = vector.reduction <and>, %{{.*}} : vector<1xi1> into i1
// CHECK-NEXT: %[[FITS:.*]] = vector.broadcast %[[SUM_FITS]] : i1 to vector<16xi1>
// CHECK-NEXT: %[[EXACT:.*]] = arith.andi %[[ALL]], %[[FITS]] : vector<16xi1>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %{{.*}} : vector<16xi1> into i1
// CHECK: %[[Q:.*]] = scf.if %[[ANY]] -> (vector<1x64xf32>) {
// CHECK:   %[[DIV:.*]] = arith.divf %[[X]], %[[D]] : vector<1x64xf32>
// CHECK:   scf.yield %[[DIV]] : vector<1x64xf32>
// CHECK: } else {
// CHECK:   scf.yield %[[Q1]] : vector<1x64xf32>
// CHECK: return %[[Q]] : vector<1x64xf32>
func.func @row_by_sum(%x: vector<1x64xf32>, %s: vector<1xf32>) -> vector<1x64xf32> {
  %d = vector.broadcast %s : vector<1xf32> to vector<1x64xf32>
  %q = arith.divf %x, %d : vector<1x64xf32>
  return %q : vector<1x64xf32>
}

// A splat constant divisor takes the same path, its reciprocal a scalar.
// CHECK-LABEL: func.func @by_constant(
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: math.fma
// CHECK: scf.if
func.func @by_constant(%x: vector<16xf32>) -> vector<16xf32> {
  %c = arith.constant dense<3.7> : vector<16xf32>
  %q = arith.divf %x, %c : vector<16xf32>
  return %q : vector<16xf32>
}

// A row of divisors broadcast along the rows: each lane's divisor in range, as one i1.
// CHECK-LABEL: func.func @by_row(
// CHECK: %[[FITS:.*]] = vector.reduction <and>, %{{.*}} : vector<32xi1> into i1
// CHECK: vector.broadcast %[[FITS]] : i1 to vector<16xi1>
// CHECK: vector.reduction <or>, %{{.*}} : vector<16xi1> into i1
// CHECK: scf.if
func.func @by_row(%x: vector<2x32xf32>, %s: vector<32xf32>) -> vector<2x32xf32> {
  %d = vector.broadcast %s : vector<32xf32> to vector<2x32xf32>
  %q = arith.divf %x, %d : vector<2x32xf32>
  return %q : vector<2x32xf32>
}

// Divisors that vary lane by lane, and f64 divisions, stay divisions.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: math.fma
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<8xf64>
// CHECK-NOT: scf.if
func.func @kept(%x: vector<16xf32>, %y: vector<16xf32>, %a: vector<8xf64>, %b: f64) -> (vector<16xf32>, vector<8xf64>) {
  %q = arith.divf %x, %y : vector<16xf32>
  %bb = vector.broadcast %b : f64 to vector<8xf64>
  %p = arith.divf %a, %bb : vector<8xf64>
  return %q, %p : vector<16xf32>, vector<8xf64>
}
