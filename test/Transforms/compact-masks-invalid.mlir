// RUN: xlnet-opt %s --split-input-file --xlnet-compact-masks --verify-diagnostics

// The query stream's rank_mask read by a content-stream attention (no rows):
// the ranks cannot stand for it.
func.func @wrong_stream(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %rank: tensor<2x2x16xi64>) -> tensor<2x16x2x16xf32> {
  %seg = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
  %mask = xlnet.rank_mask query %rank mlen = 8 : (tensor<2x2x16xi64>) -> tensor<2x16x24xi1>
  // expected-error @+1 {{'xlnet.rel_attention' op reads a rank_mask of the query stream but is the content stream (no rows)}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg) mask(%mask) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}

// -----

// rank_mask must be the only reader: another op cannot read compact masks.
func.func @other_reader(%rank: tensor<2x2x16xi64>) -> tensor<2x16x24xi1> {
  // expected-error @+1 {{'xlnet.rank_mask' op is still used by 'func.return', which cannot read compact masks}}
  %mask = xlnet.rank_mask content %rank mlen = 8 : (tensor<2x2x16xi64>) -> tensor<2x16x24xi1>
  return %mask : tensor<2x16x24xi1>
}

// -----

// The content stream's packed_mask read by a query-stream attention.
func.func @packed_wrong_stream(%q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %bits: tensor<2x16x1xi64>, %rows: tensor<2x5xi64>) -> tensor<2x5x2x16xf32> {
  %seg = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
  %mask = xlnet.packed_mask content %bits mlen = 8 : (tensor<2x16x1xi64>) -> tensor<2x16x24xi1>
  // expected-error @+1 {{'xlnet.rel_attention' op reads a packed_mask of the content stream but is the query stream (it has rows)}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg) mask(%mask) rows(%rows) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
  return %0 : tensor<2x5x2x16xf32>
}
