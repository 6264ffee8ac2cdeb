//===- xlnetc_k_optim.cuh - Optimizer ops ------------------------*- C++ -*-===//
//
// lr_schedule, global_norm and adam_update (docs/Plan.md "Optimizer ops"),
// matching runtime/host/Optimizer.cpp: the scalars and the per-element
// updates are computed in double and stored in fp32. Assumes
// xlnetc_prelude.cuh was included first; conventions and the status
// protocol in xlnetc_k_common.cuh.
//
// Every scalar the ops read per step (step, lr, grad_norm) is a device
// tensor; attributes are template parameters, doubles as their bits
// (C++17 has no floating-point template parameters): X_BITS is the
// IEEE-754 bit pattern of the double attribute X.
//
// Multi-tensor forms. One launch covers many parameters through a device
// table (built once by the executor: the shapes are static, only the
// pointers are per allocation). Every tensor is cut into fixed chunks of
// CHUNK elements (a chunk never spans two tensors); entry i's first chunk
// is chunk_begin[i] = sum over j < i of ceil(count_j / CHUNK), and NCHUNKS
// is the total. Blocks take chunks in a grid-stride loop over blockIdx.x and
// find a chunk's tensor by binary search over chunk_begin, so the work
// partition depends on the template parameters only, never on gridDim.
//
// Workspace sizes:
//   global_norm: NCHUNKS doubles (one partial sum of squares per chunk).
//   adam_update: none (one form, multi-tensor; one parameter is a table of
//   one entry).
//
// Status codes (defined with the others in xlnetc_k_common.cuh; see also
// xlnetc_k_loss.cuh):
//
//   code                        [1]                 [2]
//   XL_ERR_NEGATIVE_STEP   (8)  step, low 32 bits   step, high 32 bits
//
// On a negative step nothing is written (the host returns before writing).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_OPTIM_CUH
#define XLNETC_K_OPTIM_CUH

#include "xlnetc_k_common.cuh"


/// Decay codes: the order of rt::LrDecay (runtime/plan/Plan.h).
#define XL_LR_DECAY_POLY 0
#define XL_LR_DECAY_COS 1


/// The double whose IEEE-754 bits are `bits`.
XL_DEVICE double xl_bits_to_double(xl_u64 bits) {
  return __longlong_as_double(static_cast<long long>(bits));
}

/// Reports a negative step (details: its two 32-bit halves).
XL_DEVICE void xl_report_negative_step(int *status, xl_i64 s) {
  xl_report_error(status, XL_ERR_NEGATIVE_STEP,
                  static_cast<int>(static_cast<xl_u64>(s) & 0xffffffffull),
                  static_cast<int>(static_cast<xl_u64>(s) >> 32), 0, 0);
}

//===----------------------------------------------------------------------===//
// lr_schedule
//===----------------------------------------------------------------------===//

/// lr [] = scheduledLearningRate(step []) (host Optimizer.cpp): linear
/// warmup over WARMUP steps, then poly or cos decay to LR * MIN_RATIO at
/// TRAIN steps, in double. One thread (block 0, thread 0) does the work.
template <xl_u64 LR_BITS, xl_i64 WARMUP, xl_i64 TRAIN, xl_u64 MIN_RATIO_BITS,
          int DECAY, int BLOCK>
XL_DEVICE void xl_lr_schedule(const xl_i64 *XL_RESTRICT step,
                              float *XL_RESTRICT lr, int *status,
                              XlStepRandom rnd) {
  (void)rnd;
  static_assert(DECAY == XL_LR_DECAY_POLY || DECAY == XL_LR_DECAY_COS,
                "unknown decay code");
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  const xl_i64 s = step[0];
  if (s < 0) {
    xl_report_negative_step(status, s);
    return;
  }
  const double eta = xl_bits_to_double(LR_BITS);
  const double ratio = xl_bits_to_double(MIN_RATIO_BITS);
  const double floorLr = eta * ratio;
  double out;
  if (s < WARMUP) {
    out = static_cast<double>(s) / static_cast<double>(WARMUP) * eta;
  } else {
    const xl_i64 since = s - WARMUP < TRAIN - WARMUP ? s - WARMUP : TRAIN - WARMUP;
    const double t = TRAIN <= WARMUP ? 1.0
                                     : static_cast<double>(since) /
                                           static_cast<double>(TRAIN - WARMUP);
    if constexpr (DECAY == XL_LR_DECAY_POLY)
      out = (eta - floorLr) * (1.0 - t) + floorLr;
    else
      out = eta * ((1.0 - ratio) * 0.5 * (1.0 + cos(XL_PI_D * t)) + ratio);
  }
  lr[0] = static_cast<float>(out);
}

//===----------------------------------------------------------------------===//
// Multi-tensor tables
//===----------------------------------------------------------------------===//

/// One tensor of a multi-tensor global_norm.
struct XlNormEntry {
  const float *data;
  xl_i64 count;       ///< elements
  xl_i64 chunk_begin; ///< its first chunk (see the file comment)
};

/// One parameter of a multi-tensor adam_update. The outputs may alias the
/// inputs (an in-place update): each element is read before it is written,
/// by the same thread.
struct XlAdamEntry {
  const float *param;
  const float *grad;
  const float *m;
  const float *v;
  float *param_out;
  float *m_out;
  float *v_out;
  xl_i64 count;       ///< elements
  xl_i64 chunk_begin; ///< its first chunk (see the file comment)
  int decay;          ///< nonzero: apply the decoupled weight decay
  int pad_;
};

/// The table entry that holds chunk c: the last i with chunk_begin <= c
/// (empty tensors share their successor's chunk_begin and are skipped).
template <class Entry>
XL_DEVICE int xl_find_chunk_entry(const Entry *table, int n, xl_i64 c) {
  int lo = 0, hi = n; // answer in [lo, hi)
  while (hi - lo > 1) {
    const int mid = (lo + hi) >> 1;
    if (table[mid].chunk_begin <= c)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

//===----------------------------------------------------------------------===//
// global_norm
//===----------------------------------------------------------------------===//

/// global_norm, two launches of the same template over a table of NT
/// tensors:
///  PHASE 0: chunk c (grid-stride over blockIdx.x) sums the squares of its
///           elements in double (thread t takes elements t, t + BLOCK, ...
///           of the chunk, then a fixed block tree) into workspace[c];
///  PHASE 1: block 0 sums workspace[0 .. NCHUNKS) (thread t the chunks t,
///           t + BLOCK, ... in order, then the tree) and writes
///           out [] = sqrt(sum). Other blocks do nothing.
/// The result depends on CHUNK and BLOCK, never on gridDim.
template <int NT, xl_i64 NCHUNKS, xl_i64 CHUNK, int PHASE, int BLOCK>
XL_DEVICE void xl_global_norm(const XlNormEntry *XL_RESTRICT table,
                              float *XL_RESTRICT out,
                              double *XL_RESTRICT workspace,
                              XlStepRandom rnd) {
  (void)rnd;
  static_assert(PHASE == 0 || PHASE == 1, "PHASE is 0 or 1");
  static_assert(CHUNK > 0 && NT >= 1, "bad global_norm parameters");
  XL_SHARED double scratch[BLOCK / 32 > 0 ? BLOCK / 32 : 1];
  if constexpr (PHASE == 0) {
    for (xl_i64 c = blockIdx.x; c < NCHUNKS; c += gridDim.x) {
      const int e = xl_find_chunk_entry(table, NT, c);
      const xl_i64 off = (c - table[e].chunk_begin) * CHUNK;
      const xl_i64 rest = table[e].count - off;
      const xl_i64 n = rest < CHUNK ? rest : CHUNK;
      const float *p = table[e].data + off;
      double acc = 0.0;
      for (xl_i64 i = threadIdx.x; i < n; i += BLOCK) {
        const double g = static_cast<double>(p[i]);
        acc += g * g;
      }
      acc = xl_block_sum<BLOCK>(acc, scratch);
      if (threadIdx.x == 0)
        workspace[c] = acc;
    }
  } else {
    if (blockIdx.x != 0)
      return;
    double acc = 0.0;
    for (xl_i64 c = threadIdx.x; c < NCHUNKS; c += BLOCK)
      acc += workspace[c];
    acc = xl_block_sum<BLOCK>(acc, scratch);
    if (threadIdx.x == 0)
      out[0] = static_cast<float>(sqrt(acc));
  }
}

//===----------------------------------------------------------------------===//
// adam_update
//===----------------------------------------------------------------------===//

/// The per-step scalars of adam_update (host adamUpdate), in double.
struct XlAdamScalars {
  double c;   ///< the clip factor
  double lrT; ///< the step size (bias-corrected when asked)
};

template <xl_u64 B1_BITS, xl_u64 B2_BITS, xl_u64 CLIP_BITS, bool BIAS_CORRECTION>
XL_DEVICE XlAdamScalars xl_adam_scalars(float lr, float gradNorm, xl_i64 s) {
  const double rate = lr, norm = gradNorm;
  const double clip = xl_bits_to_double(CLIP_BITS);
  // tf.clip_by_global_norm: clip / max(norm, clip); std::max(norm, clip)
  // keeps a NaN norm (its first argument), so the factor is NaN then.
  XlAdamScalars r;
  r.c = clip > 0.0 ? clip / (norm < clip ? clip : norm) : 1.0;
  if constexpr (BIAS_CORRECTION) {
    const double b1 = xl_bits_to_double(B1_BITS), b2 = xl_bits_to_double(B2_BITS);
    const double t = static_cast<double>(s) + 1.0;
    r.lrT = rate * sqrt(1.0 - pow(b2, t)) / (1.0 - pow(b1, t));
  } else {
    r.lrT = rate;
  }
  return r;
}

/// One element of adam_update (host adamUpdate's loop body).
template <xl_u64 B1_BITS, xl_u64 B2_BITS, xl_u64 EPS_BITS, bool BIAS_CORRECTION>
XL_DEVICE void xl_adam_element(const float *param, const float *grad,
                               const float *m, const float *v, float *paramOut,
                               float *mOut, float *vOut, xl_i64 i,
                               const XlAdamScalars &k, double wd) {
  const double b1 = xl_bits_to_double(B1_BITS), b2 = xl_bits_to_double(B2_BITS);
  const double eps = xl_bits_to_double(EPS_BITS);
  const double g = static_cast<double>(grad[i]) * k.c;
  const double mi = b1 * static_cast<double>(m[i]) + (1.0 - b1) * g;
  const double vi = b2 * static_cast<double>(v[i]) + (1.0 - b2) * g * g;
  const double update = mi / (sqrt(vi) + eps);
  const double p = static_cast<double>(param[i]);
  float po;
  if constexpr (BIAS_CORRECTION) {
    (void)wd;
    po = static_cast<float>(p - k.lrT * update);
  } else {
    po = static_cast<float>(p - k.lrT * (update + wd * p));
  }
  paramOut[i] = po;
  mOut[i] = static_cast<float>(mi);
  vOut[i] = static_cast<float>(vi);
}

/// Multi-tensor adam_update over a table of NT parameters (NCHUNKS chunks of
/// CHUNK elements, see the file comment): blocks take chunks in a
/// grid-stride loop, threads the chunk's elements. Entry flag `decay`
/// selects the weight decay WD or none (the official exclusions of
/// LayerNorm and bias parameters); it matters only without bias correction.
template <int NT, xl_i64 NCHUNKS, xl_i64 CHUNK, xl_u64 B1_BITS,
          xl_u64 B2_BITS, xl_u64 EPS_BITS, xl_u64 CLIP_BITS, xl_u64 WD_BITS,
          bool BIAS_CORRECTION, int BLOCK>
XL_DEVICE void xl_adam_update_multi(const XlAdamEntry *XL_RESTRICT table,
                                    const float *lr, const float *gradNorm,
                                    const xl_i64 *step, int *status,
                                    XlStepRandom rnd) {
  (void)rnd;
  static_assert(CHUNK > 0 && NT >= 1, "bad adam_update parameters");
  const xl_i64 s = step[0];
  if (s < 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      xl_report_negative_step(status, s);
    return;
  }
  const XlAdamScalars k =
      xl_adam_scalars<B1_BITS, B2_BITS, CLIP_BITS, BIAS_CORRECTION>(
          lr[0], gradNorm[0], s);
  const double wdAll = xl_bits_to_double(WD_BITS);
  for (xl_i64 c = blockIdx.x; c < NCHUNKS; c += gridDim.x) {
    const int e = xl_find_chunk_entry(table, NT, c);
    const XlAdamEntry &t = table[e];
    const xl_i64 off = (c - t.chunk_begin) * CHUNK;
    const xl_i64 rest = t.count - off;
    const xl_i64 end = off + (rest < CHUNK ? rest : CHUNK);
    const double wd = t.decay ? wdAll : 0.0;
    for (xl_i64 i = off + threadIdx.x; i < end; i += BLOCK)
      xl_adam_element<B1_BITS, B2_BITS, EPS_BITS, BIAS_CORRECTION>(
          t.param, t.grad, t.m, t.v, t.param_out, t.m_out, t.v_out, i, k, wd);
  }
}

#endif // XLNETC_K_OPTIM_CUH
