//===- DeviceAttentionTest.cpp - Attention op templates vs the host -------===//
//
// The templates of runtime/device/kernels/xlnetc_k_attention.cuh (rel_segment,
// attn_mask, rel_attention, rel_attention_grad), instantiated by one test
// module, run on the emulated device and compared with the fp32 reference
// kernels of runtime/host/ on seeded inputs (wide enough that the scores are
// not ~0): masks bit-exact, the forward within 1e-5 and every gradient within
// 1e-4 of each tensor's max magnitude; results bitwise equal across grids.
// Cases: memory length 0 and > 0, S and K not multiples of BLOCK (and K >
// BLOCK), the content stream (no rows) and the query stream (rows with a
// padding slot -1), a fully masked row, dropatt 0 and > 0 (the host's keep
// mask), two k_r copies (P = 2). The module also compiles with NVRTC for
// sm_90 without spills (skipped without NVRTC).
//
//===----------------------------------------------------------------------===//

#include "runtime/device/CudaApi.h"
#include "runtime/device/Device.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"
#include "runtime/host/Kernels.h"

#include <fmt/format.h>
#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::dev;

namespace {

using xlnetc::rt::testing::doubleBits;
using xlnetc::rt::testing::floatBits;

constexpr uint64_t kSeedOfDeviceAttention = 0x5eed1234abcdull;
constexpr int kErrAttnRow = 10; // XL_ERR_ATTN_ROW

/// One rel_attention configuration (K = mlen + S, R = K + S).
struct Case {
  const char *name;
  int64_t B, T, N, H, mlen, S, P;
  bool rows; // the query stream (rows operand) or the content stream
  double dropatt;
  int64_t site;
  unsigned block;
  int64_t K() const { return mlen + S; }
  int64_t R() const { return K() + S; }
  double scale() const { return 1.0 / std::sqrt(double(H)); }
};

const Case kCases[] = {
    // content stream, no memory, K = 7 < BLOCK, no dropatt
    {"c_m0", 2, 7, 2, 12, 0, 7, 1, false, 0.0, 11, 32},
    // content stream, memory, K = 42 > BLOCK 32 (a tail), dropatt
    {"c_m5", 2, 37, 2, 12, 5, 37, 1, false, 0.1, 12, 32},
    // query stream with a padding slot, no memory, a fully masked row
    {"q_m0", 2, 4, 3, 8, 0, 9, 1, true, 0.0, 13, 32},
    // query stream, memory, dropatt, two k_r copies, BLOCK 64 > K
    {"q_m5", 2, 5, 2, 12, 5, 37, 2, true, 0.3, 14, 64},
};

//===----------------------------------------------------------------------===//
// The test module
//===----------------------------------------------------------------------===//

std::string moduleText() {
  std::string s = R"(#include "xlnetc_prelude.cuh"
#include "xlnetc_k_attention.cuh"

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned char u8;

// Masks: B=2, S=7, mlen 5 (K=12) with BLOCK 64; S=37, mlen 0 with 32.
XL_KERNEL void relseg_a(const i64 *s, u8 *o, u64 seed) {
  xl_rel_segment<2, 7, 5, 64>(s, o, seed);
}
XL_EXPORT(relseg_a)
XL_KERNEL void relseg_b(const i64 *s, u8 *o, u64 seed) {
  xl_rel_segment<2, 37, 0, 32>(s, o, seed);
}
XL_EXPORT(relseg_b)
XL_KERNEL void mask_q(const float *p, u8 *o, u64 seed) {
  xl_attn_mask<2, 7, 5, 0, 64>(p, o, seed);
}
XL_EXPORT(mask_q)
XL_KERNEL void mask_c(const float *p, u8 *o, u64 seed) {
  xl_attn_mask<2, 7, 5, 1, 64>(p, o, seed);
}
XL_EXPORT(mask_c)
XL_KERNEL void mask_c0(const float *p, u8 *o, u64 seed) {
  xl_attn_mask<2, 37, 0, 1, 32>(p, o, seed);
}
XL_EXPORT(mask_c0)
)";
  for (const Case &c : kCases) {
    std::string tp = fmt::format(
        "{}, {}, {}, {}, {}, {}, {}, {}, {}, {}ull, {}u", c.B, c.T, c.N,
        c.H, c.K(), c.S, c.P, c.R(), c.rows ? 1 : 0, doubleBits(c.scale()),
        c.dropatt > 0 ? floatBits(c.dropatt) : 0u);
    s += fmt::format(R"(
XL_KERNEL void attn_{0}(const float *q, const float *k, const float *v,
    const float *kr, const float *se, const float *rw, const float *rr,
    const float *rs, const u8 *sm, const u8 *mk, const i64 *rows, float *o,
    int *st, u64 seed) {{
  xl_rel_attention<{1}, {2}>(q, k, v, kr, se, rw, rr, rs, sm, mk, rows, o, st,
      {3}, seed);
}}
XL_EXPORT(attn_{0})
)",
                     c.name, tp, c.block, c.site);
    for (int phase = 0; phase < 2; ++phase)
      s += fmt::format(R"(
XL_KERNEL void attngrad_{0}{3}(const float *dout, const float *q, const float *k,
    const float *v, const float *kr, const float *se, const float *rw,
    const float *rr, const float *rs, const u8 *sm, const u8 *mk,
    const i64 *rows, float *dq, float *dk, float *dv, float *dkr, float *dse,
    float *drw, float *drr, float *drs, double *ws, int *st, u64 seed) {{
  xl_rel_attention_grad<{1}, {3}, {2}>(dout, q, k, v, kr, se, rw, rr, rs, sm,
      mk, rows, dq, dk, dv, dkr, dse, drw, drr, drs, ws, st, {4}, seed);
}}
XL_EXPORT(attngrad_{0}{3})
)",
                       c.name, tp, c.block, phase, c.site);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Fixture: one emulated device and one module for the whole suite
//===----------------------------------------------------------------------===//

class DeviceAttention
    : public xlnetc::rt::testing::EmuModuleSuite<DeviceAttention> {
public:
  static ModuleSource suiteModule() {
    ModuleSource m;
    m.name = "device_attention_test.cu";
    m.text = moduleText();
    return m;
  }
  static constexpr uint64_t kSeed = kSeedOfDeviceAttention;
};

/// Seeded uniform floats in [lo, hi).
Tensor randomF32(std::vector<int64_t> shape, uint32_t seed, float lo = -2.0f,
                 float hi = 2.0f) {
  return xlnetc::rt::testing::randomF32(std::move(shape), seed, lo, hi);
}

/// The max over the suite of |ref - got| / max|ref| per quantity (printed).
double gMaxRelForward = 0.0, gMaxRelGrad = 0.0;

/// |ref - got| <= tol * max|ref| everywhere; returns the max relative error.
double expectClose(const Tensor &ref, const std::vector<float> &got,
                   double tol, const std::string &what) {
  EXPECT_EQ(size_t(ref.numel()), got.size()) << what;
  if (size_t(ref.numel()) != got.size())
    return 1.0;
  double mx = 0.0, err = 0.0;
  for (int64_t i = 0; i < ref.numel(); ++i)
    mx = std::max(mx, double(std::fabs(ref.f32()[i])));
  const double scale = std::max(mx, 1e-30);
  int bad = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double d = std::fabs(double(ref.f32()[i]) - double(got[size_t(i)]));
    if (!(d <= tol * scale)) {
      if (bad++ < 5)
        ADD_FAILURE() << what << ": at " << i << " ref " << ref.f32()[i]
                      << " got " << got[size_t(i)] << " (max|ref| " << mx
                      << ")";
      err = std::max(err, std::isnan(d) ? 1.0 : d / scale);
    } else {
      err = std::max(err, d / scale);
    }
  }
  return err;
}

void expectBytesEqual(const Tensor &ref, const std::vector<uint8_t> &got,
                      const std::string &what) {
  ASSERT_EQ(size_t(ref.numel()), got.size()) << what;
  for (int64_t i = 0; i < ref.numel(); ++i)
    if (ref.b8()[i] != got[size_t(i)]) {
      ADD_FAILURE() << what << ": first difference at " << i << " ref "
                    << int(ref.b8()[i]) << " got " << int(got[size_t(i)]);
      return;
    }
}

//===----------------------------------------------------------------------===//
// rel_segment and attn_mask
//===----------------------------------------------------------------------===//

Tensor randomSegIds(int64_t B, int64_t S, uint32_t seed) {
  Tensor t = Tensor::zeros(DType::I64, {B, S});
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.i64()[i] = int64_t(gen() % 3u); // 0, 1, 2 (2 = the CLS segment)
  return t;
}

/// A perm mask of zeros, ones and a few other values (> 0, < 0).
Tensor randomPermMask(int64_t B, int64_t S, uint32_t seed) {
  Tensor t = Tensor::zeros(DType::F32, {B, S, S});
  std::mt19937 gen(seed);
  const float vals[] = {0.0f, 1.0f, 1.0f, 0.0f, 0.5f, -1.0f};
  for (int64_t i = 0; i < t.numel(); ++i)
    t.f32()[i] = vals[gen() % 6u];
  return t;
}

TEST_F(DeviceAttention, RelSegmentIsBitExact) {
  for (auto [kernel, S, mlen, block] :
       {std::tuple<const char *, int64_t, int64_t, unsigned>{"relseg_a", 7, 5,
                                                              64},
        {"relseg_b", 37, 0, 32}}) {
    Tensor seg = randomSegIds(2, S, 1);
    Tensor ref = Tensor::zeros(DType::Bool, {2, S, mlen + S});
    host::relSegment(seg, mlen, ref);
    DevPtr ds = put(seg);
    for (unsigned grid : {1u, 3u, 100u}) {
      DevPtr o = put(nullptr, size_t(ref.numel()));
      launch(kernel, grid, block, {ds, o});
      expectBytesEqual(ref, get<uint8_t>(o, ref.numel()),
                       fmt::format("{} grid={}", kernel, grid));
    }
  }
}

TEST_F(DeviceAttention, AttnMaskIsBitExact) {
  struct M {
    const char *kernel;
    int64_t S, mlen;
    MaskStream stream;
    unsigned block;
  };
  for (const M &m : {M{"mask_q", 7, 5, MaskStream::Query, 64},
                     M{"mask_c", 7, 5, MaskStream::Content, 64},
                     M{"mask_c0", 37, 0, MaskStream::Content, 32}}) {
    Tensor pm = randomPermMask(2, m.S, 2);
    Tensor ref = Tensor::zeros(DType::Bool, {2, m.S, m.mlen + m.S});
    host::attnMask(pm, m.mlen, m.stream, ref);
    DevPtr dp = put(pm);
    for (unsigned grid : {1u, 3u, 100u}) {
      DevPtr o = put(nullptr, size_t(ref.numel()));
      launch(m.kernel, grid, m.block, {dp, o});
      expectBytesEqual(ref, get<uint8_t>(o, ref.numel()),
                       fmt::format("{} grid={}", m.kernel, grid));
    }
  }
}

//===----------------------------------------------------------------------===//
// rel_attention and rel_attention_grad
//===----------------------------------------------------------------------===//

/// The operands of one case, host tensors (masks made by the host kernels).
struct Inputs {
  Tensor q, k, v, kR, segEmb, rw, rr, rs, segMat, mask, rows, dout;
  host::RelAttentionArgs args(const Case &c) const {
    host::RelAttentionArgs a;
    a.q = &q, a.k = &k, a.v = &v, a.kR = &kR, a.segEmbed = &segEmb;
    a.rwBias = &rw, a.rrBias = &rr, a.rsBias = &rs;
    a.segMat = &segMat, a.mask = &mask, a.rows = c.rows ? &rows : nullptr;
    a.scale = c.scale();
    a.dropatt = c.dropatt;
    a.dropoutSite = c.site;
    a.seed = kSeedOfDeviceAttention;
    return a;
  }
};

Inputs makeInputs(const Case &c, uint32_t seed) {
  const int64_t B = c.B, T = c.T, N = c.N, H = c.H, K = c.K(), S = c.S;
  Inputs in;
  in.q = randomF32({B, T, N, H}, seed + 1);
  in.k = randomF32({B, K, N, H}, seed + 2);
  in.v = randomF32({B, K, N, H}, seed + 3);
  in.kR = randomF32({c.P, c.R(), N, H}, seed + 4);
  in.segEmb = randomF32({2, N, H}, seed + 5);
  in.rw = randomF32({N, H}, seed + 6, -1.0f, 1.0f);
  in.rr = randomF32({N, H}, seed + 7, -1.0f, 1.0f);
  in.rs = randomF32({N, H}, seed + 8, -1.0f, 1.0f);
  in.dout = randomF32({B, T, N, H}, seed + 9);
  Tensor seg = randomSegIds(B, S, seed + 10);
  Tensor pm = randomPermMask(B, S, seed + 11);
  in.segMat = Tensor::zeros(DType::Bool, {B, S, K});
  in.mask = Tensor::zeros(DType::Bool, {B, S, K});
  host::relSegment(seg, c.mlen, in.segMat);
  if (c.rows) {
    // Query stream: position 2 of batch row 1 fully masked (mlen 0 only:
    // memory columns are always open).
    if (c.mlen == 0)
      for (int64_t j = 0; j < S; ++j)
        pm.f32()[(1 * S + 2) * S + j] = 1.0f;
    host::attnMask(pm, c.mlen, MaskStream::Query, in.mask);
    in.rows = Tensor::zeros(DType::I64, {B, T});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        in.rows.i64()[b * T + t] = (3 * t + 5 * b + 1) % S;
    in.rows.i64()[1 * T + 1] = -1; // a padding slot
    in.rows.i64()[1 * T + 0] = 2;  // the fully masked position
  } else {
    host::attnMask(pm, c.mlen, MaskStream::Content, in.mask);
  }
  return in;
}

struct DevInputs {
  DevPtr q, k, v, kR, segEmb, rw, rr, rs, segMat, mask, rows, dout;
  std::vector<DevPtr> operands() const {
    return {q, k, v, kR, segEmb, rw, rr, rs, segMat, mask, rows};
  }
};

DevInputs upload(const Case &c, const Inputs &in,
                 DevPtr (*put)(const Tensor &)) {
  DevInputs d;
  d.q = put(in.q), d.k = put(in.k), d.v = put(in.v), d.kR = put(in.kR);
  d.segEmb = put(in.segEmb), d.rw = put(in.rw), d.rr = put(in.rr);
  d.rs = put(in.rs), d.segMat = put(in.segMat), d.mask = put(in.mask);
  d.rows = c.rows ? put(in.rows) : 0;
  d.dout = put(in.dout);
  return d;
}

TEST_F(DeviceAttention, ForwardMatchesTheHostAndIsDeterministic) {
  for (const Case &c : kCases) {
    Inputs in = makeInputs(c, 100);
    Tensor ref = Tensor::zeros(DType::F32, {c.B, c.T, c.N, c.H});
    ASSERT_TRUE(host::relAttention(in.args(c), ref).isOk()) << c.name;
    DevInputs d = upload(c, in, &DeviceAttention::put);
    const int64_t rowsN = c.B * c.T * c.N;
    std::vector<float> first;
    for (unsigned grid : {1u, 3u, unsigned(rowsN)}) {
      DevPtr o = put(nullptr, size_t(ref.numel()) * 4),
             st = put(nullptr, 5 * 4);
      std::vector<DevPtr> args = d.operands();
      args.push_back(o);
      args.push_back(st);
      launch(std::string("attn_") + c.name, grid, c.block, args, kSeed,
             size_t(c.K()) * 8);
      std::vector<float> got = get<float>(o, ref.numel());
      std::string what = fmt::format("rel_attention {} grid={}", c.name, grid);
      gMaxRelForward =
          std::max(gMaxRelForward, expectClose(ref, got, 1e-5, what));
      EXPECT_EQ(get<int>(st, 1)[0], 0) << what;
      if (c.rows) // the padding slot is exactly zero
        for (int64_t x = 0; x < c.N * c.H; ++x)
          ASSERT_EQ(got[size_t((1 * c.T + 1) * c.N * c.H + x)], 0.0f) << what;
      if (first.empty())
        first = got;
      else
        EXPECT_EQ(got, first) << "bitwise equal across grids: " << what;
    }
  }
  std::printf("[ rel_attention ] max |dev - host| / max|host| = %.3g\n",
              gMaxRelForward);
}

TEST_F(DeviceAttention, GradMatchesTheHostAndIsDeterministic) {
  for (const Case &c : kCases) {
    const int64_t B = c.B, T = c.T, N = c.N, H = c.H, K = c.K();
    Inputs in = makeInputs(c, 200);
    Tensor rdq = Tensor::zeros(DType::F32, {B, T, N, H}),
           rdk = Tensor::zeros(DType::F32, {B, K, N, H}),
           rdv = Tensor::zeros(DType::F32, {B, K, N, H}),
           rdkr = Tensor::zeros(DType::F32, {c.P, c.R(), N, H}),
           rdse = Tensor::zeros(DType::F32, {2, N, H}),
           rdrw = Tensor::zeros(DType::F32, {N, H}),
           rdrr = Tensor::zeros(DType::F32, {N, H}),
           rdrs = Tensor::zeros(DType::F32, {N, H});
    host::RelAttentionGrads g{&rdq, &rdk, &rdv, &rdkr, &rdse, &rdrw, &rdrr,
                              &rdrs};
    ASSERT_TRUE(host::relAttentionGrad(in.dout, in.args(c), g).isOk());
    const Tensor *refs[] = {&rdq, &rdk, &rdv, &rdkr, &rdse, &rdrw, &rdrr, &rdrs};
    const char *names[] = {"dq",  "dk",  "dv",  "dk_r",
                           "dseg_embed", "dr_w_bias", "dr_r_bias", "dr_s_bias"};
    DevInputs d = upload(c, in, &DeviceAttention::put);
    const int64_t rowsN = B * T * N;
    const size_t wsBytes = size_t(8 * rowsN * (2 * H + 2 + K));
    std::vector<std::vector<float>> first;
    for (unsigned grid : {1u, 3u, unsigned(rowsN)}) {
      std::vector<DevPtr> outs;
      for (const Tensor *r : refs)
        outs.push_back(put(nullptr, size_t(r->numel()) * 4));
      DevPtr ws = put(nullptr, wsBytes), st = put(nullptr, 5 * 4);
      std::vector<DevPtr> args = {d.dout};
      for (DevPtr p : d.operands())
        args.push_back(p);
      args.insert(args.end(), outs.begin(), outs.end());
      args.push_back(ws);
      args.push_back(st);
      std::string base = std::string("attngrad_") + c.name;
      launch(base + "0", grid, c.block, args, kSeed, size_t(2 * K) * 8);
      launch(base + "1", grid == 1 ? 1u : 7u, c.block, args, kSeed, 0);
      std::vector<std::vector<float>> got;
      for (size_t x = 0; x < outs.size(); ++x) {
        got.push_back(get<float>(outs[x], refs[x]->numel()));
        std::string what =
            fmt::format("{} {} grid={}", names[x], c.name, grid);
        double e = expectClose(*refs[x], got.back(), 1e-4, what);
        gMaxRelGrad = std::max(gMaxRelGrad, e);
        if (grid == 1)
          std::printf("[ rel_attention_grad ] %s %-10s rel err %.3g\n",
                      c.name, names[x], e);
      }
      EXPECT_EQ(get<int>(st, 1)[0], 0) << c.name;
      if (first.empty())
        first = got;
      else
        for (size_t x = 0; x < got.size(); ++x)
          EXPECT_EQ(got[x], first[x])
              << "bitwise equal across grids: " << names[x] << " " << c.name;
    }
  }
  std::printf("[ rel_attention_grad ] max |dev - host| / max|host| = %.3g\n",
              gMaxRelGrad);
}

TEST_F(DeviceAttention, RowOutOfRangeSetsTheStatus) {
  const Case &c = kCases[3]; // q_m5
  Inputs in = makeInputs(c, 300);
  in.rows.i64()[1 * c.T + 3] = c.S; // b = 1, t = 3
  Tensor ref = Tensor::zeros(DType::F32, {c.B, c.T, c.N, c.H});
  ASSERT_FALSE(host::relAttention(in.args(c), ref).isOk());
  DevInputs d = upload(c, in, &DeviceAttention::put);
  DevPtr o = put(nullptr, size_t(ref.numel()) * 4), st = put(nullptr, 5 * 4);
  std::vector<DevPtr> args = d.operands();
  args.push_back(o);
  args.push_back(st);
  launch(std::string("attn_") + c.name, 4, c.block, args, kSeed,
         size_t(c.K()) * 8);
  std::vector<int> s = get<int>(st, 5);
  EXPECT_EQ(s[0], kErrAttnRow);
  EXPECT_EQ(s[1], 1);
  EXPECT_EQ(s[2], 3);
  EXPECT_EQ(s[3], int(c.S));
  EXPECT_EQ(s[4], 0);
}

//===----------------------------------------------------------------------===//
// NVRTC for sm_90
//===----------------------------------------------------------------------===//

TEST(DeviceAttentionSm90, TestModuleCompilesWithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  CompiledCubin out;
  Status st = xlnetc::rt::testing::compileForSm90("device_attention_test.cu",
                                                  moduleText(), out);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(isElf(out.cubin));
  if (std::getenv("XLNETC_PRINT_PTXAS"))
    std::printf("%s\n", out.log.c_str());
  int entries = 0;
  for (const KernelResourceUsage &u : parsePtxasLog(out.log)) {
    entries += u.entry;
    EXPECT_EQ(u.spillStores + u.spillLoads, 0) << u.kernel;
    EXPECT_LE(u.smemBytes, 48 * 1024) << u.kernel;
  }
  EXPECT_EQ(entries, 5 + 3 * int(std::size(kCases))) << out.log;
}

} // namespace
