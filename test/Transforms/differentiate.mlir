// RUN: xlnet-opt %s --split-input-file --xlnet-differentiate | FileCheck %s

// A gemm with an activation epilogue, dropout and the loss. The epilogue is
// split off so the backward can read the pre-activation; the dropout gets a
// site and its backward is a dropout with the same site (the same mask).
// x is an input, so no gradient of x is built.
// CHECK-LABEL: func.func @ffn_loss
// CHECK-SAME: -> (tensor<f32> {xlnet.output = "loss"}, tensor<6x4xf32> {xlnet.output = "grad.w"}, tensor<6xf32> {xlnet.output = "grad.b"})
// CHECK: %[[Z:.+]] = xlnet.gemm %[[X:[^,]+]], %[[W:[^ ]+]] bias %[[B:[^ ]+]] {transpose_w}
// CHECK-NEXT: %[[Y:.+]] = xlnet.activation relu %[[Z]]
// CHECK-NEXT: %[[D:.+]] = xlnet.dropout %[[Y]] rate = 1.000000e-01 {site = 0 : i64}
// CHECK-NEXT: %[[LOSS:[^,]+]], %{{.+}} = xlnet.lm_loss %[[D]], %[[T:[^,]+]], %[[M:[^ ]+]]
// CHECK-NEXT: %[[DL:.+]] = xlnet.lm_loss_grad %[[D]], %[[T]], %[[M]]
// CHECK-NEXT: %[[DD:.+]] = xlnet.dropout %[[DL]] rate = 1.000000e-01 {site = 0 : i64}
// CHECK-NEXT: %[[DZ:.+]] = xlnet.activation_grad relu %[[DD]], %[[Z]]
// CHECK-NEXT: %[[DW:.+]] = xlnet.gemm_wgrad %[[X]], %[[DZ]] {transpose_w} : (tensor<2x3x4xf32>, tensor<2x3x6xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: %[[DB:.+]] = xlnet.bias_grad %[[DZ]] : (tensor<2x3x6xf32>) -> tensor<6xf32>
// CHECK-NEXT: return %[[LOSS]], %[[DW]], %[[DB]]
func.func @ffn_loss(%x: tensor<2x3x4xf32> {xlnet.input = "x"}, %w: tensor<6x4xf32> {xlnet.param = "w"},
    %b: tensor<6xf32> {xlnet.param = "b"}, %t: tensor<2x3xi64> {xlnet.input = "target"},
    %m: tensor<2x3xf32> {xlnet.input = "target_mask"}) -> (tensor<f32> {xlnet.output = "loss"}) {
  %y = xlnet.gemm %x, %w bias %b {activation = #xlnet<activation relu>, transpose_w} : (tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<6xf32>) -> tensor<2x3x6xf32>
  %d = xlnet.dropout %y rate = 1.000000e-01 : tensor<2x3x6xf32>
  %loss, %ptl = xlnet.lm_loss %d, %t, %m : (tensor<2x3x6xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
  return %loss : tensor<f32>
}

// -----

// The backward of a batch_shared dropout (x without a batch dimension) is
// batch_shared too: the same mask.
// CHECK-LABEL: func.func @shared_dropout
// CHECK: xlnet.dropout %{{.+}} rate = 1.000000e-01 {batch_shared, site = 0 : i64}
// CHECK: %[[DD:.+]] = xlnet.dropout %{{.+}} rate = 1.000000e-01 {batch_shared, site = 0 : i64}
// CHECK: xlnet.gemm_wgrad %{{.+}}, %[[DD]]
func.func @shared_dropout(%x: tensor<2x3x4xf32> {xlnet.input = "x"}, %w: tensor<6x4xf32> {xlnet.param = "w"},
    %t: tensor<2x3xi64> {xlnet.input = "target"},
    %m: tensor<2x3xf32> {xlnet.input = "target_mask"}) -> (tensor<f32> {xlnet.output = "loss"}) {
  %y = xlnet.gemm %x, %w {transpose_w} : (tensor<2x3x4xf32>, tensor<6x4xf32>) -> tensor<2x3x6xf32>
  %d = xlnet.dropout %y rate = 1.000000e-01 {batch_shared} : tensor<2x3x6xf32>
  %loss, %ptl = xlnet.lm_loss %d, %t, %m : (tensor<2x3x6xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
  return %loss : tensor<f32>
}

// -----

// The tied embedding gets one gradient: the output use (gemm_wgrad of the
// head) plus the input use (embedding_grad), summed. A weight used twice is
// summed the same way. mem_concat passes gradient to h only (memory is
// stop-gradient) and mem_cache is not differentiated. Each data gradient is
// a gemm with the complementary k_rank and flipped transpose_w.
// CHECK-LABEL: func.func @tied
// CHECK-SAME: -> (tensor<f32> {xlnet.output = "loss"}, tensor<2x2x4xf32> {xlnet.output = "new_mems.0"}, tensor<5x4xf32> {xlnet.output = "grad.emb"}, tensor<4x2x2xf32> {xlnet.output = "grad.wk"})
// CHECK: %[[H:.+]] = xlnet.embedding %[[IDS:[^,]+]], %[[E:[^ ]+]] :
// CHECK-NEXT: %[[NM:.+]] = xlnet.mem_cache
// CHECK-NEXT: %[[CAT:.+]] = xlnet.mem_concat
// CHECK-NEXT: %[[K:.+]] = xlnet.gemm %[[CAT]], %[[WK:[^ ]+]] :
// CHECK-NEXT: %[[O:.+]] = xlnet.gemm %[[K]], %[[WK]] {k_rank = 2 : i64, transpose_w}
// CHECK-NEXT: %[[L:.+]] = xlnet.gemm %[[O]], %[[E]] {transpose_w}
// CHECK-NEXT: %[[LOSS:[^,]+]], %{{.+}} = xlnet.lm_loss %[[L]]
// CHECK-NEXT: %[[DL:.+]] = xlnet.lm_loss_grad %[[L]]
// CHECK-NEXT: %[[DO:.+]] = xlnet.gemm %[[DL]], %[[E]] : (tensor<2x5x5xf32>, tensor<5x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT: %[[DE1:.+]] = xlnet.gemm_wgrad %[[O]], %[[DL]] {transpose_w} : (tensor<2x5x4xf32>, tensor<2x5x5xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: %[[DK:.+]] = xlnet.gemm %[[DO]], %[[WK]] : (tensor<2x5x4xf32>, tensor<4x2x2xf32>) -> tensor<2x5x2x2xf32>
// CHECK-NEXT: %[[DWK1:.+]] = xlnet.gemm_wgrad %[[K]], %[[DO]] {k_rank = 2 : i64, transpose_w}
// CHECK-NEXT: %[[DCAT:.+]] = xlnet.gemm %[[DK]], %[[WK]] {k_rank = 2 : i64, transpose_w} : (tensor<2x5x2x2xf32>, tensor<4x2x2xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT: %[[DWK2:.+]] = xlnet.gemm_wgrad %[[CAT]], %[[DK]] :
// CHECK-NEXT: %[[DWK:.+]] = xlnet.add %[[DWK1]], %[[DWK2]]
// CHECK-NEXT: %[[DH:.+]] = xlnet.mem_concat_grad %[[DCAT]] : (tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[DE2:.+]] = xlnet.embedding_grad %[[IDS]], %[[DH]]
// CHECK-NEXT: %[[DE:.+]] = xlnet.add %[[DE1]], %[[DE2]]
// CHECK-NEXT: return %[[LOSS]], %[[NM]], %[[DE]], %[[DWK]]
func.func @tied(%ids: tensor<2x3xi64> {xlnet.input = "input_k"}, %mems: tensor<2x2x4xf32> {xlnet.input = "mems.0"},
    %e: tensor<5x4xf32> {xlnet.param = "emb"}, %wk: tensor<4x2x2xf32> {xlnet.param = "wk"},
    %t: tensor<2x5xi64> {xlnet.input = "target"}, %m: tensor<2x5xf32> {xlnet.input = "target_mask"})
    -> (tensor<f32> {xlnet.output = "loss"}, tensor<2x2x4xf32> {xlnet.output = "new_mems.0"}) {
  %h = xlnet.embedding %ids, %e : (tensor<2x3xi64>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %nm = xlnet.mem_cache mems %mems, %h reuse_len = 2 mem_len = 2 : (tensor<2x2x4xf32>, tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  %cat = xlnet.mem_concat %mems, %h : (tensor<2x2x4xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %k = xlnet.gemm %cat, %wk : (tensor<2x5x4xf32>, tensor<4x2x2xf32>) -> tensor<2x5x2x2xf32>
  %o = xlnet.gemm %k, %wk {k_rank = 2 : i64, transpose_w} : (tensor<2x5x2x2xf32>, tensor<4x2x2xf32>) -> tensor<2x5x4xf32>
  %l = xlnet.gemm %o, %e {transpose_w} : (tensor<2x5x4xf32>, tensor<5x4xf32>) -> tensor<2x5x5xf32>
  %loss, %ptl = xlnet.lm_loss %l, %t, %m : (tensor<2x5x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  return %loss, %nm : tensor<f32>, tensor<2x2x4xf32>
}

// -----

// rel_attention: one rel_attention_grad with the forward's operands and site;
// the gradients of the parameters among its operands are returned (those of
// inputs are left unused), and mask_emb's gradient is the sum over slots.
// CHECK-LABEL: func.func @attention
// CHECK: %[[G:.+]] = xlnet.mask_embedding
// CHECK-NEXT: %[[Q:.+]] = xlnet.gemm %[[G]], %[[WQ:[^ ]+]] :
// CHECK-NEXT: %[[A:.+]] = xlnet.rel_attention q(%[[Q]]) {{.*}} rows(%[[ROWS:[^)]+]]) scale = 5.000000e-01 dropatt = 1.000000e-01 {site = 0 : i64}
// CHECK: %[[DA:.+]] = xlnet.gemm %{{.+}}, %[[WQ]] : (tensor<2x2x4xf32>, tensor<4x2x2xf32>) -> tensor<2x2x2x2xf32>
// CHECK: %[[DQ:[^,]+]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[DSE:[^,]+]], %[[DRW:[^,]+]], %[[DRR:[^,]+]], %[[DRS:[^ ]+]] = xlnet.rel_attention_grad dout(%[[DA]]) q(%[[Q]]) {{.*}} rows(%[[ROWS]]) scale = 5.000000e-01 dropatt = 1.000000e-01 {site = 0 : i64}
// CHECK-NEXT: %[[DG:.+]] = xlnet.gemm %[[DQ]], %[[WQ]] {k_rank = 2 : i64, transpose_w}
// CHECK-NEXT: %[[DWQ2:.+]] = xlnet.gemm_wgrad %[[G]], %[[DQ]] :
// CHECK-NEXT: %[[DWQ:.+]] = xlnet.add %{{.+}}, %[[DWQ2]]
// CHECK-NEXT: %[[DM:.+]] = xlnet.mask_embedding_grad %[[DG]] : (tensor<2x2x4xf32>) -> tensor<1x1x4xf32>
// CHECK-NEXT: return %{{[^,]+}}, %[[DM]], %[[DWQ]], %[[DSE]], %[[DRW]], %[[DRR]], %[[DRS]], %{{.+}} :
func.func @attention(%memb: tensor<1x1x4xf32> {xlnet.param = "mask_emb"}, %wq: tensor<4x2x2xf32> {xlnet.param = "q"},
    %k: tensor<2x3x2x2xf32> {xlnet.input = "k"}, %v: tensor<2x3x2x2xf32> {xlnet.input = "v"},
    %kr: tensor<1x6x2x2xf32> {xlnet.input = "k_r"}, %se: tensor<2x2x2xf32> {xlnet.param = "seg_embed"},
    %rw: tensor<2x2xf32> {xlnet.param = "r_w_bias"}, %rr: tensor<2x2xf32> {xlnet.param = "r_r_bias"},
    %rs: tensor<2x2xf32> {xlnet.param = "r_s_bias"}, %seg: tensor<2x3x3xi1> {xlnet.input = "seg"},
    %mask: tensor<2x3x3xi1> {xlnet.input = "mask"}, %rows: tensor<2x2xi64> {xlnet.input = "rows"},
    %e: tensor<5x4xf32> {xlnet.param = "emb"}, %t: tensor<2x2xi64> {xlnet.input = "target"},
    %m: tensor<2x2xf32> {xlnet.input = "target_mask"}) -> (tensor<f32> {xlnet.output = "loss"}) {
  %g = xlnet.mask_embedding %memb : (tensor<1x1x4xf32>) -> tensor<2x2x4xf32>
  %q = xlnet.gemm %g, %wq : (tensor<2x2x4xf32>, tensor<4x2x2xf32>) -> tensor<2x2x2x2xf32>
  %a = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
      scale = 5.000000e-01 dropatt = 1.000000e-01
      : (tensor<2x2x2x2xf32>, tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>, tensor<1x6x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3x3xi1>, tensor<2x3x3xi1>, tensor<2x2xi64>) -> tensor<2x2x2x2xf32>
  %o = xlnet.gemm %a, %wq {k_rank = 2 : i64, transpose_w} : (tensor<2x2x2x2xf32>, tensor<4x2x2xf32>) -> tensor<2x2x4xf32>
  %l = xlnet.gemm %o, %e {transpose_w} : (tensor<2x2x4xf32>, tensor<5x4xf32>) -> tensor<2x2x5xf32>
  %loss, %ptl = xlnet.lm_loss %l, %t, %m : (tensor<2x2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  return %loss : tensor<f32>
}
