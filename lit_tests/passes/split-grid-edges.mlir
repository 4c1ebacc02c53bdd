// A grid whose tiles are whole but on its last row or column becomes the grid of whole
// tiles and the edges' grids, chained through the output; the tile sizes the same on
// every program of a grid become constants. 40 rows in blocks of 16: 2 whole, 1 of 8.
// RUN: helion-opt %s --helion-split-grid-edges | FileCheck %s

#offset = affine_map<(d0) -> (d0 * 16)>
#size = affine_map<(d0) -> (d0 * -16 + 40, 16)>
module attributes {helion.threads = 2 : i64} {
  // CHECK-LABEL: func.func @double(
  // CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<40x64xf32>, %[[OUT:[a-z0-9_]+]]: tensor<40x64xf32>
  // CHECK: %[[WHOLE:[a-z0-9_]+]] = scf.forall (%[[I:[a-z0-9_]+]]) in (2) shared_outs(%{{[a-z0-9_]+}} = %[[OUT]])
  // CHECK: %[[SIXTEEN:[a-z0-9_]+]] = arith.constant 16 : index
  // CHECK: %[[AT:[a-z0-9_]+]] = affine.apply #{{[a-z0-9_]+}}(%[[I]])
  // CHECK-NEXT: tensor.extract_slice %[[X]][%[[AT]], 0] [%[[SIXTEEN]], 64] [1, 1]
  // The edge's one program is its body (as `helion-promote-single-program-grids` does).
  // CHECK-NOT: scf.forall (
  // CHECK-DAG: %[[EIGHT:[a-z0-9_]+]] = arith.constant 8 : index
  // CHECK-DAG: %[[LAST:[a-z0-9_]+]] = arith.constant 32 : index
  // CHECK: tensor.extract_slice %[[X]][%[[LAST]], 0] [%[[EIGHT]], 64] [1, 1]
  // CHECK: %[[EDGE:[a-z0-9_]+]] = tensor.insert_slice %{{[a-z0-9_]+}} into %[[WHOLE]][%[[LAST]], 0] [%[[EIGHT]], 64] [1, 1]
  // CHECK: return %[[EDGE]]
  func.func @double(%x: tensor<40x64xf32>, %out: tensor<40x64xf32>) -> tensor<40x64xf32> {
    %r = scf.forall (%i) in (3) shared_outs(%o = %out) -> (tensor<40x64xf32>) {
      %at = affine.apply #offset(%i)
      %rows = affine.min #size(%i)
      %tile = tensor.extract_slice %x[%at, 0] [%rows, 64] [1, 1] : tensor<40x64xf32> to tensor<?x64xf32>
      %sum = arith.addf %tile, %tile : tensor<?x64xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %sum into %o[%at, 0] [%rows, 64] [1, 1] : tensor<?x64xf32> into tensor<40x64xf32>
      }
    }
    return %r : tensor<40x64xf32>
  }

  // Two dimensions: the whole tiles, then the last row (itself split: its whole columns,
  // then the corner's one program), then the last column.
  // CHECK-LABEL: func.func @grid_2d(
  // CHECK: scf.forall (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (2, 2)
  // CHECK: scf.forall (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (1, 2)
  // CHECK-NOT: scf.forall (
  // CHECK: tensor.insert_slice
  // CHECK: scf.forall (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (2, 1)
  // CHECK-NOT: scf.forall (
  func.func @grid_2d(%x: tensor<40x40xf32>, %out: tensor<40x40xf32>) -> tensor<40x40xf32> {
    %r = scf.forall (%i, %j) in (3, 3) shared_outs(%o = %out) -> (tensor<40x40xf32>) {
      %at_i = affine.apply #offset(%i)
      %rows = affine.min #size(%i)
      %at_j = affine.apply #offset(%j)
      %cols = affine.min #size(%j)
      %tile = tensor.extract_slice %x[%at_i, %at_j] [%rows, %cols] [1, 1] : tensor<40x40xf32> to tensor<?x?xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %tile into %o[%at_i, %at_j] [%rows, %cols] [1, 1] : tensor<?x?xf32> into tensor<40x40xf32>
      }
    }
    return %r : tensor<40x40xf32>
  }

  // Fewer programs before the edge than threads: one grid, its one program's sizes folded.
  // CHECK-LABEL: func.func @few_programs(
  // CHECK: scf.forall (%{{[a-z0-9_]+}}) in (2)
  // CHECK-NOT: scf.forall (
  // CHECK: affine.min
  func.func @few_programs(%x: tensor<24x64xf32>, %out: tensor<24x64xf32>) -> tensor<24x64xf32> {
    %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<24x64xf32>) {
      %at = affine.apply #offset(%i)
      %rows = affine.min affine_map<(d0) -> (d0 * -16 + 24, 16)>(%i)
      %tile = tensor.extract_slice %x[%at, 0] [%rows, 64] [1, 1] : tensor<24x64xf32> to tensor<?x64xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %tile into %o[%at, 0] [%rows, 64] [1, 1] : tensor<?x64xf32> into tensor<24x64xf32>
      }
    }
    return %r : tensor<24x64xf32>
  }
}
