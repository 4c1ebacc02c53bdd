// helion-mlir validate exits 1 on a broken file and names the line of the first error.
// RUN: not helion-mlir validate %s 2>&1 | FileCheck %s
// CHECK: validate.mlir:9:{{[0-9]+}}: error: use of undeclared SSA value name

module attributes {loom.block_size_0 = 4 : index} {
  func.func @broken(%a: tensor<4xf32>) -> tensor<4xf32> {
    %bs = "loom.get_symbol"() {name = "block_size_0"} : () -> index
    %0 = "helion.phi"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %missing : tensor<4xf32>
  }
}
