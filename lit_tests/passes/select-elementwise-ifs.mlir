// An if on a scalar whose branches compute a tile lane by lane becomes both branches and a
// lane-wise select generic (a branch that yields the tile from before the if computes
// nothing). An if whose branch reads another tensor, divides integers (the condition may
// guard the divisor), or yields a tensor past a tile's lanes stays as it is.
// RUN: helion-opt %s --split-input-file --helion-select-elementwise-ifs | FileCheck %s

// CHECK-LABEL: func.func @doubled(
// CHECK-NOT: scf.if
// CHECK: %[[TWICE:[0-9]+]] = linalg.generic {{.*}} ins(%arg0 : tensor<32x32xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[TWICE]], %arg0 : tensor<32x32xf32>, tensor<32x32xf32>)
// CHECK-NEXT: ^bb0(%[[T:[a-z0-9_]+]]: f32, %[[E:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32):
// CHECK-NEXT: %[[S:[0-9]+]] = arith.select %{{[0-9]+}}, %[[T]], %[[E]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @doubled(%x: tensor<32x32xf32>, %flag: i64) -> tensor<32x32xf32> {
  %c0 = arith.constant 0 : i64
  %two = arith.constant 2.0 : f32
  %on = arith.cmpi sgt, %flag, %c0 : i64
  %r = scf.if %on -> (tensor<32x32xf32>) {
    %e = tensor.empty() : tensor<32x32xf32>
    %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %two : f32
      linalg.yield %m : f32
    } -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  } else {
    scf.yield %x : tensor<32x32xf32>
  }
  return %r : tensor<32x32xf32>
}

// -----

// CHECK-LABEL: func.func @guarded_division(
// CHECK: scf.if
// CHECK: arith.divsi
#id = affine_map<(d0) -> (d0)>
func.func @guarded_division(%x: tensor<16xi32>, %d: i32) -> tensor<16xi32> {
  %c0 = arith.constant 0 : i32
  %on = arith.cmpi ne, %d, %c0 : i32
  %r = scf.if %on -> (tensor<16xi32>) {
    %e = tensor.empty() : tensor<16xi32>
    %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<16xi32>) outs(%e : tensor<16xi32>) {
    ^bb0(%in: i32, %out: i32):
      %v = arith.divsi %in, %d : i32
      linalg.yield %v : i32
    } -> tensor<16xi32>
    scf.yield %q : tensor<16xi32>
  } else {
    scf.yield %x : tensor<16xi32>
  }
  return %r : tensor<16xi32>
}

// -----

// CHECK-LABEL: func.func @reads_in_branch(
// CHECK: scf.if
// CHECK: tensor.extract_slice
func.func @reads_in_branch(%x: tensor<16xf32>, %y: tensor<100xf32>, %at: index, %on: i1) -> tensor<16xf32> {
  %r = scf.if %on -> (tensor<16xf32>) {
    %s = tensor.extract_slice %y[%at] [16] [1] : tensor<100xf32> to tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  } else {
    scf.yield %x : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @whole_tensor(
// CHECK: scf.if
#id = affine_map<(d0) -> (d0)>
func.func @whole_tensor(%x: tensor<100000xf32>, %on: i1) -> tensor<100000xf32> {
  %r = scf.if %on -> (tensor<100000xf32>) {
    %e = tensor.empty() : tensor<100000xf32>
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : tensor<100000xf32>) outs(%e : tensor<100000xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.negf %in : f32
      linalg.yield %v : f32
    } -> tensor<100000xf32>
    scf.yield %n : tensor<100000xf32>
  } else {
    scf.yield %x : tensor<100000xf32>
  }
  return %r : tensor<100000xf32>
}
