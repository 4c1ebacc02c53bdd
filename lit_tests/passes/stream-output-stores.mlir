// A full-row vector write into a large output the kernel only writes becomes, where its
// address is 64-byte aligned at run time, a non-temporal store (else the write as it
// was); each thread's part of the grid then ends with a fence. Small outputs, outputs the
// kernel also reads, and partial (masked or out-of-bounds) writes keep ordinary stores.
// RUN: helion-opt %s --split-input-file --helion-stream-output-stores | FileCheck %s

// CHECK-LABEL: func.func @rows(
// CHECK-SAME: memref<4096x1024xf32>, %[[OUT:[a-z0-9_]+]]: memref<4096x1024xf32>
// CHECK: omp.loop_nest (%[[I:[a-z0-9_]+]])
// CHECK: %[[ROW:[a-z0-9_]+]] = memref.subview %[[OUT]][%[[I]], 0] [1, 1024] [1, 1]
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: %{{[a-z0-9_]+}}, %[[OFFSET:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %[[STRIDE:[a-z0-9_]+]] = memref.extract_strided_metadata %[[ROW]]
// CHECK: %[[STEP:[a-z0-9_]+]] = arith.muli %[[J]], %[[STRIDE]] : index
// CHECK: %[[AT:[a-z0-9_]+]] = arith.addi %[[OFFSET]], %[[STEP]] : index
// CHECK: %[[BASE:[a-z0-9_]+]] = memref.extract_aligned_pointer_as_index %[[ROW]]
// CHECK: %[[BYTES:[a-z0-9_]+]] = arith.muli %[[AT]], %{{[a-z0-9_]+}} : index
// CHECK: %[[ADDRESS:[a-z0-9_]+]] = arith.addi %[[BASE]], %[[BYTES]] : index
// CHECK: %[[LOW:[a-z0-9_]+]] = arith.remui %[[ADDRESS]], %{{[a-z0-9_]+}} : index
// CHECK: %[[ALIGNED:[a-z0-9_]+]] = arith.cmpi eq, %[[LOW]], %{{[a-z0-9_]+}} : index
// CHECK: scf.if %[[ALIGNED]] {
// CHECK-NEXT: vector.store %[[V:[a-z0-9_]+]], %[[ROW]][%[[J]]] {alignment = 64 : i64, nontemporal = true} : memref<1024xf32, strided<[1], offset: ?>>, vector<64xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: vector.transfer_write %[[V]], %[[ROW]][%[[J]]] {in_bounds = [true]}
// CHECK: omp.yield
// CHECK: llvm.fence seq_cst
// CHECK-NEXT: omp.terminator
func.func @rows(%x: memref<4096x1024xf32>, %out: memref<4096x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %c4096 = arith.constant 4096 : index
  %pad = ub.poison : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c4096) step (%c1) {
        %row = memref.subview %out[%i, 0] [1, 1024] [1, 1] : memref<4096x1024xf32> to memref<1024xf32, strided<[1], offset: ?>>
        scf.for %j = %c0 to %c1024 step %c64 {
          %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<4096x1024xf32>, vector<64xf32>
          vector.transfer_write %v, %row[%j] {in_bounds = [true]} : vector<64xf32>, memref<1024xf32, strided<[1], offset: ?>>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A 2-D write of one row streams as the row (a shape cast); a grid of one program fences
// before it returns.
// CHECK-LABEL: func.func @one_program(
// CHECK: scf.if
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = vector.shape_cast %{{[a-z0-9_]+}} : vector<1x32xf32> to vector<32xf32>
// CHECK-NEXT: vector.store %[[ROW]], {{.*}} nontemporal = true
// CHECK: llvm.fence seq_cst
// CHECK-NEXT: return
func.func @one_program(%v: vector<1x32xf32>, %out: memref<2048x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  scf.for %r = %c0 to %c2048 step %c1 {
    vector.transfer_write %v, %out[%r, %c0] {in_bounds = [true, true]} : vector<1x32xf32>, memref<2048x2048xf32>
  }
  return
}

// -----

// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: nontemporal
// CHECK-NOT: llvm.fence
// CHECK: return
func.func @left_alone(%v: vector<64xf32>, %small: memref<64x1024xf32>, %read: memref<4096x1024xf32>, %out: memref<4096x1024xf32>, %odd: memref<4096x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = ub.poison : f32
  // 256 KB: the caller may read it from the caches
  vector.transfer_write %v, %small[%c1, %c0] {in_bounds = [true]} : vector<64xf32>, memref<64x1024xf32>
  // also read by the kernel
  vector.transfer_write %v, %read[%c1, %c0] {in_bounds = [true]} : vector<64xf32>, memref<4096x1024xf32>
  %back = vector.transfer_read %read[%c1, %c0], %pad {in_bounds = [true]} : memref<4096x1024xf32>, vector<64xf32>
  // not known to be in bounds
  vector.transfer_write %back, %out[%c1, %c0] : vector<64xf32>, memref<4096x1024xf32>
  // 40 bytes: not whole lines
  %part = vector.extract_strided_slice %v {offsets = [0], sizes = [10], strides = [1]} : vector<64xf32> to vector<10xf32>
  vector.transfer_write %part, %odd[%c1, %c0] {in_bounds = [true]} : vector<10xf32>, memref<4096x1000xf32>
  return
}

// -----

// A module for a CPU where streaming does not pay (helion.streaming_stores = 0: the
// config's "off", or the host's choice under "auto") keeps ordinary stores.
// CHECK-LABEL: func.func @not_for_this_cpu(
// CHECK-NOT: nontemporal
// CHECK-NOT: llvm.fence
// CHECK: vector.transfer_write
// CHECK-NOT: nontemporal
// CHECK: return
module attributes {helion.streaming_stores = 0 : i64} {
  func.func @not_for_this_cpu(%v: vector<64xf32>, %out: memref<4096x1024xf32>) {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %c4096 step %c1 {
      vector.transfer_write %v, %out[%i, %c0] {in_bounds = [true]} : vector<64xf32>, memref<4096x1024xf32>
    }
    return
  }
}
