// A loop over a row's chunks, each min(4096, 30000 - 4096 i) wide: the seven whole chunks
// become a loop of their own whose slices are static 4096, and the last chunk's slice is a
// static 1328 at offset 28672, its loop folded away. An affine.for over row tiles (a column
// sum's 32-row tiles of 1000 rows) keeps its one-trip loop, its index a constant. A loop
// whose chunks are all whole, or whose chunk size depends on an argument, stays as it is.
// RUN: helion-opt %s --split-input-file --helion-peel-partial-chunks | FileCheck %s

// CHECK-LABEL: func.func @row_sum(
// CHECK: %[[WHOLE:[a-z0-9_]+]] = scf.for %[[I:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %c7 step
// CHECK:   tensor.extract_slice %{{[a-z0-9_]+}}[%{{[a-z0-9_]+}}] [4096] [1] : tensor<30000xf32> to tensor<4096xf32>
// CHECK-NOT: scf.for
// CHECK: tensor.extract_slice %{{[a-z0-9_]+}}[28672] [1328] [1] : tensor<30000xf32> to tensor<1328xf32>
// CHECK: linalg.generic {{.*}} outs(%[[WHOLE]] : tensor<f32>)
#offset = affine_map<(d0) -> (d0 * 4096)>
#size = affine_map<(d0) -> (d0 * -4096 + 30000, 4096)>
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @row_sum(%x: tensor<30000xf32>, %init: tensor<f32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (tensor<f32>) {
    %offset = affine.apply #offset(%i)
    %size = affine.min #size(%i)
    %chunk = tensor.extract_slice %x[%offset] [%size] [1] : tensor<30000xf32> to tensor<?xf32>
    %high = arith.subi %c4096, %size : index
    %padded = tensor.pad %chunk low[0] high[%high] {
    ^bb0(%j: index):
      tensor.yield %zero : f32
    } : tensor<?xf32> to tensor<4096xf32>
    %next = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%padded : tensor<4096xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    scf.yield %next : tensor<f32>
  }
  return %sum : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @whole_chunks(
// CHECK: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step
// CHECK: affine.min
// CHECK-NOT: scf.for
#offset = affine_map<(d0) -> (d0 * 4096)>
#size = affine_map<(d0) -> (d0 * -4096 + 32768, 4096)>
func.func @whole_chunks(%x: tensor<32768xf32>, %out: tensor<8xindex>) -> tensor<8xindex> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %sizes = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %out) -> (tensor<8xindex>) {
    %size = affine.min #size(%i)
    %next = tensor.insert %size into %acc[%i] : tensor<8xindex>
    scf.yield %next : tensor<8xindex>
  }
  return %sizes : tensor<8xindex>
}

// -----

// CHECK-LABEL: func.func @size_from_an_argument(
// CHECK: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step
// CHECK: affine.min
// CHECK-NOT: scf.for
#size = affine_map<(d0)[s0] -> (d0 * -4096 + s0, 4096)>
func.func @size_from_an_argument(%n: index, %out: tensor<8xindex>) -> tensor<8xindex> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %sizes = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %out) -> (tensor<8xindex>) {
    %size = affine.min #size(%i)[%n]
    %next = tensor.insert %size into %acc[%i] : tensor<8xindex>
    scf.yield %next : tensor<8xindex>
  }
  return %sizes : tensor<8xindex>
}

// -----

// CHECK-LABEL: func.func @column_sum(
// CHECK: %[[WHOLE:[a-z0-9_]+]] = affine.for %{{[a-z0-9_]+}} = 0 to 31 iter_args
// CHECK:   tensor.extract_slice %{{[a-z0-9_]+}}[%{{[a-z0-9_]+}}, 0] [32, 32] [1, 1] : tensor<1000x32xf32> to tensor<32x32xf32>
// CHECK: affine.for %{{[a-z0-9_]+}} = 31 to 32 iter_args(%{{[a-z0-9_]+}} = %[[WHOLE]])
// CHECK:   tensor.extract_slice %{{[a-z0-9_]+}}[992, 0] [8, 32] [1, 1] : tensor<1000x32xf32> to tensor<8x32xf32>
#offset = affine_map<(d0) -> (d0 * 32)>
#rows = affine_map<(d0) -> (d0 * -32 + 1000, 32)>
#tile = affine_map<(d0, d1) -> (d0, d1)>
#column = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0) -> (d0)>
func.func @column_sum(%x: tensor<1000x32xf32>, %init: tensor<32xf32>) -> tensor<32xf32> {
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %sum = affine.for %i = 0 to 32 iter_args(%acc = %init) -> (tensor<32xf32>) {
    %offset = affine.apply #offset(%i)
    %size = affine.min #rows(%i)
    %tile = tensor.extract_slice %x[%offset, 0] [%size, 32] [1, 1] : tensor<1000x32xf32> to tensor<?x32xf32>
    %high = arith.subi %c32, %size : index
    %padded = tensor.pad %tile low[0, 0] high[%high, 0] {
    ^bb0(%r: index, %c: index):
      tensor.yield %zero : f32
    } : tensor<?x32xf32> to tensor<32x32xf32>
    %next = linalg.generic {indexing_maps = [#tile, #column], iterator_types = ["reduction", "parallel"]} ins(%padded : tensor<32x32xf32>) outs(%acc : tensor<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    } -> tensor<32xf32>
    affine.yield %next : tensor<32xf32>
  }
  return %sum : tensor<32xf32>
}
