// A hand-written kernel in the shape generate_mlir emits (a 10x12 @ 12x6 matmul, block
// sizes 4/4/8 that do not divide the extents): --helion-lower-to-linalg resolves the
// block sizes and the phi, and leaves no torch, torch_c, helion or loom op.
// RUN: helion-opt %s --helion-lower-to-linalg -o %t
// RUN: FileCheck %s --input-file %t
// RUN: FileCheck %s --input-file %t --check-prefix=CLEAN
// RUN: helion-opt %s --helion-resolve-symbols | FileCheck %s --check-prefix=RESOLVED
// RUN: helion-opt %s --helion-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// The trip counts fold to constants once the block sizes are known; the addmm becomes
// linalg.matmul plus an elementwise add of the carried accumulator.
// CHECK: func.func @matmul(%[[X:[a-z0-9_]+]]: tensor<10x12xf32>, %[[Y:[a-z0-9_]+]]: tensor<12x6xf32>, %[[OUT:[a-z0-9_]+]]: tensor<10x6xf32>) -> tensor<10x6xf32>
// CHECK: %[[ZERO:[a-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.forall (%{{.*}}) in (3, 2) shared_outs(%[[O:[a-z0-9_]+]] = %[[OUT]]) -> (tensor<10x6xf32>)
// CHECK: %[[ACC:[a-z0-9_]+]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[LOOP:[a-z0-9_]+]] = affine.for %{{[a-z0-9_]+}} = 0 to 2 iter_args(%[[A:[a-z0-9_]+]] = %[[ACC]]) -> (tensor<?x?xf32>)
// CHECK: %[[LHS:[a-z0-9_]+]] = tensor.extract_slice %[[X]]
// CHECK: %[[RHS:[a-z0-9_]+]] = tensor.extract_slice %[[Y]]
// CHECK: %[[MM:[a-z0-9_]+]] = linalg.matmul ins(%[[LHS]], %[[RHS]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[MM]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: arith.addf
// CHECK: affine.yield
// CHECK: tensor.parallel_insert_slice %[[LOOP]] into %[[O]]

// CLEAN: module attributes {helion.kernel = "matmul"
// CLEAN-NOT: torch
// CLEAN-NOT: loom.get_symbol
// CLEAN-NOT: helion.phi
// CLEAN: return %{{.*}} : tensor<10x6xf32>

// RESOLVED: arith.constant 4 : index
// RESOLVED: arith.constant 4 : index
// RESOLVED: %[[BS2:[a-z0-9_]+]] = arith.constant 8 : index
// RESOLVED-NOT: loom.get_symbol
// RESOLVED: %[[LOOP:[a-z0-9_]+]] = affine.for
// RESOLVED: affine.apply #{{.*}}(%{{.*}})[%[[BS2]]]
// RESOLVED: torch.aten.addmm
// RESOLVED-NOT: helion.phi
// RESOLVED: tensor.parallel_insert_slice %[[LOOP]] into

// LLVM: llvm.func @matmul(
// LLVM-NOT: torch
// LLVM: llvm.func @_mlir_ciface_matmul(

module attributes {helion.kernel = "matmul", loom.block_size_0 = 4 : index, loom.block_size_1 = 4 : index, loom.block_size_2 = 8 : index} {
  func.func @matmul(%x: tensor<10x12xf32>, %y: tensor<12x6xf32>, %out: tensor<10x6xf32>) -> tensor<10x6xf32> {
    %bs0 = "loom.get_symbol"() {name = "block_size_0"} : () -> index
    %bs1 = "loom.get_symbol"() {name = "block_size_1"} : () -> index
    %bs2 = "loom.get_symbol"() {name = "block_size_2"} : () -> index
    %cst = arith.constant 0.0 : f32
    %trips_m = affine.apply affine_map<()[s0] -> (10 ceildiv s0)>()[%bs0]
    %trips_n = affine.apply affine_map<()[s0] -> (6 ceildiv s0)>()[%bs1]
    %grid = scf.forall (%i, %j) in (%trips_m, %trips_n) shared_outs(%o = %out) -> (tensor<10x6xf32>) {
      %off_m = affine.apply affine_map<(d0)[s0] -> (d0 * s0)>(%i)[%bs0]
      %off_n = affine.apply affine_map<(d0)[s0] -> (d0 * s0)>(%j)[%bs1]
      %size_m = affine.min affine_map<(d0)[s0] -> (s0, 10 - d0 * s0)>(%i)[%bs0]
      %size_n = affine.min affine_map<(d0)[s0] -> (s0, 6 - d0 * s0)>(%j)[%bs1]
      %empty = tensor.empty(%size_m, %size_n) : tensor<?x?xf32>
      %acc = linalg.fill ins(%cst : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
      %trips_k = affine.apply affine_map<()[s0] -> (12 ceildiv s0)>()[%bs2]
      %loop = affine.for %k = 0 to %trips_k iter_args(%a = %acc) -> (tensor<?x?xf32>) {
        %off_k = affine.apply affine_map<(d0)[s0] -> (d0 * s0)>(%k)[%bs2]
        %size_k = affine.min affine_map<(d0)[s0] -> (s0, 12 - d0 * s0)>(%k)[%bs2]
        %lhs = tensor.extract_slice %x[%off_m, %off_k] [%size_m, %size_k] [1, 1] : tensor<10x12xf32> to tensor<?x?xf32>
        %rhs = tensor.extract_slice %y[%off_k, %off_n] [%size_k, %size_n] [1, 1] : tensor<12x6xf32> to tensor<?x?xf32>
        %a_vt = torch_c.from_builtin_tensor %a : tensor<?x?xf32> -> !torch.vtensor<[?,?],f32>
        %lhs_vt = torch_c.from_builtin_tensor %lhs : tensor<?x?xf32> -> !torch.vtensor<[?,?],f32>
        %rhs_vt = torch_c.from_builtin_tensor %rhs : tensor<?x?xf32> -> !torch.vtensor<[?,?],f32>
        %one = torch.constant.int 1
        %sum = torch.aten.addmm %a_vt, %lhs_vt, %rhs_vt, %one, %one : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,?],f32>
        %next = torch_c.to_builtin_tensor %sum : !torch.vtensor<[?,?],f32> -> tensor<?x?xf32>
        affine.yield %next : tensor<?x?xf32>
      }
      %phi = "helion.phi"(%acc, %loop) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %phi into %o[%off_m, %off_n] [%size_m, %size_n] [1, 1] : tensor<?x?xf32> into tensor<10x6xf32>
      }
    }
    return %grid : tensor<10x6xf32>
  }
}
