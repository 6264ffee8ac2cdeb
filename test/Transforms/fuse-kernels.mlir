// RUN: xlnet-opt %s --split-input-file --xlnet-fuse-kernels | FileCheck %s
// RUN: xlnet-opt %s --split-input-file --xlnet-fuse-kernels=attention-grad-init=all \
// RUN:   | FileCheck %s --check-prefix=ALL

// GELU forward: gemm(x, w, b) -> P; A = gelu(P) => one gemm returning
// (A, aux P) (cuBLASLt's GELU_AUX_BIAS); P's other readers read the aux.
// CHECK-LABEL: func.func @gelu_forward(
// CHECK:         %[[A:[^,]+]], %[[P:[^ ]+]] = xlnet.gemm %{{.*}}, %{{.*}} bias %{{.*}} {activation = #xlnet<activation gelu_tanh>}
// CHECK-SAME:      -> (tensor<2x16x48xf32>, tensor<2x16x48xf32>)
// CHECK-NOT:     xlnet.activation
// CHECK:         return %[[A]], %[[P]]
func.func @gelu_forward(%x: tensor<2x16x32xf32>, %w: tensor<32x48xf32>, %b: tensor<48xf32>)
    -> (tensor<2x16x48xf32>, tensor<2x16x48xf32>) {
  %p = xlnet.gemm %x, %w bias %b : (tensor<2x16x32xf32>, tensor<32x48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  %a = xlnet.activation gelu_tanh %p : tensor<2x16x48xf32>
  return %a, %p : tensor<2x16x48xf32>, tensor<2x16x48xf32>
}

// -----

// Not fused: an output width (12) cuBLASLt's aux matrix cannot take (its
// leading dimension a multiple of 8), and a GEMM without a bias.
// CHECK-LABEL: func.func @gelu_forward_not(
// CHECK:         xlnet.gemm {{.*}} -> tensor<2x16x12xf32>
// CHECK-NEXT:    xlnet.activation gelu_tanh
// CHECK:         xlnet.gemm {{.*}} -> tensor<2x16x48xf32>
// CHECK-NEXT:    xlnet.activation gelu_tanh
func.func @gelu_forward_not(%x: tensor<2x16x32xf32>, %w12: tensor<32x12xf32>, %b12: tensor<12xf32>,
    %w: tensor<32x48xf32>) -> (tensor<2x16x12xf32>, tensor<2x16x48xf32>) {
  %p = xlnet.gemm %x, %w12 bias %b12 : (tensor<2x16x32xf32>, tensor<32x12xf32>, tensor<12xf32>) -> tensor<2x16x12xf32>
  %a = xlnet.activation gelu_tanh %p : tensor<2x16x12xf32>
  %q = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<2x16x48xf32>
  %c = xlnet.activation gelu_tanh %q : tensor<2x16x48xf32>
  return %a, %c : tensor<2x16x12xf32>, tensor<2x16x48xf32>
}

// -----

// GELU backward: dA = gemm(dy, w) read only by dP = gelu'(dA, P), and
// db = bias_grad(dP) => one gemm reading P, returning (dP, aux db)
// (DGELU_BGRAD).
// CHECK-LABEL: func.func @gelu_backward(
// CHECK-SAME:    %{{[^:]+}}: tensor<2x16x32xf32>, %{{[^:]+}}: tensor<48x32xf32>, %[[P:[^:]+]]: tensor<2x16x48xf32>)
// CHECK:         %[[DP:[^,]+]], %[[DB:[^ ]+]] = xlnet.gemm %{{.*}}, %{{.*}} pre %[[P]] {activation_grad = #xlnet<activation gelu_tanh>, transpose_w}
// CHECK-SAME:      -> (tensor<2x16x48xf32>, tensor<48xf32>)
// CHECK-NOT:     xlnet.activation_grad
// CHECK-NOT:     xlnet.bias_grad
// CHECK:         return %[[DP]], %[[DB]]
func.func @gelu_backward(%dy: tensor<2x16x32xf32>, %w: tensor<48x32xf32>, %p: tensor<2x16x48xf32>)
    -> (tensor<2x16x48xf32>, tensor<48xf32>) {
  %da = xlnet.gemm %dy, %w {transpose_w} : (tensor<2x16x32xf32>, tensor<48x32xf32>) -> tensor<2x16x48xf32>
  %dp = xlnet.activation_grad gelu_tanh %da, %p : tensor<2x16x48xf32>
  %db = xlnet.bias_grad %dp : (tensor<2x16x48xf32>) -> tensor<48xf32>
  return %dp, %db : tensor<2x16x48xf32>, tensor<48xf32>
}

// -----

// Not fused: dA is also returned (it must be written), and no bias
// gradient of dP exists.
// CHECK-LABEL: func.func @gelu_backward_not(
// CHECK:         xlnet.gemm
// CHECK-NEXT:    xlnet.activation_grad gelu_tanh
// CHECK-NEXT:    xlnet.bias_grad
// CHECK-NEXT:    xlnet.gemm
// CHECK-NEXT:    xlnet.activation_grad gelu_tanh
// CHECK-NEXT:    return
func.func @gelu_backward_not(%dy: tensor<2x16x32xf32>, %w: tensor<48x32xf32>, %p: tensor<2x16x48xf32>)
    -> (tensor<2x16x48xf32>, tensor<48xf32>, tensor<2x16x48xf32>) {
  %da = xlnet.gemm %dy, %w {transpose_w} : (tensor<2x16x32xf32>, tensor<48x32xf32>) -> tensor<2x16x48xf32>
  %dp = xlnet.activation_grad gelu_tanh %da, %p : tensor<2x16x48xf32>
  %db = xlnet.bias_grad %dp : (tensor<2x16x48xf32>) -> tensor<48xf32>
  %da2 = xlnet.gemm %dy, %w {transpose_w} : (tensor<2x16x32xf32>, tensor<48x32xf32>) -> tensor<2x16x48xf32>
  %dp2 = xlnet.activation_grad gelu_tanh %da2, %p : tensor<2x16x48xf32>
  return %da, %db, %dp2 : tensor<2x16x48xf32>, tensor<48xf32>, tensor<2x16x48xf32>
}

// -----

// Accumulate: Y = gemm(...) or gemm_wgrad(...); Z = X + Y => the GEMM with
// init X (beta 1) returns Z, either order of the add's operands.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME:    %{{[^:]+}}: tensor<2x16x32xf32>, %{{[^:]+}}: tensor<32x48xf32>, %[[R:[^:]+]]: tensor<2x16x48xf32>, %[[GW:[^:]+]]: tensor<32x48xf32>, %{{[^:]+}}: tensor<2x16x48xf32>)
// CHECK:         %[[Z:.*]] = xlnet.gemm %{{.*}}, %{{.*}} init %[[R]] :
// CHECK:         %[[DW:.*]] = xlnet.gemm_wgrad %{{.*}}, %{{.*}} init %[[GW]] :
// CHECK-NOT:     xlnet.add %
// CHECK:         return %[[Z]], %[[DW]]
func.func @accumulate(%x: tensor<2x16x32xf32>, %w: tensor<32x48xf32>, %r: tensor<2x16x48xf32>,
    %gw: tensor<32x48xf32>, %dy: tensor<2x16x48xf32>) -> (tensor<2x16x48xf32>, tensor<32x48xf32>) {
  %y = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<2x16x48xf32>
  %z = xlnet.add %r, %y : tensor<2x16x48xf32>
  %dw = xlnet.gemm_wgrad %x, %dy : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<32x48xf32>
  %s = xlnet.add %dw, %gw : tensor<32x48xf32>
  return %z, %s : tensor<2x16x48xf32>, tensor<32x48xf32>
}

// -----

// Not accumulated: Y read twice, X made after the GEMM, a GEMM with a bias.
// CHECK-LABEL: func.func @accumulate_not(
// CHECK-NOT:     init
// CHECK-COUNT-3: xlnet.add %
func.func @accumulate_not(%x: tensor<2x16x32xf32>, %w: tensor<32x48xf32>, %b: tensor<48xf32>,
    %r: tensor<2x16x48xf32>) -> (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>,
    tensor<2x16x48xf32>) {
  %y = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<2x16x48xf32>
  %z = xlnet.add %r, %y : tensor<2x16x48xf32>
  %y2 = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<2x16x48xf32>
  %late = xlnet.activation relu %r : tensor<2x16x48xf32>
  %z2 = xlnet.add %late, %y2 : tensor<2x16x48xf32>
  %y3 = xlnet.gemm %x, %w bias %b : (tensor<2x16x32xf32>, tensor<32x48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  %z3 = xlnet.add %r, %y3 : tensor<2x16x48xf32>
  return %z, %y, %z2, %z3 : tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>
}

// -----

// Add into: bias_grad, embedding_grad and mem_concat_grad (result 0) and
// add_layer_norm_grad's dgamma and dbeta start from the add's other operand.
// CHECK-LABEL: func.func @add_into(
// CHECK-SAME:    %[[G:[^:]+]]: tensor<48xf32>, %[[E:[^:]+]]: tensor<64x48xf32>, %[[H:[^:]+]]: tensor<2x16x48xf32>, %[[DG:[^:]+]]: tensor<48xf32>,
// CHECK:         xlnet.bias_grad %{{.*}} init %[[G]] :
// CHECK:         xlnet.embedding_grad %{{.*}}, %{{.*}} init %[[E]] :
// CHECK:         xlnet.mem_concat_grad %{{.*}} init %[[H]] :
// CHECK:         xlnet.add_layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} inits(%[[DG]], %[[G]]) eps = {{.*}} {init_results = array<i64: 1, 2>}
// CHECK-NOT:     xlnet.add %
func.func @add_into(%g: tensor<48xf32>, %e: tensor<64x48xf32>, %h: tensor<2x16x48xf32>,
    %dg: tensor<48xf32>, %dy: tensor<2x16x48xf32>, %ids: tensor<2x16xi64>,
    %dcat: tensor<2x24x48xf32>, %gamma: tensor<48xf32>)
    -> (tensor<48xf32>, tensor<64x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>) {
  %db = xlnet.bias_grad %dy : (tensor<2x16x48xf32>) -> tensor<48xf32>
  %0 = xlnet.add %g, %db : tensor<48xf32>
  %de = xlnet.embedding_grad %ids, %dy : (tensor<2x16xi64>, tensor<2x16x48xf32>) -> tensor<64x48xf32>
  %1 = xlnet.add %de, %e : tensor<64x48xf32>
  %dh = xlnet.mem_concat_grad %dcat : (tensor<2x24x48xf32>) -> tensor<2x16x48xf32>
  %2 = xlnet.add %h, %dh : tensor<2x16x48xf32>
  %ds, %dgamma, %dbeta = xlnet.add_layer_norm_grad %dy, %h, %h, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>)
      -> (tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>)
  %3 = xlnet.add %dbeta, %g : tensor<48xf32>
  %4 = xlnet.add %dg, %dgamma : tensor<48xf32>
  return %0, %1, %2, %ds, %4, %3 : tensor<48xf32>, tensor<64x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>
}

// -----

// Not added into: add_layer_norm_grad's dsum (result 0 takes no init), and
// an f32 rel_attention_grad (the CUDA backend's f32 kernels take no inits)
// unless attention-grad-init=all.
// CHECK-LABEL: func.func @add_into_not(
// CHECK:         xlnet.add_layer_norm_grad {{.*}} eps = {{[^{]*}} :
// CHECK-NEXT:    xlnet.add %
// CHECK-NEXT:    xlnet.rel_attention_grad {{.*}} scale = {{[^{]*}} {site
// CHECK-NEXT:    xlnet.add %
// CHECK-NEXT:    return
// ALL-LABEL: func.func @add_into_not(
// ALL:         xlnet.add %
// ALL-NEXT:    xlnet.rel_attention_grad {{.*}} inits(%{{[^)]+}}) scale {{.*}} {init_results = array<i64: 1>
// ALL-NEXT:    return
func.func @add_into_not(%dy: tensor<2x16x48xf32>, %h: tensor<2x16x48xf32>, %gamma: tensor<48xf32>,
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %seg: tensor<2x16xi64>,
    %rank: tensor<2x2x16xi64>, %kin: tensor<2x24x2x16xf32>)
    -> (tensor<2x16x48xf32>, tensor<2x24x2x16xf32>) {
  %ds, %dgamma, %dbeta = xlnet.add_layer_norm_grad %dy, %h, %h, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>)
      -> (tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>)
  %0 = xlnet.add %h, %ds : tensor<2x16x48xf32>
  %dq, %dk, %dv, %dkr, %dse, %drw, %drr, %drs = xlnet.rel_attention_grad dout(%q) q(%q) k(%k) v(%k)
      k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw) seg_mat(%seg) mask(%rank)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xi64>, tensor<2x2x16xi64>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %1 = xlnet.add %kin, %dk : tensor<2x24x2x16xf32>
  return %0, %1 : tensor<2x16x48xf32>, tensor<2x24x2x16xf32>
}

// -----

// bf16, compact masks and d_head 16 (the tensor-core kernels): every
// gradient but dq takes an init; dq does not.
// CHECK-LABEL: func.func @attention_tc(
// CHECK-SAME:    %{{[^:]+}}: tensor<2x24x2x16xbf16>, %[[KIN:[^:]+]]: tensor<2x24x2x16xbf16>
// CHECK:         %[[DQ:[^,]+]], %[[DK:[^,]+]], {{.*}} = xlnet.rel_attention_grad {{.*}} inits(%[[KIN]]) scale {{.*}} {init_results = array<i64: 1>
// CHECK-NEXT:    xlnet.add %{{.*}}, %[[DQ]]
// CHECK-NEXT:    return %{{.*}}, %[[DK]]
func.func @attention_tc(%q: tensor<2x16x2x16xbf16>, %k: tensor<2x24x2x16xbf16>, %kin: tensor<2x24x2x16xbf16>,
    %kr: tensor<1x40x2x16xbf16>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>,
    %seg: tensor<2x16xi64>, %rank: tensor<2x2x16xi64>)
    -> (tensor<2x16x2x16xbf16>, tensor<2x24x2x16xbf16>) {
  %dq, %dk, %dv, %dkr, %dse, %drw, %drr, %drs = xlnet.rel_attention_grad dout(%q) q(%q) k(%k) v(%k)
      k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw) seg_mat(%seg) mask(%rank)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xbf16>, tensor<2x16x2x16xbf16>, tensor<2x24x2x16xbf16>, tensor<2x24x2x16xbf16>,
         tensor<1x40x2x16xbf16>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xi64>, tensor<2x2x16xi64>)
      -> (tensor<2x16x2x16xbf16>, tensor<2x24x2x16xbf16>, tensor<2x24x2x16xbf16>, tensor<1x40x2x16xbf16>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %0 = xlnet.add %q, %dq : tensor<2x16x2x16xbf16>
  %1 = xlnet.add %kin, %dk : tensor<2x24x2x16xbf16>
  return %0, %1 : tensor<2x16x2x16xbf16>, tensor<2x24x2x16xbf16>
}

// -----

// LayerNorm dropout, XLNet's LayerNorm(dropout(h) + residual): the forward
// and the backward's LayerNorm read h and drop it themselves (the dropout's
// rate and site), so dropout(h) is never stored; the dropout of the
// gradient's dsum is the gradient's fourth result. Random ops without a
// site get theirs first, in op order (the plan emitter's numbers).
// CHECK-LABEL: func.func @layer_norm_dropout(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<2x16x48xf32>
// CHECK:         xlnet.add_layer_norm %[[H]], {{.*}} {x_dropout = 1.000000e-01 : f64, x_dropout_site = 4 : i64}
// CHECK:         %[[DS:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %[[G:[^ ]+]] = xlnet.add_layer_norm_grad %{{.*}}, %[[H]], {{.*}} {dsum_dropout = 1.000000e-01 : f64, dsum_dropout_site = 5 : i64, x_dropout = 1.000000e-01 : f64, x_dropout_site = 4 : i64}
// CHECK-NOT:     xlnet.dropout
// CHECK:         return
func.func @layer_norm_dropout(%h: tensor<2x16x48xf32>, %r: tensor<2x16x48xf32>, %gamma: tensor<48xf32>,
    %dy: tensor<2x16x48xf32>) -> (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>) {
  %y = xlnet.dropout %h rate = 1.000000e-01 {site = 4 : i64} : tensor<2x16x48xf32>
  %ln = xlnet.add_layer_norm %y, %r, %gamma, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  %ds, %dg, %db = xlnet.add_layer_norm_grad %dy, %y, %r, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>)
      -> (tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>)
  %g = xlnet.dropout %ds rate = 1.000000e-01 : tensor<2x16x48xf32>
  return %ln, %ds, %g : tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>
}

// -----

// Not fused: a dropout also returned (it must be stored), one read as the
// residual, one no add_layer_norm reads as x, and batch_shared ones, of x
// and of a gradient's dsum (their index is not a batch row's: the
// LayerNorm's fused dropouts count rows).
// CHECK-LABEL: func.func @layer_norm_dropout_not(
// CHECK-NOT:     x_dropout
// CHECK-NOT:     dsum_dropout
// CHECK-COUNT-5: xlnet.dropout
func.func @layer_norm_dropout_not(%h: tensor<2x16x48xf32>, %r: tensor<2x16x48xf32>, %gamma: tensor<48xf32>)
    -> (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>,
        tensor<2x16x48xf32>, tensor<2x16x48xf32>) {
  %y4 = xlnet.dropout %h rate = 1.000000e-01 {batch_shared} : tensor<2x16x48xf32>
  %ln4 = xlnet.add_layer_norm %y4, %r, %gamma, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  %ds, %dg, %db = xlnet.add_layer_norm_grad %r, %r, %h, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>)
      -> (tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>)
  %g4 = xlnet.dropout %ds rate = 1.000000e-01 {batch_shared} : tensor<2x16x48xf32>
  %y = xlnet.dropout %h rate = 1.000000e-01 : tensor<2x16x48xf32>
  %ln = xlnet.add_layer_norm %y, %r, %gamma, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  %y2 = xlnet.dropout %h rate = 1.000000e-01 : tensor<2x16x48xf32>
  %ln2 = xlnet.add_layer_norm %r, %y2, %gamma, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  %y3 = xlnet.dropout %h rate = 1.000000e-01 : tensor<2x16x48xf32>
  return %y, %ln, %ln2, %y3, %ln4, %g4 : tensor<2x16x48xf32>, tensor<2x16x48xf32>,
      tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>, tensor<2x16x48xf32>
}
