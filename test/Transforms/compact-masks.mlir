// RUN: xlnet-opt %s --split-input-file --xlnet-compact-masks | FileCheck %s

// The content stream: rel_segment + rank_mask fold into the attention, which
// reads the segment ids and the ranks; the [B, S, K] masks are gone.
// CHECK-LABEL: func.func @content(
// CHECK-SAME:    %[[SEG_ID:[^:]+]]: tensor<2x16xi64>, %[[RANK:[^:]+]]: tensor<2x2x16xi64>)
// CHECK-NOT:     xlnet.rel_segment
// CHECK-NOT:     xlnet.rank_mask
// CHECK:         xlnet.rel_attention {{.*}} seg_mat(%[[SEG_ID]]) mask(%[[RANK]]) scale
// CHECK-SAME:    tensor<2x16xi64>, tensor<2x2x16xi64>) -> tensor<2x16x2x16xf32>
func.func @content(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %rank: tensor<2x2x16xi64>) -> tensor<2x16x2x16xf32> {
  %seg = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
  %mask = xlnet.rank_mask content %rank mlen = 8 : (tensor<2x2x16xi64>) -> tensor<2x16x24xi1>
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg) mask(%mask) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}

// -----

// The query stream (rows) folds the same way.
// CHECK-LABEL: func.func @query(
// CHECK-NOT:     xlnet.rank_mask
// CHECK:         xlnet.rel_attention {{.*}} seg_mat(%{{[^)]+}}) mask(%{{[^)]+}}) rows(%{{[^)]+}})
// CHECK-SAME:    tensor<2x16xi64>, tensor<2x2x16xi64>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
func.func @query(%q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %rank: tensor<2x2x16xi64>, %rows: tensor<2x5xi64>) -> tensor<2x5x2x16xf32> {
  %seg = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
  %mask = xlnet.rank_mask query %rank mlen = 8 : (tensor<2x2x16xi64>) -> tensor<2x16x24xi1>
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg) mask(%mask) rows(%rows) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
  return %0 : tensor<2x5x2x16xf32>
}

// -----

// The bit-packed mask of a perm_mask without ranks folds the same way.
// CHECK-LABEL: func.func @packed(
// CHECK-SAME:    %[[BITS:[^:]+]]: tensor<2x16x1xi64>, %{{[^:]+}}: tensor<2x5xi64>)
// CHECK-NOT:     xlnet.packed_mask
// CHECK:         xlnet.rel_attention {{.*}} mask(%[[BITS]]) rows(%{{[^)]+}})
// CHECK-SAME:    tensor<2x16xi64>, tensor<2x16x1xi64>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
func.func @packed(%q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %bits: tensor<2x16x1xi64>, %rows: tensor<2x5xi64>) -> tensor<2x5x2x16xf32> {
  %seg = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
  %mask = xlnet.packed_mask query %bits mlen = 8 : (tensor<2x16x1xi64>) -> tensor<2x16x24xi1>
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg) mask(%mask) rows(%rows) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
  return %0 : tensor<2x5x2x16xf32>
}

// -----

// A dense mask from a perm_mask (attn_mask) is left as it is.
// CHECK-LABEL: func.func @dense(
// CHECK:         %[[SEG:.+]] = xlnet.rel_segment
// CHECK:         %[[MASK:.+]] = xlnet.attn_mask content
// CHECK:         xlnet.rel_attention {{.*}} seg_mat(%[[SEG]]) mask(%[[MASK]])
func.func @dense(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %perm: tensor<2x16x16xf32>) -> tensor<2x16x2x16xf32> {
  %seg = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
  %mask = xlnet.attn_mask content %perm mlen = 8 : (tensor<2x16x16xf32>) -> tensor<2x16x24xi1>
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg) mask(%mask) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}
