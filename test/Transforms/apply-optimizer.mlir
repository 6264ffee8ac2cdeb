// RUN: xlnet-opt %s --split-input-file --allow-unregistered-dialect --xlnet-apply-optimizer | FileCheck %s --check-prefix=ADAM
// RUN: xlnet-opt %s --split-input-file --allow-unregistered-dialect --xlnet-apply-optimizer="weight-decay=0.01 learning-rate=4e-4 warmup-steps=10 train-steps=100 decay=cos min-lr-ratio=0.1 adam-epsilon=1e-6 clip=0.5" | FileCheck %s --check-prefix=ADAMW

// The gradient results become the updated parameters and moments; the
// function gets `step` and the moments as inputs and returns lr and the
// global norm. Without weight decay every update is Adam with bias
// correction (tf.train.AdamOptimizer).
// ADAM-LABEL: func.func @step
// ADAM-SAME: %[[X:[^:]+]]: tensor<2x3xf32> {xlnet.input = "x"}, %[[W:[^:]+]]: tensor<3xf32> {xlnet.param = "transformer.layer.0.ff.layer_1.weight"}, %[[B:[^:]+]]: tensor<3xf32> {xlnet.param = "transformer.layer.0.ff.layer_1.bias"}, %[[R:[^:]+]]: tensor<3xf32> {xlnet.param = "transformer.layer.0.rel_attn.r_w_bias"},
// ADAM-SAME: %[[STEP:[^:]+]]: tensor<i64> {xlnet.input = "step"}, %[[MW:[^:]+]]: tensor<3xf32> {xlnet.input = "adam_m.transformer.layer.0.ff.layer_1.weight"}, %[[VW:[^:]+]]: tensor<3xf32> {xlnet.input = "adam_v.transformer.layer.0.ff.layer_1.weight"},
// ADAM-SAME: -> (tensor<f32> {xlnet.output = "loss"}, tensor<3xf32> {xlnet.output = "new.transformer.layer.0.ff.layer_1.weight"}, tensor<3xf32> {xlnet.output = "new.adam_m.transformer.layer.0.ff.layer_1.weight"}, tensor<3xf32> {xlnet.output = "new.adam_v.transformer.layer.0.ff.layer_1.weight"},
// ADAM-SAME: tensor<f32> {xlnet.output = "lr"}, tensor<f32> {xlnet.output = "grad_norm"})
// ADAM: %[[LOSS:.+]] = "test.loss"
// ADAM-NEXT: %[[GW:.+]] = "test.grad"() {n = 0
// ADAM-NEXT: %[[GB:.+]] = "test.grad"() {n = 1
// ADAM-NEXT: %[[GR:.+]] = "test.grad"() {n = 2
// ADAM-NEXT: %[[LR:.+]] = xlnet.lr_schedule %[[STEP]] decay = poly learning_rate = 1.000000e-04 warmup_steps = 0 train_steps = 1000 min_lr_ratio = 0.000000e+00
// ADAM-NEXT: %[[N:.+]] = xlnet.global_norm %[[GW]], %[[GB]], %[[GR]]
// ADAM-NEXT: %[[P:[^,]+]], %[[M:[^,]+]], %[[V:[^ ]+]] = xlnet.adam_update %[[W]], %[[GW]], %[[MW]], %[[VW]] lr(%[[LR]]) grad_norm(%[[N]]) step(%[[STEP]]) beta1 = 9.000000e-01 beta2 = 0.99899999999999999 epsilon = 1.000000e-08 clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
// ADAM-NEXT: xlnet.adam_update %[[B]], %[[GB]], {{.*}} weight_decay = 0.000000e+00 {bias_correction}
// ADAM-NEXT: xlnet.adam_update %[[R]], %[[GR]], {{.*}} weight_decay = 0.000000e+00 {bias_correction}
// ADAM-NEXT: return %[[LOSS]], %[[P]], %[[M]], %[[V]], {{.*}}, %[[LR]], %[[N]] :

// With weight decay: the official AdamWeightDecayOptimizer (no bias
// correction), the schedule options passed through, and the official
// exclusions: `.bias` and LayerNorm parameters do not decay, the relative
// attention biases do.
// ADAMW: xlnet.lr_schedule %{{.+}} decay = cos learning_rate = 4.000000e-04 warmup_steps = 10 train_steps = 100 min_lr_ratio = 1.000000e-01
// ADAMW: xlnet.adam_update %{{.+}} epsilon = 9.9999999999999995E-7 clip = 5.000000e-01 weight_decay = 1.000000e-02 :
// ADAMW-NEXT: xlnet.adam_update %{{.+}} weight_decay = 0.000000e+00 :
// ADAMW-NEXT: xlnet.adam_update %{{.+}} weight_decay = 1.000000e-02 :
// ADAMW-NOT: bias_correction
func.func @step(%x: tensor<2x3xf32> {xlnet.input = "x"}, %w: tensor<3xf32> {xlnet.param = "transformer.layer.0.ff.layer_1.weight"},
    %b: tensor<3xf32> {xlnet.param = "transformer.layer.0.ff.layer_1.bias"}, %r: tensor<3xf32> {xlnet.param = "transformer.layer.0.rel_attn.r_w_bias"})
    -> (tensor<f32> {xlnet.output = "loss"}, tensor<3xf32> {xlnet.output = "grad.transformer.layer.0.ff.layer_1.weight"},
        tensor<3xf32> {xlnet.output = "grad.transformer.layer.0.ff.layer_1.bias"}, tensor<3xf32> {xlnet.output = "grad.transformer.layer.0.rel_attn.r_w_bias"}) {
  %loss = "test.loss"() : () -> tensor<f32>
  %gw = "test.grad"() {n = 0} : () -> tensor<3xf32>
  %gb = "test.grad"() {n = 1} : () -> tensor<3xf32>
  %gr = "test.grad"() {n = 2} : () -> tensor<3xf32>
  return %loss, %gw, %gb, %gr : tensor<f32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// LayerNorm weights are excluded from decay too (ADAMW), whatever their name ends with.
// ADAMW-LABEL: func.func @layer_norm
// ADAMW: xlnet.adam_update %{{.+}} weight_decay = 0.000000e+00 :
// ADAMW-NEXT: xlnet.adam_update %{{.+}} weight_decay = 1.000000e-02 :
func.func @layer_norm(%g: tensor<3xf32> {xlnet.param = "transformer.layer.0.ff.layer_norm.weight"},
    %e: tensor<3xf32> {xlnet.param = "transformer.mask_emb"})
    -> (tensor<3xf32> {xlnet.output = "grad.transformer.layer.0.ff.layer_norm.weight"}, tensor<3xf32> {xlnet.output = "grad.transformer.mask_emb"}) {
  return %g, %e : tensor<3xf32>, tensor<3xf32>
}
