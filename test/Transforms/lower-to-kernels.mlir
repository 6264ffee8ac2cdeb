// RUN: xlnet-opt %s --split-input-file --xlnet-lower-to-kernels | FileCheck %s

// head_proj is a plain GEMM: [B,T,D] x [D,N,H], contracting one dim.
// CHECK-LABEL: func.func @head_proj
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x4xf32>, %[[W:[^:]+]]: tensor<4x2x2xf32>)
// CHECK-NEXT: %[[Y:.+]] = xlnet.gemm %[[X]], %[[W]] : (tensor<2x4x4xf32>, tensor<4x2x2xf32>) -> tensor<2x4x2x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @head_proj(%x: tensor<2x4x4xf32>, %w: tensor<4x2x2xf32>) -> tensor<2x4x2x2xf32> {
  %y = xlnet.head_proj %x, %w : (tensor<2x4x4xf32>, tensor<4x2x2xf32>) -> tensor<2x4x2x2xf32>
  return %y : tensor<2x4x2x2xf32>
}

// -----

// post_attention: the o-projection contracts (N, H) against W_o [D,N,H]
// (k_rank 2, transposed); dropout 0 inserts no dropout op.
// CHECK-LABEL: func.func @post_attention_no_dropout
// CHECK-SAME: (%[[ATTN:[^:]+]]: tensor<2x4x2x2xf32>, %[[RES:[^:]+]]: tensor<2x4x4xf32>, %[[WO:[^:]+]]: tensor<4x2x2xf32>, %[[GAMMA:[^:]+]]: tensor<4xf32>, %[[BETA:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[PROJ:.+]] = xlnet.gemm %[[ATTN]], %[[WO]] {k_rank = 2 : i64, transpose_w} : (tensor<2x4x2x2xf32>, tensor<4x2x2xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT: %[[OUT:.+]] = xlnet.add_layer_norm %[[PROJ]], %[[RES]], %[[GAMMA]], %[[BETA]] eps = 9.9999999999999998E-13
// CHECK-NEXT: return %[[OUT]]
func.func @post_attention_no_dropout(%attn: tensor<2x4x2x2xf32>, %res: tensor<2x4x4xf32>, %wo: tensor<4x2x2xf32>,
    %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4xf32> {
  %y = xlnet.post_attention %attn residual %res weight %wo layer_norm(%g, %b) eps = 1.0e-12 dropout = 0.0
      : (tensor<2x4x2x2xf32>, tensor<2x4x4xf32>, tensor<4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// With dropout > 0 the projection is dropped out before the residual add.
// CHECK-LABEL: func.func @post_attention_dropout
// CHECK: %[[PROJ:.+]] = xlnet.gemm
// CHECK-NEXT: %[[DROP:.+]] = xlnet.dropout %[[PROJ]] rate = 1.000000e-01 : tensor<2x4x4xf32>
// CHECK-NEXT: xlnet.add_layer_norm %[[DROP]],
func.func @post_attention_dropout(%attn: tensor<2x4x2x2xf32>, %res: tensor<2x4x4xf32>, %wo: tensor<4x2x2xf32>,
    %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4xf32> {
  %y = xlnet.post_attention %attn residual %res weight %wo layer_norm(%g, %b) eps = 1.0e-12 dropout = 0.1
      : (tensor<2x4x2x2xf32>, tensor<2x4x4xf32>, tensor<4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// ffn: layer_1 with a bias + activation epilogue, layer_2 with a bias, then
// residual + LayerNorm over the FFN input; dropout after each GEMM.
// CHECK-LABEL: func.func @ffn
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x4xf32>, %[[W1:[^:]+]]: tensor<8x4xf32>, %[[B1:[^:]+]]: tensor<8xf32>, %[[W2:[^:]+]]: tensor<4x8xf32>, %[[B2:[^:]+]]: tensor<4xf32>, %[[GAMMA:[^:]+]]: tensor<4xf32>, %[[BETA:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[INNER:.+]] = xlnet.gemm %[[X]], %[[W1]] bias %[[B1]] {activation = #xlnet<activation gelu_erf>, transpose_w} : (tensor<2x4x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[INNER_DROP:.+]] = xlnet.dropout %[[INNER]] rate = 2.500000e-01 : tensor<2x4x8xf32>
// CHECK-NEXT: %[[OUTER:.+]] = xlnet.gemm %[[INNER_DROP]], %[[W2]] bias %[[B2]] {transpose_w} : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT: %[[OUTER_DROP:.+]] = xlnet.dropout %[[OUTER]] rate = 2.500000e-01
// CHECK-NEXT: %[[OUT:.+]] = xlnet.add_layer_norm %[[OUTER_DROP]], %[[X]], %[[GAMMA]], %[[BETA]]
// CHECK-NEXT: return %[[OUT]]
func.func @ffn(%x: tensor<2x4x4xf32>, %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8xf32>,
    %b2: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4xf32> {
  %y = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%g, %b) activation = gelu_erf eps = 1.0e-12 dropout = 0.25
      : (tensor<2x4x4xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// lm_head: g · Eᵀ + b with the tied embedding [V, D].
// CHECK-LABEL: func.func @lm_head
// CHECK-SAME: (%[[G:[^:]+]]: tensor<2x3x4xf32>, %[[EMB:[^:]+]]: tensor<10x4xf32>, %[[BIAS:[^:]+]]: tensor<10xf32>)
// CHECK-NEXT: %[[LOGITS:.+]] = xlnet.gemm %[[G]], %[[EMB]] bias %[[BIAS]] {transpose_w} : (tensor<2x3x4xf32>, tensor<10x4xf32>, tensor<10xf32>) -> tensor<2x3x10xf32>
// CHECK-NEXT: return %[[LOGITS]]
func.func @lm_head(%g: tensor<2x3x4xf32>, %emb: tensor<10x4xf32>, %bias: tensor<10xf32>) -> tensor<2x3x10xf32> {
  %logits = xlnet.lm_head %g, %emb, %bias : (tensor<2x3x4xf32>, tensor<10x4xf32>, tensor<10xf32>) -> tensor<2x3x10xf32>
  return %logits : tensor<2x3x10xf32>
}

// -----

// Kernel-level ops are left alone.
// CHECK-LABEL: func.func @kernel_ops_untouched
// CHECK-NEXT: xlnet.embedding
// CHECK-NEXT: return
func.func @kernel_ops_untouched(%ids: tensor<2x4xi64>, %table: tensor<10x4xf32>) -> tensor<2x4x4xf32> {
  %h = xlnet.embedding %ids, %table : (tensor<2x4xi64>, tensor<10x4xf32>) -> tensor<2x4x4xf32>
  return %h : tensor<2x4x4xf32>
}
