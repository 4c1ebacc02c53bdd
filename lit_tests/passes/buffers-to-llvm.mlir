// Buffers, loops and vector ops become the LLVM dialect: each memref argument a
// descriptor's fields, loads and stores through getelementptr.
// RUN: helion-opt %s --helion-buffers-to-llvm | FileCheck %s

// CHECK-LABEL: llvm.func @copy(
// CHECK: %[[SRC:[a-z0-9_]+]] = llvm.getelementptr inbounds|nuw %{{[a-z0-9_]+}}[%[[I:[a-z0-9_]+]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[X:[a-z0-9_]+]] = llvm.load %[[SRC]] : !llvm.ptr -> f32
// CHECK: %[[DST:[a-z0-9_]+]] = llvm.getelementptr inbounds|nuw %{{[a-z0-9_]+}}[%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.store %[[X]], %[[DST]] : f32, !llvm.ptr
// CHECK-NOT: memref.
func.func @copy(%a: memref<4xf32>, %b: memref<4xf32>, %i: index) {
  %x = memref.load %a[%i] : memref<4xf32>
  memref.store %x, %b[%i] : memref<4xf32>
  return
}
