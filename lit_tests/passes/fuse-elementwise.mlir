// Elementwise linalg ops are fused: one loop nest instead of one per ATen op. A tile's
// size `min(block, n - i * block)` folds to the block where the loop's bounds make every
// tile whole: its slice is static and the pad of its masked lanes goes away; where the
// block does not divide n, the last tile is partial and both stay.
// RUN: helion-opt %s --split-input-file --helion-fuse-elementwise | FileCheck %s

// CHECK-LABEL: func.func @chain(
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32):
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = arith.addf %[[IN]], %[[IN]] : f32
// CHECK-NEXT: %[[PRODUCT:[a-z0-9_]+]] = arith.mulf %[[SUM]], %[[SUM]] : f32
// CHECK-NEXT: linalg.yield %[[PRODUCT]] : f32
// CHECK-NOT: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @chain(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @whole_chunks(
// CHECK: scf.for %[[I:[a-z0-9_]+]] =
// CHECK-NOT: affine.min
// CHECK: tensor.extract_slice %{{[a-z0-9_]+}}[%{{[a-z0-9_]+}}] [256] [1] : tensor<1024xf32> to tensor<256xf32>
// CHECK-NOT: tensor.pad
// CHECK: scf.yield
#chunk = affine_map<(d0) -> (d0 * 256)>
#size = affine_map<(d0) -> (d0 * -256 + 1024, 256)>
func.func @whole_chunks(%x: tensor<1024xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<256xf32>) {
    %at = affine.apply #chunk(%i)
    %n = affine.min #size(%i)
    %valid = tensor.extract_slice %x[%at] [%n] [1] : tensor<1024xf32> to tensor<?xf32>
    %high = arith.subi %c256, %n : index
    %chunk = tensor.pad %valid low[0] high[%high] {
    ^bb0(%j: index):
      tensor.yield %zero : f32
    } : tensor<?xf32> to tensor<256xf32>
    %sum = arith.addf %acc, %chunk : tensor<256xf32>
    scf.yield %sum : tensor<256xf32>
  }
  return %r : tensor<256xf32>
}

// -----

// CHECK-LABEL: func.func @last_chunk_partial(
// CHECK: affine.min
// CHECK: tensor.extract_slice {{.*}} to tensor<?xf32>
// CHECK: tensor.pad
#chunk = affine_map<(d0) -> (d0 * 256)>
#size = affine_map<(d0) -> (d0 * -256 + 1000, 256)>
func.func @last_chunk_partial(%x: tensor<1000xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<256xf32>) {
    %at = affine.apply #chunk(%i)
    %n = affine.min #size(%i)
    %valid = tensor.extract_slice %x[%at] [%n] [1] : tensor<1000xf32> to tensor<?xf32>
    %high = arith.subi %c256, %n : index
    %chunk = tensor.pad %valid low[0] high[%high] {
    ^bb0(%j: index):
      tensor.yield %zero : f32
    } : tensor<?xf32> to tensor<256xf32>
    %sum = arith.addf %acc, %chunk : tensor<256xf32>
    scf.yield %sum : tensor<256xf32>
  }
  return %r : tensor<256xf32>
}
