// RUN: not xlnet-opt %s --split-input-file --xlnet-fuse-kernels=attention-grad-init=some 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTION
// RUN: not xlnet-opt %s --split-input-file --xlnet-fuse-kernels=aux-ld-multiple=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LD
// RUN: xlnet-opt %s --split-input-file --verify-diagnostics --xlnet-fuse-kernels

// Options the pass cannot act on are one error naming the option.
// OPTION: error: --xlnet-fuse-kernels: attention-grad-init must be tensor-core, all or none, got 'some'
// LD: error: --xlnet-fuse-kernels: aux-ld-multiple must be >= 1, got 0
func.func @options(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Fused forms are checked by the op verifiers wherever they come from: an
// init of another type than its result.
func.func @init_type(%dy: tensor<2x16x48xf32>, %g: tensor<24xf32>) -> tensor<48xf32> {
  // expected-error @+1 {{'xlnet.bias_grad' op 'init' ('tensor<24xf32>') must have the type of the result ('tensor<48xf32>')}}
  %db = xlnet.bias_grad %dy init %g : (tensor<2x16x48xf32>, tensor<24xf32>) -> tensor<48xf32>
  return %db : tensor<48xf32>
}

// -----

// A gemm with an init takes no bias (y = init + x·op(w)).
func.func @gemm_init_bias(%x: tensor<2x32xf32>, %w: tensor<32x48xf32>, %b: tensor<48xf32>,
    %r: tensor<2x48xf32>) -> tensor<2x48xf32> {
  // expected-error @+1 {{'xlnet.gemm' op with 'init' (y = init + x·op(w)) takes no bias, activation, activation_grad or aux}}
  %y = xlnet.gemm %x, %w bias %b init %r : (tensor<2x32xf32>, tensor<32x48xf32>, tensor<48xf32>, tensor<2x48xf32>) -> tensor<2x48xf32>
  return %y : tensor<2x48xf32>
}

// -----

// activation_grad needs the pre-activation and returns the bias gradient.
func.func @dgelu_no_aux(%x: tensor<2x32xf32>, %w: tensor<32x48xf32>, %p: tensor<2x48xf32>) -> tensor<2x48xf32> {
  // expected-error @+1 {{'xlnet.gemm' op with activation_grad takes 'pre' (the pre-activation) and returns 'aux' (the bias gradient), with no bias and no activation}}
  %y = xlnet.gemm %x, %w pre %p {activation_grad = #xlnet<activation gelu_tanh>} : (tensor<2x32xf32>, tensor<32x48xf32>, tensor<2x48xf32>) -> tensor<2x48xf32>
  return %y : tensor<2x48xf32>
}

// -----

// The bias gradient has the output width's elements.
func.func @dgelu_bias_width(%x: tensor<2x32xf32>, %w: tensor<32x48xf32>, %p: tensor<2x48xf32>) -> tensor<24xf32> {
  // expected-error @+1 {{'xlnet.gemm' op 'aux' (the bias gradient) has 24 elements but the output width N is 48}}
  %y:2 = xlnet.gemm %x, %w pre %p {activation_grad = #xlnet<activation gelu_tanh>} : (tensor<2x32xf32>, tensor<32x48xf32>, tensor<2x48xf32>) -> (tensor<2x48xf32>, tensor<24xf32>)
  return %y#1 : tensor<24xf32>
}

// -----

// The forward's aux needs the GELU and a bias (GELU_AUX_BIAS).
func.func @aux_without_gelu(%x: tensor<2x32xf32>, %w: tensor<32x48xf32>, %b: tensor<48xf32>) -> tensor<2x48xf32> {
  // expected-error @+1 {{'xlnet.gemm' op 'aux' (the pre-activation) needs activation gelu_tanh and a bias (cuBLASLt's GELU_AUX_BIAS)}}
  %y:2 = xlnet.gemm %x, %w bias %b : (tensor<2x32xf32>, tensor<32x48xf32>, tensor<48xf32>) -> (tensor<2x48xf32>, tensor<2x48xf32>)
  return %y#1 : tensor<2x48xf32>
}

// -----

// init_results names results that may take one, in order, one per init.
func.func @ln_init_results(%dy: tensor<2x48xf32>, %gamma: tensor<48xf32>) -> tensor<48xf32> {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'init_results' entry 0 is 0; only results 1 to 2 may start from an init}}
  %ds, %dg, %db = xlnet.add_layer_norm_grad %dy, %dy, %dy, %gamma inits(%dy) eps = 1.0E-12 {init_results = array<i64: 0>}
      : (tensor<2x48xf32>, tensor<2x48xf32>, tensor<2x48xf32>, tensor<48xf32>, tensor<2x48xf32>)
      -> (tensor<2x48xf32>, tensor<48xf32>, tensor<48xf32>)
  return %dg : tensor<48xf32>
}

// -----

// A fused dropout's rate and site come together.
func.func @ln_dropout_site(%x: tensor<2x48xf32>, %gamma: tensor<48xf32>) -> tensor<2x48xf32> {
  // expected-error @+1 {{'xlnet.add_layer_norm' op 'x_dropout' and 'x_dropout_site' come together (a fused dropout's rate and site)}}
  %y = xlnet.add_layer_norm %x, %x, %gamma, %gamma eps = 1.0E-12 {x_dropout = 1.0E-1 : f64}
      : (tensor<2x48xf32>, tensor<2x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x48xf32>
  return %y : tensor<2x48xf32>
}

// -----

// dsum_dropped exactly with dsum_dropout.
func.func @ln_dsum_dropped(%dy: tensor<2x48xf32>, %gamma: tensor<48xf32>) -> tensor<48xf32> {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op returns 'dsum_dropped' exactly when it has 'dsum_dropout'}}
  %ds, %dg, %db, %g = xlnet.add_layer_norm_grad %dy, %dy, %dy, %gamma eps = 1.0E-12
      : (tensor<2x48xf32>, tensor<2x48xf32>, tensor<2x48xf32>, tensor<48xf32>)
      -> (tensor<2x48xf32>, tensor<48xf32>, tensor<48xf32>, tensor<2x48xf32>)
  return %dg : tensor<48xf32>
}
