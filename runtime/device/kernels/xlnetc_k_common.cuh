//===- xlnetc_k_common.cuh - Shared pieces of device kernels ----*- C++ -*-===//
//
// Included by every xlnetc_k_*.cuh after xlnetc_prelude.cuh. Holds:
//
//  - the dropout hash, a bit-exact port of runtime/host/Kernels.h
//    (splitmix64, dropoutKey, dropoutKeep), so every executor draws the same
//    keep mask for the same (step seed, site, flat element index), the
//    index's batch row made global (XlStepRandom, host DropoutRows);
//  - the activation codes and formulas (host activate / activateGrad);
//  - deterministic block reductions (fixed shuffle tree + shared memory);
//  - the data-error status protocol.
//
// Conventions of every op template (xl_<op>):
//
//  - template parameters: the op's shapes and attributes, BLOCK (the
//    blockDim.x of the launch), then T_<arg> for every floating-point
//    pointer argument <arg>: its storage type, float or xl_bf16, deduced
//    from the argument (a plan compiled with --precision bf16 stores
//    activations as bf16). Arithmetic is in float or double whatever the
//    storage: an xl_bf16 element converts exactly when read and rounds to
//    nearest even when written;
//  - arguments: the inputs in plan order, the outputs, then (where an op
//    needs them) a workspace pointer, `int *status` and the dropout site
//    (xl_i64: a run-time value, so layers of the same shapes share one
//    kernel), then the step's XlStepRandom (its seed and rows);
//  - every thread of a 1-D launch calls it; the result does not depend on
//    gridDim.x (>= 1): elementwise ops use grid-stride loops over elements,
//    row-wise ops take rows in a grid-stride loop over blockIdx.x;
//  - no floating-point atomics: every reduction has a fixed order, so two
//    runs (and two launch geometries) give bitwise equal results.
//
// Status protocol: `status` points at XL_STATUS_WORDS ints, zeroed by the
// executor before the launch. The first thread that finds a data error wins
// an atomicCAS on status[0] (the code) and then writes status[1..4] (the
// details below). With several bad entries any one of them may be reported
// (not necessarily the first in host order).
//
//   code                        [1]  [2]  [3]                [4]
//   XL_ERR_EMBEDDING_ID    (1)  b    s    id, low 32 bits    id, high 32 bits
//   XL_ERR_TARGET_VALUE    (2)  b    row  the value's bits   its column
//   XL_ERR_TARGET_TWO_ONES (3)  b    row  first column of 1  second column
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_COMMON_CUH
#define XLNETC_K_COMMON_CUH

#define XL_STATUS_WORDS 5
#define XL_ERR_EMBEDDING_ID 1
#define XL_ERR_TARGET_VALUE 2
#define XL_ERR_TARGET_TWO_ONES 3
#define XL_ERR_NEGATIVE_STEP 8 // xlnetc_k_optim.cuh: step low, high 32 bits
#define XL_ERR_LM_TARGET 9     // xlnetc_k_loss.cuh: b, slot, target low, high
#define XL_ERR_ATTN_ROW 10     // xlnetc_k_attention.cuh: b, t, row low, high

/// Activation codes: the order of rt::Activation (runtime/plan/Plan.h).
#define XL_ACT_NONE 0
#define XL_ACT_RELU 1
#define XL_ACT_GELU_TANH 2
#define XL_ACT_GELU_ERF 3

/// Flat element counts and indices are 64-bit: a [B,S,V] logits tensor can
/// pass 2^31 elements.
typedef long long xl_i64;
typedef unsigned long long xl_u64;

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

/// Records a data error; the first caller (over the whole grid) wins.
XL_DEVICE void xl_report_error(int *status, int code, int d1, int d2, int d3,
                               int d4) {
  if (atomicCAS(status, 0, code) == 0) {
    status[1] = d1;
    status[2] = d2;
    status[3] = d3;
    status[4] = d4;
  }
}

//===----------------------------------------------------------------------===//
// Dropout hash (runtime/host/Kernels.h, bit for bit)
//===----------------------------------------------------------------------===//

/// The splitmix64 finaliser (Steele et al.).
XL_DEVICE xl_u64 xl_splitmix64(xl_u64 z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Per-(step seed, site) key.
XL_DEVICE xl_u64 xl_dropout_key(xl_u64 seed, xl_i64 site) {
  return xl_splitmix64(seed ^
                       (static_cast<xl_u64>(site) * 0x9e3779b97f4a7c15ull));
}

/// Whether element `index` is kept: u = top 24 bits of the hash scaled to
/// [0, 1) (exact in float: a 24-bit integer times 2^-24), kept iff u >= rate.
XL_DEVICE bool xl_dropout_keep(xl_u64 key, xl_u64 index, float rate) {
  xl_u64 h = xl_splitmix64(key ^ index);
  float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  return u >= rate;
}

/// The step's draws (host ExecOptions seed and rows, DropoutHash.h): the
/// seed, and which rows of the global batch the step's batch rows are —
/// local row b < half is global row base0 + b, the others base1 + (b -
/// half) — so a rank or micro-batch draws its rows' masks of the whole
/// batch. The executor keeps one in device memory (the launches' arguments
/// stay the same from step to step); a bare seed is the whole batch.
struct XlStepRandom {
  xl_u64 seed;
  xl_i64 base0, base1, half;
  // Implicit: a kernel given a bare seed (the tests' wrappers) draws the
  // whole batch's masks.
  XL_DEVICE XlStepRandom(xl_u64 s = 0)
      : seed(s), base0(0), base1(0), half(0x7fffffffffffffffll) {}
};
static_assert(sizeof(XlStepRandom) == 32, "host StepRandomRecord: 4 words");

/// A dropout site's key in one step, and its index map: flat index i of a
/// tensor whose outer dimension is the batch (ROW_ELEMS a row) is hashed as
/// i + off0 below `split` (the first half's rows), i + off1 from it.
struct XlDropKey {
  xl_u64 key;
  xl_i64 split, off0, off1;
};

/// The key of `site` for a tensor of `rowElems` elements a batch row (0: no
/// batch dimension, every row one mask).
XL_DEVICE XlDropKey xl_drop_key(const XlStepRandom &r, xl_i64 site, xl_i64 rowElems) {
  XlDropKey k;
  k.key = xl_dropout_key(r.seed, site);
  k.split = 0x7fffffffffffffffll;
  k.off0 = k.off1 = 0;
  if (rowElems > 0) {
    k.off0 = r.base0 * rowElems;
    if (r.half < k.split / rowElems) {
      k.split = r.half * rowElems;
      k.off1 = (r.base1 - r.half) * rowElems;
    }
  }
  return k;
}

/// Whether flat element `i` is kept (host dropout with DropoutRows).
XL_DEVICE bool xl_drop_keep(const XlDropKey &k, xl_i64 i, float rate) {
  return xl_dropout_keep(k.key, static_cast<xl_u64>(i + (i < k.split ? k.off0 : k.off1)),
                         rate);
}

//===----------------------------------------------------------------------===//
// Activations (host activate / activateGrad, same double formulas)
//===----------------------------------------------------------------------===//

/// M_PI, spelled out (NVRTC has no <cmath>). The constants sqrt(2/pi),
/// sqrt(2) and sqrt(2 pi) below are computed from it as the host computes
/// them; double sqrt is correctly rounded on both sides, so they are the
/// same doubles. tanh, erf and exp are not correctly rounded (glibc and
/// CUDA's libdevice differ by an ulp or so in double), which the final
/// rounding to float almost always hides.
#define XL_PI_D 3.14159265358979323846

/// act(x) in double, rounded to float once (host activate).
template <int ACT> XL_DEVICE float xl_activate(float xf) {
  double x = xf;
  if constexpr (ACT == XL_ACT_RELU) {
    return xf > 0.0f ? xf : 0.0f;
  } else if constexpr (ACT == XL_ACT_GELU_TANH) {
    const double c = sqrt(2.0 / XL_PI_D);
    return static_cast<float>(0.5 * x *
                              (1.0 + tanh(c * (x + 0.044715 * x * x * x))));
  } else if constexpr (ACT == XL_ACT_GELU_ERF) {
    return static_cast<float>(0.5 * x * (1.0 + erf(x / sqrt(2.0))));
  } else {
    static_assert(ACT == XL_ACT_NONE, "unknown activation code");
    (void)x;
    return xf;
  }
}

/// act'(x) in double (host activateGrad).
template <int ACT> XL_DEVICE double xl_activate_grad(float xf) {
  double x = xf;
  if constexpr (ACT == XL_ACT_RELU) {
    return xf > 0.0f ? 1.0 : 0.0;
  } else if constexpr (ACT == XL_ACT_GELU_TANH) {
    // y' = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) c (1 + 3 a x^2).
    const double c = sqrt(2.0 / XL_PI_D), a = 0.044715;
    double th = tanh(c * (x + a * x * x * x));
    return 0.5 * (1.0 + th) +
           0.5 * x * (1.0 - th * th) * c * (1.0 + 3.0 * a * x * x);
  } else if constexpr (ACT == XL_ACT_GELU_ERF) {
    // y = x Phi(x): y' = Phi(x) + x phi(x).
    return 0.5 * (1.0 + erf(x / sqrt(2.0))) +
           x * exp(-0.5 * x * x) / sqrt(2.0 * XL_PI_D);
  } else {
    static_assert(ACT == XL_ACT_NONE, "unknown activation code");
    (void)x;
    return 1.0;
  }
}

//===----------------------------------------------------------------------===//
// Deterministic reductions
//===----------------------------------------------------------------------===//

/// The combining operators of the reductions below. Each is commutative,
/// so both lanes of an xor-butterfly exchange end with the same bits.
struct XlSumOp {
  template <class T> XL_DEVICE T operator()(T a, T b) const { return a + b; }
};
struct XlMinOp {
  template <class T> XL_DEVICE T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};
struct XlMaxOp {
  template <class T> XL_DEVICE T operator()(T a, T b) const {
    return b > a ? b : a;
  }
};

/// `op` over the 32 lanes of a warp by an xor butterfly: the tree is fixed,
/// so the result does not depend on scheduling.
template <class T, class Op> XL_DEVICE T xl_warp_reduce(T v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// `op` over the BLOCK threads of a block, returned to every thread. Warp
/// trees, then one shared word per warp that every warp reduces again by the
/// same tree (so no broadcast barrier is needed); lanes past the last warp
/// contribute `identity`. `scratch` holds BLOCK/32 values of T. Must be
/// called by all threads of the block (it has barriers, except for a single
/// warp); the trailing barrier lets the caller reuse `scratch` at once.
template <int BLOCK, class T, class Op>
XL_DEVICE T xl_block_reduce(T v, T *scratch, T identity, Op op) {
  static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
                "BLOCK must be a multiple of 32 up to 1024");
  constexpr int kWarps = BLOCK / 32;
  v = xl_warp_reduce(v, op);
  if constexpr (kWarps == 1) {
    return v;
  } else {
    const int lane = threadIdx.x & 31;
    if (lane == 0)
      scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    T w = lane < kWarps ? scratch[lane] : identity;
    w = xl_warp_reduce(w, op);
    __syncthreads();
    return w;
  }
}

/// Sum over the 32 lanes of a warp.
template <class T> XL_DEVICE T xl_warp_sum(T v) {
  return xl_warp_reduce(v, XlSumOp());
}
/// Sum over the block (see xl_block_reduce).
template <int BLOCK, class T> XL_DEVICE T xl_block_sum(T v, T *scratch) {
  return xl_block_reduce<BLOCK>(v, scratch, T(0), XlSumOp());
}
/// Minimum over the block (integers: order-free).
template <int BLOCK> XL_DEVICE int xl_block_min(int v, int *scratch) {
  return xl_block_reduce<BLOCK>(v, scratch, 0x7fffffff, XlMinOp());
}
/// Maximum over the block; NaN-free inputs (scores, logits) assumed.
template <int BLOCK, class T>
XL_DEVICE T xl_block_max(T v, T *scratch, T lowest) {
  return xl_block_reduce<BLOCK>(v, scratch, lowest, XlMaxOp());
}

#endif // XLNETC_K_COMMON_CUH
