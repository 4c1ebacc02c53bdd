// Ops on a padded tile compute only the lanes their users read: the elementwise op is cut
// to the slice stored, the masked sum to the lanes its mask keeps (its mask, now true for
// every lane, goes), and the pad goes (its slices are slices of its source). A reduction that
// combines a pad of its neutral value (zeros summed, -inf maxed) takes the pad's source. A
// reduction whose padded lanes are neither masked to nor padded with the neutral value keeps
// every lane, and so does its pad.
// RUN: helion-opt %s --split-input-file --helion-trim-padded-tiles | FileCheck %s

// CHECK-LABEL: func.func @row(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1000xf32>
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<1000xf32>) outs(%{{[a-z0-9_]+}} : tensor<f32>)
// CHECK-NOT: arith.select
// CHECK: arith.addf
// CHECK: %[[CENTERED:[a-z0-9_]+]] = linalg.generic {{.*}} ins(%[[X]], %{{[a-z0-9_]+}} : tensor<1000xf32>, tensor<f32>) outs(%{{[a-z0-9_]+}} : tensor<1000xf32>)
// CHECK: return %[[CENTERED]] : tensor<1000xf32>
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @row(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %valid = arith.constant 1000 : index
  %padded = tensor.pad %x low[0] high[24] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<1000xf32> to tensor<1024xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%padded : tensor<1024xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %lane = linalg.index 0 : index
    %keep = arith.cmpi ult, %lane, %valid : index
    %v = arith.select %keep, %in, %zero : f32
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<1024xf32>
  %centered = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel"]} ins(%padded, %sum : tensor<1024xf32>, tensor<f32>) outs(%e2 : tensor<1024xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  } -> tensor<1024xf32>
  %out = tensor.extract_slice %centered[0] [1000] [1] : tensor<1024xf32> to tensor<1000xf32>
  return %out : tensor<1000xf32>
}

// -----

// CHECK-LABEL: func.func @unmasked_max(
// CHECK: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%{{[a-z0-9_]+}} : tensor<1024xf32>)
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @unmasked_max(%x: tensor<1000xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0] high[24] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<1000xf32> to tensor<1024xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %max = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%padded : tensor<1024xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %max : tensor<f32>
}

// -----

// A row of one (a block of one row) reaches the last op through expand_shape: the slice
// moves above it, the unit dim folds away, and the store takes the op's own result.
// CHECK-LABEL: func.func @row_of_one(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1000xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[TWICE:[a-z0-9_]+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1000xf32>) outs(%{{[a-z0-9_]+}} : tensor<1000xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[OUT:[a-z0-9_]+]] = linalg.generic {{.*}} ins(%[[TWICE]] : tensor<1000xf32>) outs(%{{[a-z0-9_]+}} : tensor<1000xf32>)
// CHECK: return %[[OUT]] : tensor<1000xf32>
#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_of_one(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0] high[24] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<1000xf32> to tensor<1024xf32>
  %e = tensor.empty() : tensor<1024xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%padded : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<1024xf32>
  %row = tensor.expand_shape %twice [[0, 1]] output_shape [1, 1024] : tensor<1024xf32> into tensor<1x1024xf32>
  %e2 = tensor.empty() : tensor<1x1024xf32>
  %out = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%row : tensor<1x1024xf32>) outs(%e2 : tensor<1x1024xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x1024xf32>
  %stored = tensor.extract_slice %out[0, 0] [1, 1000] [1, 1] : tensor<1x1024xf32> to tensor<1000xf32>
  return %stored : tensor<1000xf32>
}

// -----

// CHECK-LABEL: func.func @sum_of_zero_pad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<4x1000xf32>
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4x1000xf32>) outs(%{{[a-z0-9_]+}} : tensor<4xf32>)
// CHECK: arith.addf
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_of_zero_pad(%x: tensor<4x1000xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0] high[0, 24] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x1000xf32> to tensor<4x1024xf32>
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%padded : tensor<4x1024xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max_of_lowest_pad(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1000xf32>
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<1000xf32>)
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @max_of_lowest_pad(%x: tensor<1000xf32>) -> tensor<f32> {
  %lowest = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %x low[0] high[24] {
  ^bb0(%i: index):
    tensor.yield %lowest : f32
  } : tensor<1000xf32> to tensor<1024xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %max = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%padded : tensor<1024xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %max : tensor<f32>
}

// -----

// A pad of zeros on the parallel dim (rows past the tensor's) stays: those rows are results.
// CHECK-LABEL: func.func @sum_of_padded_rows(
// CHECK: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%{{[a-z0-9_]+}} : tensor<8x1000xf32>)
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_of_padded_rows(%x: tensor<5x1000xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0] high[3, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<5x1000xf32> to tensor<8x1000xf32>
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%padded : tensor<8x1000xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// A row max whose mask is a conjunction, a row bound every row of the tile keeps beside the
// column bound, is cut to the columns the mask keeps, and the mask goes; where the row bound
// cuts rows (19 of 32), the columns are cut and the mask stays.
// CHECK-LABEL: func.func @rows_and_columns(
// CHECK: linalg.generic {{.*}} ins(%{{[a-z0-9_]+}} : tensor<32x100xf32>) outs(%{{[a-z0-9_]+}} : tensor<32xf32>)
// CHECK-NOT: arith.select
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%{{[a-z0-9_]+}} : tensor<32x100xf32>) outs(%{{[a-z0-9_]+}} : tensor<32xf32>)
// CHECK: arith.select
// CHECK: arith.maximumf
#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
func.func @rows_and_columns(%x: tensor<32x128xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %low = arith.constant 0xFF800000 : f32
  %all_rows = arith.constant 32 : index
  %some_rows = arith.constant 19 : index
  %cols = arith.constant 100 : index
  %e = tensor.empty() : tensor<32xf32>
  %init = linalg.fill ins(%low : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %whole = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<32x128xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %in_rows = arith.cmpi ult, %r, %all_rows : index
    %in_cols = arith.cmpi ult, %c, %cols : index
    %keep = arith.andi %in_rows, %in_cols : i1
    %v = arith.select %keep, %in, %low : f32
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  %part = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<32x128xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %in_rows = arith.cmpi ult, %r, %some_rows : index
    %in_cols = arith.cmpi ult, %c, %cols : index
    %keep = arith.andi %in_rows, %in_cols : i1
    %v = arith.select %keep, %in, %low : f32
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  return %whole, %part : tensor<32xf32>, tensor<32xf32>
}
