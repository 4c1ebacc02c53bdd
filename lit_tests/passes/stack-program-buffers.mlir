// A grid program's static buffers of at most 64 KB, allocated in the body of the
// scf.forall (not in its loops), move to the stack, up to 256 KB per program.
// RUN: helion-opt %s --helion-stack-program-buffers | FileCheck %s

// CHECK-LABEL: func.func @sizes(
// CHECK: scf.forall (%[[I:[a-z0-9_]+]]) in (8)
// CHECK-NEXT: memref.alloca() : memref<64xf32>
// CHECK-NEXT: memref.alloc() : memref<32768xf32>
// CHECK-NEXT: memref.alloc(%[[I]]) : memref<?xf32>
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.alloc() : memref<4xf32>
func.func @sizes() {
  scf.forall (%i) in (8) {
    %small = memref.alloc() : memref<64xf32>
    %big = memref.alloc() : memref<32768xf32>
    %dynamic = memref.alloc(%i) : memref<?xf32>
    scf.for %k = %i to %i step %i {
      %in_loop = memref.alloc() : memref<4xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @budget(
// CHECK: memref.alloca() : memref<16384xf32>
// CHECK-NEXT: memref.alloca() : memref<16384xf32>
// CHECK-NEXT: memref.alloca() : memref<16384xf32>
// CHECK-NEXT: memref.alloca() : memref<16384xf32>
// CHECK-NEXT: memref.alloc() : memref<16384xf32>
func.func @budget() {
  scf.forall (%i) in (8) {
    %0 = memref.alloc() : memref<16384xf32>
    %1 = memref.alloc() : memref<16384xf32>
    %2 = memref.alloc() : memref<16384xf32>
    %3 = memref.alloc() : memref<16384xf32>
    %4 = memref.alloc() : memref<16384xf32>
  }
  return
}
