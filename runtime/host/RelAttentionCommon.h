//===- RelAttentionCommon.h - Shared parts of rel_attention ----*- C++ -*-===//
//
// What relAttention (RelAttention.cpp) and relAttentionGrad
// (RelAttentionGrad.cpp) both compute: the query-row check, the dropatt
// index, and the softmax of the masked, scaled scores of a block of query
// rows of one (batch row b, head n) (docs/Plan.md "rel_attention"):
//
//   qw = q + r_w_bias, qr = q + r_r_bias          [rows, H]   float
//   AC = qw · k[b,:,n]ᵀ                           [rows, K]   sgemm
//   BD = qr · k_r[p, r0 : r0 + W, n]ᵀ             [rows, W]   sgemm
//   s[j] = (AC[t,j] + BD[t, S-i+j - r0] + ef_t[differ(b,i,j)]) · scale
//          - 1e30 · masked(b,i,j)                              fp32
//
// with the masks dense or compact (Operands::maskRow, Operands::differRow).
//
// where [r0, r0 + W) is the smallest window of k_r rows that XLNet's
// rel_shift (k_r[p, S - i + j]) reads for the block's positions i: a block
// of consecutive positions [i0, i1) reads W = K + i1 - i0 - 1 rows, not all
// R = K + S. ef_t[0/1] = (q + r_s_bias) · seg_embed[0/1, n] is two numbers
// per row, in double. The softmax (VecKernels::scoreSoftmax) is fp32 with
// its sum in double.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_RELATTENTIONCOMMON_H
#define XLNETC_RUNTIME_HOST_RELATTENTIONCOMMON_H

#include "runtime/PermMask.h"
#include "runtime/host/Kernels.h"
#include "runtime/host/VecKernels.h"

#include <cstdint>
#include <vector>

namespace xlnetc::rt::host::relattn {

/// The operands of one rel_attention(_grad) call as raw pointers and sizes.
struct Operands {
  int64_t B, T, N, H, K, S, P, R;
  int64_t NH; // row stride of every [.., N, H] operand
  const float *q, *k, *v, *kR, *segEmb, *rw, *rr, *rs;
  const uint8_t *segMat, *mask;  // dense masks, or null
  const int64_t *segId, *permRank, *permBits; // compact masks, or null
  int64_t W; // words per row of permBits
  const int64_t *rows; // null: position i = t
  double scale;
  bool drop;
  uint64_t dropKey;
  DropoutRows dropRows;
  float dropRate;
  double dropScale; // 1 / (1 - dropatt), 1 without dropatt

  explicit Operands(const RelAttentionArgs &a);

  /// A rows entry outside [-1, S) is an error (rows come from data).
  Status checkRows() const;

  /// The query position of row t of batch row b; < 0 for a padding slot.
  int64_t position(int64_t b, int64_t t) const {
    return rows ? rows[b * T + t] : t;
  }
  /// One query row's masks for every key j, as 0/1 bytes (the operands of
  /// the vectorised softmax, VecKernels.h). maskRow: whether position i of
  /// batch row b may not attend to key j — memory columns are visible, the
  /// content stream (no rows) sees itself, then perm_mask[i, j - mlen]
  /// from the dense mask, the bits or the ranks. differRow: whether key j
  /// is in another segment than position i (memory counts as segment 0).
  void maskRow(int64_t b, int64_t i, uint8_t *out) const;
  void differRow(int64_t b, int64_t i, uint8_t *out) const;

  /// The bi_data copy of k_r that batch row b reads.
  int64_t copy(int64_t b) const { return b / (B / P); }

  /// The dropatt element index of prob[b,t,n,0] (prob[b,t,n,j] is this + j):
  /// ((b*T + t)*N + n)*K, b the global batch row. Its factor is 0
  /// (dropped) or 1 / (1 - dropatt).
  uint64_t dropIndex(int64_t b, int64_t t, int64_t n) const {
    return uint64_t(((globalRow(dropRows, b) * T + t) * N + n) * K);
  }
};

/// The score products of query rows [t0, t1) of one (b, n), and the softmax
/// of one row from them. Per-thread scratch: reuse one object for every block
/// (the buffers only grow).
struct BlockScores {
  int64_t b = 0, n = 0, t0 = 0, t1 = 0;
  int64_t r0 = 0, W = 0;     // the k_r rows [r0, r0 + W) that bd reads
  std::vector<float> qw, qr; // [t1 - t0, H]: q + r_w_bias, q + r_r_bias
  std::vector<float> ac;     // [t1 - t0, K]: qw · kᵀ
  std::vector<float> bd;     // [t1 - t0, W]: qr · k_r[p, r0 : r0 + W]ᵀ

  /// Fills qw, qr, ac and bd for rows [t0, t1) of (b, n). Rows of padding
  /// slots get qw and qr but their ac/bd rows are unspecified; W = 0 when
  /// every row of the block is padding. Single-threaded sgemms.
  void compute(const Operands &o, int64_t b, int64_t n, int64_t t0, int64_t t1);
  /// compute() without the two products: qw, qr, the window, and ac and bd
  /// sized (their contents unspecified), for a backward whose
  /// probabilities were kept.
  void prepare(const Operands &o, int64_t b, int64_t n, int64_t t0, int64_t t1);

  /// Row t (t0 <= t < t1, position i = o.position(b, t) >= 0): qs = q +
  /// r_s_bias [H] in double, the row's mask and segment bytes [K]
  /// (Operands::maskRow, differRow), and prob[j] = softmax(s)[j] [K], s the
  /// masked, scaled scores above in fp32 (VecKernels::scoreSoftmax; a fully
  /// masked row is uniform: every s is -1e30). Reads only row t of ac and
  /// bd, so a caller may overwrite rows it is done with. Returns the row's
  /// bd, shifted: bd[t, S - i + j - r0] for j in [0, K).
  float *softmaxRow(const Operands &o, int64_t t, double *qs, uint8_t *masked,
                    uint8_t *differ, float *prob);
  /// What softmaxRow computes besides the softmax: qs, the mask and segment
  /// bytes, and the shifted row of bd it returns (ef0 and ef1 as well).
  float *rowOperands(const Operands &o, int64_t t, double *qs, uint8_t *masked,
                     uint8_t *differ, double &ef0, double &ef1);

  float *acRow(int64_t t) { return ac.data() + (t - t0) * acStride; }
  float *bdRow(int64_t t) { return bd.data() + (t - t0) * W; }

private:
  int64_t acStride = 0;
};

} // namespace xlnetc::rt::host::relattn

#endif // XLNETC_RUNTIME_HOST_RELATTENTIONCOMMON_H
