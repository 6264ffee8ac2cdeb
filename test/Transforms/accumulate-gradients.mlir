// RUN: xlnet-opt %s --split-input-file --xlnet-accumulate-gradients | FileCheck %s
// RUN: xlnet-opt %s --split-input-file --xlnet-accumulate-gradients --xlnet-fuse-kernels | FileCheck %s --check-prefix=FUSED
// RUN: xlnet-opt %s --split-input-file --xlnet-accumulate-gradients --xlnet-apply-optimizer=keep-gradients | FileCheck %s --check-prefix=TRAIN

// One micro-batch of gradient accumulation: the loss gradient divides by
// the step's `loss_count`, and each gradient result is `grad_acc.<param>`
// plus this micro-batch's gradient.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x5x4xf32> {xlnet.input = "x"}, %[[T:[^:]+]]: tensor<2x5xi64> {xlnet.input = "target"}, %[[M:[^:]+]]: tensor<2x5xf32> {xlnet.input = "target_mask"}, %[[W:[^:]+]]: tensor<4x6xf32> {xlnet.param = "w"}, %[[B:[^:]+]]: tensor<6xf32> {xlnet.param = "b"},
// CHECK-SAME:    %[[C:[^:]+]]: tensor<f32> {xlnet.input = "loss_count"}, %[[AW:[^:]+]]: tensor<4x6xf32> {xlnet.input = "grad_acc.w"}, %[[AB:[^:]+]]: tensor<6xf32> {xlnet.input = "grad_acc.b"})
// CHECK-SAME:    -> (tensor<f32> {xlnet.output = "loss"}, tensor<4x6xf32> {xlnet.output = "grad.w"}, tensor<6xf32> {xlnet.output = "grad.b"})
// CHECK:         %[[DL:.+]] = xlnet.lm_loss_grad %{{[^,]+}}, %[[T]], %[[M]], %[[C]] :
// CHECK-NEXT:    %[[DW:.+]] = xlnet.gemm_wgrad %[[X]], %[[DL]]
// CHECK-NEXT:    %[[DB:.+]] = xlnet.bias_grad %[[DL]]
// CHECK-NEXT:    %[[GW:.+]] = xlnet.add %[[AW]], %[[DW]]
// CHECK-NEXT:    %[[GB:.+]] = xlnet.add %[[AB]], %[[DB]]
// CHECK-NEXT:    return %{{[^,]+}}, %[[GW]], %[[GB]] :

// The fusion pass folds each sum into the op that writes the gradient (a
// GEMM with beta 1, a bias gradient with an init): no add is left.
// FUSED-LABEL: func.func @step(
// FUSED:         xlnet.gemm_wgrad %{{[^,]+}}, %{{[^ ]+}} init %{{[^ ]+}} :
// FUSED:         xlnet.bias_grad %{{[^ ]+}} init %{{[^ ]+}} :
// FUSED-NOT:     xlnet.add

// The update reads the accumulated gradients and keeps them as results
// (the next micro-batch's accumulator).
// TRAIN-LABEL: func.func @step(
// TRAIN-SAME:    -> (tensor<f32> {xlnet.output = "loss"}, tensor<4x6xf32> {xlnet.output = "grad.w"}, tensor<6xf32> {xlnet.output = "grad.b"}, tensor<4x6xf32> {xlnet.output = "new.w"},
// TRAIN:         %[[GW:.+]] = xlnet.add
// TRAIN-NEXT:    %[[GB:.+]] = xlnet.add
// TRAIN:         %[[N:.+]] = xlnet.global_norm %[[GW]], %[[GB]] :
// TRAIN:         xlnet.adam_update %{{[^,]+}}, %[[GW]],
// TRAIN:         return %{{[^,]+}}, %[[GW]], %[[GB]], %{{.+}}, %[[N]] :
func.func @step(%x: tensor<2x5x4xf32> {xlnet.input = "x"}, %t: tensor<2x5xi64> {xlnet.input = "target"},
    %m: tensor<2x5xf32> {xlnet.input = "target_mask"}, %w: tensor<4x6xf32> {xlnet.param = "w"},
    %b: tensor<6xf32> {xlnet.param = "b"})
    -> (tensor<f32> {xlnet.output = "loss"}, tensor<4x6xf32> {xlnet.output = "grad.w"},
        tensor<6xf32> {xlnet.output = "grad.b"}) {
  %logits = xlnet.gemm %x, %w bias %b : (tensor<2x5x4xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<2x5x6xf32>
  %loss, %ptl = xlnet.lm_loss %logits, %t, %m : (tensor<2x5x6xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  %dl = xlnet.lm_loss_grad %logits, %t, %m : (tensor<2x5x6xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x6xf32>
  %dw = xlnet.gemm_wgrad %x, %dl : (tensor<2x5x4xf32>, tensor<2x5x6xf32>) -> tensor<4x6xf32>
  %db = xlnet.bias_grad %dl : (tensor<2x5x6xf32>) -> tensor<6xf32>
  return %loss, %dw, %db : tensor<f32>, tensor<4x6xf32>, tensor<6xf32>
}

// -----

// A gradient summed from two contributions (a weight both streams read):
// the accumulator becomes the chain's first term, so both adds fold, each
// into the GEMM of its second operand.
// CHECK-LABEL: func.func @shared(
// CHECK-SAME:    %[[AW:[^:]+]]: tensor<4x6xf32> {xlnet.input = "grad_acc.w"})
// CHECK:         %[[D1:.+]] = xlnet.gemm_wgrad %{{[^,]+}}, %{{[^ ]+}} :
// CHECK-NEXT:    %[[D2:.+]] = xlnet.gemm_wgrad %{{[^,]+}}, %{{[^ ]+}} :
// CHECK-NEXT:    %[[A1:.+]] = xlnet.add %[[AW]], %[[D1]]
// CHECK-NEXT:    %[[A2:.+]] = xlnet.add %[[A1]], %[[D2]]
// CHECK-NEXT:    return %[[A2]]
// FUSED-LABEL: func.func @shared(
// FUSED:         %[[F1:.+]] = xlnet.gemm_wgrad %{{[^,]+}}, %{{[^ ]+}} init %{{[^ ]+}} :
// FUSED-NEXT:    %[[F2:.+]] = xlnet.gemm_wgrad %{{[^,]+}}, %{{[^ ]+}} init %[[F1]] :
// FUSED-NOT:     xlnet.add
// FUSED:         return %[[F2]]
func.func @shared(%x: tensor<2x5x4xf32> {xlnet.input = "x"}, %y: tensor<2x5x4xf32> {xlnet.input = "y"},
    %t: tensor<2x5xi64> {xlnet.input = "target"}, %m: tensor<2x5xf32> {xlnet.input = "target_mask"},
    %l: tensor<2x5x6xf32> {xlnet.input = "logits"}, %w: tensor<4x6xf32> {xlnet.param = "w"})
    -> (tensor<4x6xf32> {xlnet.output = "grad.w"}) {
  %dl = xlnet.lm_loss_grad %l, %t, %m : (tensor<2x5x6xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x6xf32>
  %d1 = xlnet.gemm_wgrad %x, %dl : (tensor<2x5x4xf32>, tensor<2x5x6xf32>) -> tensor<4x6xf32>
  %d2 = xlnet.gemm_wgrad %y, %dl : (tensor<2x5x4xf32>, tensor<2x5x6xf32>) -> tensor<4x6xf32>
  %g = xlnet.add %d1, %d2 : tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}
