// RUN: xlnet-opt %s --split-input-file --xlnet-mixed-precision | FileCheck %s

// An FFN's forward and two weight gradients: the activations (the GEMMs'
// results, the LayerNorm's) become bf16; the parameters, the GEMMs' operands
// and bias are read through one cast each (the residual %x shares its cast
// with the first GEMM); the weight and bias gradients, and their sum, stay
// f32; the returned activation is cast back, so the signature is unchanged.
// CHECK-LABEL: func.func @ffn(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>, %[[W1:[^:]+]]: tensor<32x48xf32>, %[[B1:[^:]+]]: tensor<48xf32>, %[[W2:[^:]+]]: tensor<48x32xf32>
// CHECK-SAME:    -> (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<32xf32>)
// CHECK-DAG:     %[[W2H:.+]] = xlnet.cast %[[W2]] : tensor<48x32xf32> to tensor<48x32xbf16>
// CHECK-DAG:     %[[B1H:.+]] = xlnet.cast %[[B1]] : tensor<48xf32> to tensor<48xbf16>
// CHECK-DAG:     %[[W1H:.+]] = xlnet.cast %[[W1]] : tensor<32x48xf32> to tensor<32x48xbf16>
// CHECK-DAG:     %[[XH:.+]] = xlnet.cast %[[X]] : tensor<2x16x32xf32> to tensor<2x16x32xbf16>
// CHECK:         %[[H:.+]] = xlnet.gemm %[[XH]], %[[W1H]] bias %[[B1H]] {{.*}} -> tensor<2x16x48xbf16>
// CHECK:         %[[Y:.+]] = xlnet.gemm %[[H]], %[[W2H]] : (tensor<2x16x48xbf16>, tensor<48x32xbf16>) -> tensor<2x16x32xbf16>
// CHECK:         %[[O:.+]] = xlnet.add_layer_norm %[[Y]], %[[XH]], {{.*}} : (tensor<2x16x32xbf16>, tensor<2x16x32xbf16>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xbf16>
// CHECK:         %[[DW:.+]] = xlnet.gemm_wgrad %[[H]], %[[O]] : (tensor<2x16x48xbf16>, tensor<2x16x32xbf16>) -> tensor<48x32xf32>
// CHECK:         %[[DW2:.+]] = xlnet.gemm_wgrad %[[H]], %[[O]] : {{.*}} -> tensor<48x32xf32>
// CHECK:         %[[SUM:.+]] = xlnet.add %[[DW]], %[[DW2]] : tensor<48x32xf32>
// CHECK:         %[[DB:.+]] = xlnet.bias_grad %[[O]] : (tensor<2x16x32xbf16>) -> tensor<32xf32>
// CHECK:         %[[OF:.+]] = xlnet.cast %[[O]] : tensor<2x16x32xbf16> to tensor<2x16x32xf32>
// CHECK:         return %[[OF]], %[[SUM]], %[[DB]] : tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<32xf32>
func.func @ffn(%x: tensor<2x16x32xf32>, %w1: tensor<32x48xf32>, %b1: tensor<48xf32>,
    %w2: tensor<48x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>)
    -> (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<32xf32>) {
  %h = xlnet.gemm %x, %w1 bias %b1 {activation = #xlnet<activation gelu_tanh>}
      : (tensor<2x16x32xf32>, tensor<32x48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  %y = xlnet.gemm %h, %w2 : (tensor<2x16x48xf32>, tensor<48x32xf32>) -> tensor<2x16x32xf32>
  %o = xlnet.add_layer_norm %y, %x, %gamma, %beta eps = 1.0e-12
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %dw = xlnet.gemm_wgrad %h, %o : (tensor<2x16x48xf32>, tensor<2x16x32xf32>) -> tensor<48x32xf32>
  %dw2 = xlnet.gemm_wgrad %h, %o : (tensor<2x16x48xf32>, tensor<2x16x32xf32>) -> tensor<48x32xf32>
  %sum = xlnet.add %dw, %dw2 : tensor<48x32xf32>
  %db = xlnet.bias_grad %o : (tensor<2x16x32xf32>) -> tensor<32xf32>
  return %o, %sum, %db : tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<32xf32>
}

// -----

// A function already in bf16 is left as it is (no second cast).
// CHECK-LABEL: func.func @again(
// CHECK-NOT:     xlnet.cast
// CHECK:         xlnet.gemm %{{.*}}, %{{.*}} : (tensor<2x16x32xbf16>, tensor<32x48xbf16>) -> tensor<2x16x48xbf16>
// CHECK-NOT:     xlnet.cast
// CHECK:         return
func.func @again(%x: tensor<2x16x32xbf16>, %w: tensor<32x48xbf16>) -> tensor<2x16x48xbf16> {
  %h = xlnet.gemm %x, %w : (tensor<2x16x32xbf16>, tensor<32x48xbf16>) -> tensor<2x16x48xbf16>
  return %h : tensor<2x16x48xbf16>
}
