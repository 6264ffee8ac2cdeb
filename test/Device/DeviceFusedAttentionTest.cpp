//===- DeviceFusedAttentionTest.cpp - The fused attention on emu vs host --===//
//
// xl_rel_attention_fused and xl_rel_attention_fused_grad
// (runtime/device/kernels/xlnetc_k_attention_fused.cuh) on the emulated
// device against the host's rel_attention and rel_attention_grad fed the
// dense masks that the compact ones stand for (attn_mask of the rank mask,
// rel_segment of the segment ids): outputs within 1e-5 of the largest
// magnitude, every gradient within 1e-4 of its largest magnitude, the
// forward's log-sum-exp against a float64 loop, at shapes with tails
// (T and K not multiples of the tiles), memory and none, both streams, two
// k_r copies, padding slots, a fully masked row, dropatt, the bit-packed
// form of a perm_mask without ranks (one and two words per row); the result bitwise
// equal for every grid size and all three schedule modes. The same module
// compiles for sm_90 without spills. With bf16 storage (q, k, v, k_r, the
// output and their gradients) the results are the fp32 ones rounded once.
//
//===----------------------------------------------------------------------===//

#include "runtime/BFloat16.h"
#include "target/cuda/AttentionTc.h"
#include "runtime/device/CudaApi.h"
#include "runtime/device/Device.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"
#include "runtime/host/Kernels.h"
#include "test/Device/DeviceTestUtil.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <unistd.h>

using namespace xlnetc::rt;
using namespace xlnetc::rt::dev;
using xlnetc::rt::testing::doubleBits;
using xlnetc::rt::testing::floatBits;
using xlnetc::rt::testing::ScopedEnv;

namespace {

constexpr uint64_t kSeed = 0xfa57a77e11ull;
constexpr int kBK = 32;

struct Case {
  const char *name;
  int64_t B, T, N, H, mlen, S, P;
  bool rows; // the query stream
  double dropatt;
  int64_t site;
  int bq, block;
  bool bits = false; // perm_bits of a mask without ranks, not perm_rank
  int64_t K() const { return mlen + S; }
  int64_t R() const { return K() + S; }
  double scale() const { return 1.0 / std::sqrt(double(H)); }
  int64_t tiles() const { return B * N * ((T + bq - 1) / bq); }
  size_t smem() const {
    return 8 * size_t(bq * H + bq * kBK + 7 * bq) +
           4 * size_t(2 * bq * H + 2 * kBK * H);
  }
};

const Case kCases[] = {
    // content stream, no memory, K = T = 7 below both tiles
    {"c_m0", 2, 7, 2, 12, 0, 7, 1, false, 0.0, 11, 16, 64},
    // content stream, memory, K = 48 (1.5 key tiles), 3 query tiles, dropatt
    {"c_m11", 2, 37, 2, 12, 11, 37, 1, false, 0.1, 12, 16, 128},
    // query stream, no memory: a padding slot and a fully masked row
    {"q_m0", 2, 4, 3, 8, 0, 9, 1, true, 0.0, 13, 16, 64},
    // query stream, memory, two k_r copies, dropatt, 8-row query tiles
    {"q_m5", 2, 5, 2, 12, 5, 37, 2, true, 0.3, 14, 8, 64},
    // the head size of XLNet-Base/Large
    {"c_h64", 1, 40, 1, 64, 24, 40, 1, false, 0.0, 15, 16, 128},
    // bit-packed masks without ranks: two words per row (S = 70), memory,
    // dropatt; and the content stream in one word
    {"q_bits", 2, 6, 2, 8, 3, 70, 1, true, 0.2, 16, 16, 64, true},
    {"c_bits", 2, 9, 1, 8, 0, 9, 2, false, 0.0, 17, 8, 64, true},
};

std::string moduleText() {
  std::string s = R"(#include "xlnetc_prelude.cuh"
#include "xlnetc_k_attention_fused.cuh"
typedef unsigned long long u64;
typedef long long i64;
)";
  for (const Case &c : kCases)
    s += fmt::format(R"(
XL_KERNEL void fused_{0}(const float *q, const float *k, const float *v,
    const float *kr, const float *se, const float *rw, const float *rr,
    const float *rs, const i64 *seg, const i64 *rank, const i64 *rows,
    float *o, float *lse, int *st, u64 seed) {{
  xl_rel_attention_fused<{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}ull,
      {11}u, {12}, 32, {13}, {15}>(q, k, v, kr, se, rw, rr, rs, seg, rank, rows,
      o, lse, st, {14}, seed);
}}
XL_EXPORT(fused_{0})
)",
                     c.name, c.B, c.T, c.N, c.H, c.K(), c.S, c.P, c.R(),
                     c.rows ? 1 : 0, doubleBits(c.scale()),
                     c.dropatt > 0 ? floatBits(c.dropatt) : 0u, c.bq, c.block,
                     c.site, c.bits ? 1 : 0);
  for (const Case &c : kCases)
    for (int phase = 0; phase < 5; ++phase)
      s += fmt::format(R"(
XL_KERNEL void fusedgrad_{0}_{15}(const float *dout, const float *q,
    const float *k, const float *v, const float *kr, const float *se,
    const float *rw, const float *rr, const float *rs, const i64 *seg,
    const i64 *rank, const i64 *rows, float *dq, float *dk, float *dv,
    float *dkr, float *dse, float *drw, float *drr, float *drs, double *ws,
    int *st, u64 seed) {{
  xl_rel_attention_fused_grad<{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9},
      {10}ull, {11}u, {12}, {15}, {13}, {16}>(dout, q, k, v, kr, se, rw, rr, rs, seg,
      rank, rows, dq, dk, dv, dkr, dse, drw, drr, drs, ws, st, {14}, seed);
}}
XL_EXPORT(fusedgrad_{0}_{15})
)",
                       c.name, c.B, c.T, c.N, c.H, c.K(), c.S, c.P, c.R(),
                       c.rows ? 1 : 0, doubleBits(c.scale()),
                       c.dropatt > 0 ? floatBits(c.dropatt) : 0u, c.bq,
                       c.block, c.site, phase, c.bits ? 1 : 0);
  return s;
}

Tensor rnd(std::vector<int64_t> shape, uint32_t seed, float lo = -1.0f,
           float hi = 1.0f) {
  return xlnetc::rt::testing::randomF32(std::move(shape), seed, lo, hi);
}

/// A case's operands: the compact masks, and the dense ones they stand for.
struct Inputs {
  Tensor q, k, v, kR, segEmb, rw, rr, rs, segId, rank, rows, dout;
  Tensor segMat, mask; // dense, for the host
};

Inputs makeInputs(const Case &c, uint32_t seed) {
  const int64_t B = c.B, T = c.T, N = c.N, H = c.H, S = c.S, K = c.K();
  Inputs in;
  in.q = rnd({B, T, N, H}, seed + 1, -2, 2);
  in.k = rnd({B, K, N, H}, seed + 2, -2, 2);
  in.v = rnd({B, K, N, H}, seed + 3, -2, 2);
  in.kR = rnd({c.P, c.R(), N, H}, seed + 4, -2, 2);
  in.segEmb = rnd({2, N, H}, seed + 5, -2, 2);
  in.rw = rnd({N, H}, seed + 6), in.rr = rnd({N, H}, seed + 7);
  in.rs = rnd({N, H}, seed + 8);
  in.dout = rnd({B, T, N, H}, seed + 12, -2, 2);
  std::mt19937 gen(seed + 9);
  in.segId = Tensor::zeros(DType::I64, {B, S});
  for (int64_t i = 0; i < B * S; ++i)
    in.segId.i64()[i] = int64_t(gen() % 3u);
  // Any two rank vectors are a valid compact mask.
  in.rank = Tensor::zeros(DType::I64, {B, 2, S});
  for (int64_t i = 0; i < B * 2 * S; ++i)
    in.rank.i64()[i] = int64_t(gen() % uint32_t(S + 2)) - 1;
  in.rows = Tensor::zeros(DType::I64, {B, T});
  if (c.rows) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        in.rows.i64()[b * T + t] = (3 * t + 5 * b + 1) % S;
    in.rows.i64()[1 * T + 1] = -1; // a padding slot
    in.rows.i64()[1 * T + 0] = 2;  // position 2 of row 1: fully masked below
    if (c.mlen == 0)
      in.rank.i64()[(1 * 2 + 0) * S + 2] = -5;
  }
  Tensor perm = Tensor::zeros(DType::F32, {B, S, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j)
        perm.f32()[(b * S + i) * S + j] =
            c.bits ? float(gen() % 2u) // no rank form
                   : in.rank.i64()[(b * 2) * S + i] <=
                         in.rank.i64()[(b * 2 + 1) * S + j];
  if (c.bits) {
    if (c.rows && c.mlen == 0) // position 2 of row 1 fully masked
      for (int64_t j = 0; j < S; ++j)
        perm.f32()[(1 * S + 2) * S + j] = 1.0f;
    // perm_bits: bit j % 64 of word j / 64 of row (b, i).
    const int64_t W = (S + 63) / 64;
    in.rank = Tensor::zeros(DType::I64, {B, S, W});
    for (int64_t row = 0; row < B * S; ++row)
      for (int64_t j = 0; j < S; ++j)
        if (perm.f32()[row * S + j] != 0.0f)
          in.rank.i64()[row * W + j / 64] |= int64_t(uint64_t(1) << (j % 64));
  }
  in.segMat = Tensor::zeros(DType::Bool, {B, S, K});
  in.mask = Tensor::zeros(DType::Bool, {B, S, K});
  host::relSegment(in.segId, c.mlen, in.segMat);
  host::attnMask(perm, c.mlen, c.rows ? MaskStream::Query : MaskStream::Content,
                 in.mask);
  return in;
}

/// The log-sum-exp of every row in float64, from the dense masks (the
/// host's rules: biased queries rounded to float, dots in double).
std::vector<double> referenceLse(const Case &c, const Inputs &in) {
  const int64_t B = c.B, T = c.T, N = c.N, H = c.H, S = c.S, K = c.K();
  std::vector<double> out(size_t(B * T * N), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t n = 0; n < N; ++n) {
        int64_t i = c.rows ? in.rows.i64()[b * T + t] : t;
        if (i < 0)
          continue;
        int64_t p = b / (B / c.P);
        const float *q = in.q.f32() + ((b * T + t) * N + n) * H;
        std::vector<double> s(static_cast<size_t>(K));
        double mx = -INFINITY;
        for (int64_t j = 0; j < K; ++j) {
          double ac = 0, bd = 0, ef = 0;
          int seg = in.segMat.b8()[(b * S + i) * K + j];
          for (int64_t h = 0; h < H; ++h) {
            float qw = q[h] + in.rw.f32()[n * H + h];
            float qr = q[h] + in.rr.f32()[n * H + h];
            double qs = double(q[h]) + double(in.rs.f32()[n * H + h]);
            ac += double(qw) * in.k.f32()[((b * K + j) * N + n) * H + h];
            bd += double(qr) *
                  in.kR.f32()[((p * c.R() + S - i + j) * N + n) * H + h];
            ef += qs * in.segEmb.f32()[(seg * N + n) * H + h];
          }
          s[size_t(j)] = (ac + bd + ef) * c.scale() -
                         1e30 * in.mask.b8()[(b * S + i) * K + j];
          mx = std::max(mx, s[size_t(j)]);
        }
        double sum = 0;
        for (double x : s)
          sum += std::exp(x - mx);
        out[size_t((b * T + t) * N + n)] = mx + std::log(sum);
      }
  return out;
}

/// Launches kernel `name` with the device pointers `args` and the seed.
void launchOn(Device &dev, Module &mod, const std::string &name, unsigned grid,
              int block, std::vector<DevPtr> args, size_t dynSmem = 0) {
  Kernel k;
  Status st = dev.getKernel(mod, name, k);
  ASSERT_TRUE(st) << st.message();
  std::vector<void *> params;
  for (DevPtr &x : args)
    params.push_back(&x);
  unsigned long long seed = kSeed;
  params.push_back(&seed);
  LaunchDims dims;
  dims.grid[0] = grid;
  dims.block[0] = unsigned(block);
  dims.dynSmem = dynSmem;
  st = dev.launch(k, dims, params.data(), name);
  ASSERT_TRUE(st) << st.message();
}

/// The fused backward of case `c` (all five phases, at three grid sizes
/// each, bitwise equal) against the host's relAttentionGrad; returns the
/// gradients, concatenated.
template <class Put, class PutT>
std::vector<float> runGrad(Device &dev, Module &mod, const Case &c,
                           const Inputs &in, const host::RelAttentionArgs &a,
                           const std::vector<DevPtr> &operands,
                           const char *schedule, Put put, PutT putT) {
  const int64_t B = c.B, T = c.T, N = c.N, H = c.H, K = c.K();
  std::vector<Tensor> ref = {
      Tensor::zeros(DType::F32, {B, T, N, H}),
      Tensor::zeros(DType::F32, {B, K, N, H}),
      Tensor::zeros(DType::F32, {B, K, N, H}),
      Tensor::zeros(DType::F32, {c.P, c.R(), N, H}),
      Tensor::zeros(DType::F32, {2, N, H}),
      Tensor::zeros(DType::F32, {N, H}),
      Tensor::zeros(DType::F32, {N, H}),
      Tensor::zeros(DType::F32, {N, H})};
  const char *names[] = {"dq", "dk", "dv", "dk_r", "dseg_embed",
                         "dr_w_bias", "dr_r_bias", "dr_s_bias"};
  host::RelAttentionGrads g{&ref[0], &ref[1], &ref[2], &ref[3],
                            &ref[4], &ref[5], &ref[6], &ref[7]};
  EXPECT_TRUE(host::relAttentionGrad(in.dout, a, g)) << c.name;
  {
    std::vector<Tensor> same;
    for (const Tensor &t : ref)
      same.push_back(Tensor::zeros(DType::F32, t.shape));
    host::RelAttentionArgs compact = a;
    compact.segMat = &in.segId;
    compact.mask = &in.rank;
    host::RelAttentionGrads sg{&same[0], &same[1], &same[2], &same[3],
                               &same[4], &same[5], &same[6], &same[7]};
    EXPECT_TRUE(host::relAttentionGrad(in.dout, compact, sg)) << c.name;
    for (size_t x = 0; x < ref.size(); ++x)
      EXPECT_EQ(std::memcmp(same[x].bytes(), ref[x].bytes(), ref[x].nbytes()), 0)
          << c.name << ": host compact vs dense gradient " << x;
  }
  const int64_t qTiles = B * N * ((T + c.bq - 1) / c.bq);
  const int64_t kTiles = B * N * ((K + 31) / 32);
  const int64_t rTiles = c.P * N * ((c.R() + 31) / 32);
  const int64_t cols = (N * H + c.block - 1) / c.block;
  const int64_t full[5] = {qTiles, qTiles, kTiles, rTiles, cols};
  DevPtr dout = putT(in.dout);
  DevPtr ws = put(nullptr, size_t(B * T * N * (2 * H + 4)) * 8);
  DevPtr status = put(nullptr, 5 * 4);
  std::vector<float> first;
  for (unsigned grid : {1u, 2u, 0u}) { // 0: one block per work item
    std::vector<DevPtr> outs;
    for (const Tensor &t : ref)
      outs.push_back(put(nullptr, t.nbytes()));
    std::vector<DevPtr> args = {dout};
    args.insert(args.end(), operands.begin(), operands.end());
    args.insert(args.end(), outs.begin(), outs.end());
    args.insert(args.end(), {ws, status});
    for (int phase = 0; phase < 5; ++phase)
      launchOn(dev, mod, fmt::format("fusedgrad_{}_{}", c.name, phase),
               grid ? grid : unsigned(full[phase]), c.block, args);
    std::vector<float> all;
    for (size_t x = 0; x < ref.size(); ++x) {
      std::string what = fmt::format("{} {} grid {} schedule {}", c.name,
                                     names[x], grid, schedule);
      std::vector<float> got(size_t(ref[x].numel()));
      EXPECT_TRUE(dev.download(got.data(), outs[x], ref[x].nbytes()));
      double maxRef = 0, worst = 0;
      for (int64_t e = 0; e < ref[x].numel(); ++e) {
        maxRef = std::max(maxRef, double(std::fabs(ref[x].f32()[e])));
        worst = std::max(worst, std::fabs(double(got[size_t(e)]) -
                                          ref[x].f32()[e]));
      }
      EXPECT_LE(worst, 1e-4 * std::max(maxRef, 1e-30)) << what;
      all.insert(all.end(), got.begin(), got.end());
    }
    if (first.empty())
      first = all;
    else
      EXPECT_EQ(all, first) << c.name << ": bitwise equal across grids";
  }
  return first;
}

/// Runs every case on an emulated device opened under `schedule`; returns
/// the outputs and lse of every case (for the cross-schedule comparison).
std::vector<std::vector<float>> runAll(const char *schedule) {
  ScopedEnv env("XLNETC_EMU_SCHEDULE", schedule);
  std::unique_ptr<Device> dev;
  Status st = openDevice(DeviceKind::Emu, {}, dev);
  EXPECT_TRUE(st) << st.message();
  std::unique_ptr<Module> mod;
  st = dev->loadModule({"fused-attention-test.cu", moduleText(), {}}, mod);
  EXPECT_TRUE(st) << st.message();
  if (!dev || !mod)
    return {};
  std::vector<DevPtr> live;
  auto put = [&](const void *src, size_t bytes) {
    DevPtr p = 0;
    EXPECT_TRUE(dev->alloc(std::max<size_t>(bytes, 8), p));
    if (src)
      EXPECT_TRUE(dev->upload(p, src, bytes));
    else
      EXPECT_TRUE(dev->memset(p, 0, std::max<size_t>(bytes, 8)));
    live.push_back(p);
    return p;
  };
  auto putT = [&](const Tensor &t) { return put(t.bytes(), t.nbytes()); };
  std::vector<std::vector<float>> results;
  for (const Case &c : kCases) {
    Inputs in = makeInputs(c, 500);
    Tensor ref = Tensor::zeros(DType::F32, {c.B, c.T, c.N, c.H});
    host::RelAttentionArgs a;
    a.q = &in.q, a.k = &in.k, a.v = &in.v, a.kR = &in.kR;
    a.segEmbed = &in.segEmb, a.rwBias = &in.rw, a.rrBias = &in.rr;
    a.rsBias = &in.rs, a.segMat = &in.segMat, a.mask = &in.mask;
    a.rows = c.rows ? &in.rows : nullptr;
    a.scale = c.scale(), a.dropatt = c.dropatt, a.dropoutSite = c.site;
    a.seed = kSeed;
    EXPECT_TRUE(host::relAttention(a, ref)) << c.name;
    // The host's compact form (seg_id, perm_rank) computes the same bits.
    {
      host::RelAttentionArgs compact = a;
      compact.segMat = &in.segId;
      compact.mask = &in.rank;
      Tensor same = Tensor::zeros(DType::F32, ref.shape);
      EXPECT_TRUE(host::relAttention(compact, same)) << c.name;
      EXPECT_EQ(std::memcmp(same.bytes(), ref.bytes(), ref.nbytes()), 0)
          << c.name << ": host compact vs dense";
    }
    std::vector<double> refLse = referenceLse(c, in);
    double maxRef = 0;
    for (int64_t x = 0; x < ref.numel(); ++x)
      maxRef = std::max(maxRef, double(std::fabs(ref.f32()[x])));

    std::vector<DevPtr> args = {putT(in.q),      putT(in.k),  putT(in.v),
                                putT(in.kR),     putT(in.segEmb),
                                putT(in.rw),     putT(in.rr), putT(in.rs),
                                putT(in.segId),  putT(in.rank),
                                c.rows ? putT(in.rows) : DevPtr(0)};
    std::vector<float> first;
    for (unsigned grid : {1u, 2u, unsigned(c.tiles()) + 1u}) {
      std::string what =
          fmt::format("{} grid {} schedule {}", c.name, grid, schedule);
      DevPtr o = put(nullptr, size_t(ref.numel()) * 4);
      DevPtr lse = put(nullptr, size_t(c.B * c.T * c.N) * 4);
      DevPtr status = put(nullptr, 5 * 4);
      std::vector<DevPtr> all = args;
      all.insert(all.end(), {o, lse, status});
      launchOn(*dev, *mod, std::string("fused_") + c.name, grid, c.block, all,
               c.smem());
      std::vector<float> got(size_t(ref.numel())), gotLse(refLse.size());
      int words[5];
      EXPECT_TRUE(dev->download(got.data(), o, got.size() * 4));
      EXPECT_TRUE(dev->download(gotLse.data(), lse, gotLse.size() * 4));
      EXPECT_TRUE(dev->download(words, status, sizeof words));
      EXPECT_EQ(words[0], 0) << what;
      double worst = 0;
      for (int64_t x = 0; x < ref.numel(); ++x)
        worst = std::max(worst, std::fabs(double(got[size_t(x)]) - ref.f32()[x]));
      EXPECT_LE(worst, 1e-5 * maxRef) << what;
      for (size_t r = 0; r < refLse.size(); ++r)
        EXPECT_NEAR(gotLse[r], refLse[r], 1e-5 * std::max(1.0, std::fabs(refLse[r])))
            << what << " lse row " << r;
      if (c.rows) // the padding slot: zeros
        for (int64_t x = 0; x < c.N * c.H; ++x)
          EXPECT_EQ(got[size_t((1 * c.T + 1) * c.N * c.H + x)], 0.0f) << what;
      got.insert(got.end(), gotLse.begin(), gotLse.end());
      if (first.empty())
        first = got;
      else
        EXPECT_EQ(got, first) << "bitwise equal across grids: " << what;
    }
    // The backward from the forward's out and lse, against the host.
    std::vector<float> grads =
        runGrad(*dev, *mod, c, in, a, args, schedule, put, putT);
    first.insert(first.end(), grads.begin(), grads.end());
    results.push_back(first);
  }
  for (DevPtr p : live)
    dev->free(p);
  return results;
}

TEST(FusedAttention, ForwardAndBackwardMatchTheHostUnderEverySchedule) {
  std::vector<std::vector<float>> forward = runAll("forward");
  ASSERT_EQ(forward.size(), std::size(kCases));
  for (const char *schedule : {"reverse", "random:3"})
    EXPECT_EQ(runAll(schedule), forward)
        << "schedule " << schedule << " changed a result";
}

/// The cases run again with bf16 storage (--precision bf16): q, k, v, k_r,
/// the output, dout and dq, dk, dv, dk_r as xl_bf16; the biases, seg_embed
/// and their gradients f32.
const Case *const kBf16Cases[] = {&kCases[1], &kCases[3], &kCases[4]};

std::string moduleTextBf16() {
  std::string s = R"(#include "xlnetc_prelude.cuh"
#include "xlnetc_k_attention_fused.cuh"
typedef unsigned long long u64;
typedef long long i64;
typedef xl_bf16 h16;
)";
  for (const Case *cp : kBf16Cases) {
    const Case &c = *cp;
    s += fmt::format(R"(
XL_KERNEL void fused16_{0}(const h16 *q, const h16 *k, const h16 *v,
    const h16 *kr, const float *se, const float *rw, const float *rr,
    const float *rs, const i64 *seg, const i64 *rank, const i64 *rows,
    h16 *o, float *lse, int *st, u64 seed) {{
  xl_rel_attention_fused<{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}ull,
      {11}u, {12}, 32, {13}, 0>(q, k, v, kr, se, rw, rr, rs, seg, rank, rows,
      o, lse, st, {14}, seed);
}}
XL_EXPORT(fused16_{0})
)",
                     c.name, c.B, c.T, c.N, c.H, c.K(), c.S, c.P, c.R(), c.rows ? 1 : 0,
                     doubleBits(c.scale()), c.dropatt > 0 ? floatBits(c.dropatt) : 0u, c.bq,
                     c.block, c.site);
    for (int phase = 0; phase < 5; ++phase)
      s += fmt::format(R"(
XL_KERNEL void fusedgrad16_{0}_{15}(const h16 *dout, const h16 *q,
    const h16 *k, const h16 *v, const h16 *kr, const float *se,
    const float *rw, const float *rr, const float *rs, const i64 *seg,
    const i64 *rank, const i64 *rows, h16 *dq, h16 *dk, h16 *dv,
    h16 *dkr, float *dse, float *drw, float *drr, float *drs, double *ws,
    int *st, u64 seed) {{
  xl_rel_attention_fused_grad<{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9},
      {10}ull, {11}u, {12}, {15}, {13}, 0>(dout, q, k, v, kr, se, rw, rr, rs, seg,
      rank, rows, dq, dk, dv, dkr, dse, drw, drr, drs, ws, st, {14}, seed);
}}
XL_EXPORT(fusedgrad16_{0}_{15})
)",
                       c.name, c.B, c.T, c.N, c.H, c.K(), c.S, c.P, c.R(), c.rows ? 1 : 0,
                       doubleBits(c.scale()), c.dropatt > 0 ? floatBits(c.dropatt) : 0u,
                       c.bq, c.block, c.site, phase);
  }
  return s;
}

/// A tensor's values rounded to bf16 (in place) and their bf16 bits.
std::vector<uint16_t> roundToBf16(Tensor &t) {
  std::vector<uint16_t> h(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    h[size_t(i)] = bf16FromFloat(t.f32()[i]);
    t.f32()[i] = floatFromBf16(h[size_t(i)]);
  }
  return h;
}

/// bf16 storage changes what is stored, not what is computed: on inputs
/// that are bf16 values, the kernels' outputs are the host's fp32 results
/// rounded once (bf16 keeps 8 significant bits: within 2^-8 of the value,
/// so of the largest magnitude, plus the fp32 tolerance), and the f32
/// gradients of the biases and seg_embed are the fp32 ones (1e-4).
TEST(FusedAttention, Bf16StorageRoundsOnlyWhatItStores) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev));
  std::unique_ptr<Module> mod;
  Status st = dev->loadModule({"fused-attention-bf16-test.cu", moduleTextBf16(), {}}, mod);
  ASSERT_TRUE(st) << st.message();
  std::vector<DevPtr> live;
  auto put = [&](const void *src, size_t bytes) {
    DevPtr p = 0;
    EXPECT_TRUE(dev->alloc(std::max<size_t>(bytes, 8), p));
    if (src)
      EXPECT_TRUE(dev->upload(p, src, bytes));
    else
      EXPECT_TRUE(dev->memset(p, 0, std::max<size_t>(bytes, 8)));
    live.push_back(p);
    return p;
  };
  auto put16 = [&](const std::vector<uint16_t> &h) { return put(h.data(), h.size() * 2); };
  auto putT = [&](const Tensor &t) { return put(t.bytes(), t.nbytes()); };
  auto within = [](const std::vector<float> &got, const Tensor &ref, double rel) {
    double maxRef = 1e-30, worst = 0;
    for (int64_t e = 0; e < ref.numel(); ++e) {
      maxRef = std::max(maxRef, double(std::fabs(ref.f32()[e])));
      worst = std::max(worst, std::fabs(double(got[size_t(e)]) - ref.f32()[e]));
    }
    return worst <= rel * maxRef;
  };
  auto get16 = [&](DevPtr p, int64_t n) {
    std::vector<uint16_t> h(static_cast<size_t>(n));
    EXPECT_TRUE(dev->download(h.data(), p, h.size() * 2));
    std::vector<float> f(h.size());
    for (size_t i = 0; i < h.size(); ++i)
      f[i] = floatFromBf16(h[i]);
    return f;
  };
  const double kStored = 1.0 / 256 + 1e-4;
  for (const Case *cp : kBf16Cases) {
    const Case &c = *cp;
    Inputs in = makeInputs(c, 900);
    std::vector<uint16_t> q = roundToBf16(in.q), k = roundToBf16(in.k),
                          v = roundToBf16(in.v), kR = roundToBf16(in.kR),
                          dout = roundToBf16(in.dout);
    host::RelAttentionArgs a;
    a.q = &in.q, a.k = &in.k, a.v = &in.v, a.kR = &in.kR;
    a.segEmbed = &in.segEmb, a.rwBias = &in.rw, a.rrBias = &in.rr;
    a.rsBias = &in.rs, a.segMat = &in.segMat, a.mask = &in.mask;
    a.rows = c.rows ? &in.rows : nullptr;
    a.scale = c.scale(), a.dropatt = c.dropatt, a.dropoutSite = c.site;
    a.seed = kSeed;
    Tensor ref = Tensor::zeros(DType::F32, {c.B, c.T, c.N, c.H});
    ASSERT_TRUE(host::relAttention(a, ref)) << c.name;
    std::vector<DevPtr> operands = {put16(q),       put16(k),      put16(v),   put16(kR),
                                    putT(in.segEmb), putT(in.rw),  putT(in.rr), putT(in.rs),
                                    putT(in.segId),  putT(in.rank), c.rows ? putT(in.rows) : 0};
    DevPtr o = put(nullptr, size_t(ref.numel()) * 2);
    DevPtr lse = put(nullptr, size_t(c.B * c.T * c.N) * 4);
    DevPtr status = put(nullptr, 5 * 4);
    std::vector<DevPtr> args = operands;
    args.insert(args.end(), {o, lse, status});
    launchOn(*dev, *mod, std::string("fused16_") + c.name, unsigned(c.tiles()), c.block, args,
             c.smem());
    EXPECT_TRUE(within(get16(o, ref.numel()), ref, kStored)) << c.name << " out";

    const int64_t B = c.B, T = c.T, N = c.N, H = c.H, K = c.K();
    std::vector<Tensor> g = {Tensor::zeros(DType::F32, {B, T, N, H}),
                             Tensor::zeros(DType::F32, {B, K, N, H}),
                             Tensor::zeros(DType::F32, {B, K, N, H}),
                             Tensor::zeros(DType::F32, {c.P, c.R(), N, H}),
                             Tensor::zeros(DType::F32, {2, N, H}),
                             Tensor::zeros(DType::F32, {N, H}),
                             Tensor::zeros(DType::F32, {N, H}),
                             Tensor::zeros(DType::F32, {N, H})};
    host::RelAttentionGrads hg{&g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7]};
    ASSERT_TRUE(host::relAttentionGrad(in.dout, a, hg)) << c.name;
    std::vector<DevPtr> outs;
    for (size_t x = 0; x < g.size(); ++x)
      outs.push_back(put(nullptr, size_t(g[x].numel()) * (x < 4 ? 2 : 4)));
    DevPtr ws = put(nullptr, size_t(B * T * N * (2 * H + 4)) * 8);
    std::vector<DevPtr> gargs = {put16(dout)};
    gargs.insert(gargs.end(), operands.begin(), operands.end());
    gargs.insert(gargs.end(), outs.begin(), outs.end());
    gargs.insert(gargs.end(), {ws, status});
    const int64_t full[5] = {c.tiles(), c.tiles(), B * N * ((K + 31) / 32),
                             c.P * N * ((c.R() + 31) / 32), (N * H + c.block - 1) / c.block};
    for (int phase = 0; phase < 5; ++phase)
      launchOn(*dev, *mod, fmt::format("fusedgrad16_{}_{}", c.name, phase),
               unsigned(full[phase]), c.block, gargs);
    for (size_t x = 0; x < g.size(); ++x) {
      std::vector<float> got;
      if (x < 4) {
        got = get16(outs[x], g[x].numel());
      } else {
        got.resize(size_t(g[x].numel()));
        EXPECT_TRUE(dev->download(got.data(), outs[x], got.size() * 4));
      }
      EXPECT_TRUE(within(got, g[x], x < 4 ? kStored : 1e-4)) << c.name << " gradient " << x;
    }
  }
  for (DevPtr p : live)
    dev->free(p);
}

TEST(FusedAttention, CompilesForSm90WithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  CompiledCubin cubin;
  Status st = xlnetc::rt::testing::compileForSm90("fused-attention-test.cu",
                                                 moduleText(), cubin);
  ASSERT_TRUE(st) << st.message();
  int kernels = 0;
  for (const KernelResourceUsage &u : parsePtxasLog(cubin.log)) {
    if (!u.entry)
      continue;
    ++kernels;
    EXPECT_EQ(u.spillStores + u.spillLoads, 0) << u.kernel;
  }
  EXPECT_EQ(kernels, 6 * int(std::size(kCases)));
}


//===----------------------------------------------------------------------===//
// The tensor-core forward (xlnetc_k_attention_tc.cuh)
//===----------------------------------------------------------------------===//

/// Cases of xl_rel_attention_tc: H a multiple of 16; tails of the 64-row
/// query and 64-key tiles; both streams, memory and none, two k_r copies,
/// padding slots, a fully masked row, dropatt, bit-packed masks, and query
/// rows whose positions spread over more than one k_r band chunk.
const Case kTcCases[] = {
    // content stream, memory, K = 48 (one short key tile), dropatt
    {"tc_c_m11", 2, 37, 2, 16, 11, 37, 1, false, 0.1, 21, 64, 128},
    // query stream, no memory: a padding slot and a fully masked row
    {"tc_q_m0", 2, 4, 3, 16, 0, 9, 1, true, 0.0, 22, 64, 128},
    // query stream, memory, two k_r copies, dropatt
    {"tc_q_m5", 2, 5, 2, 32, 5, 37, 2, true, 0.3, 23, 64, 128},
    // H 64 (XLNet-Base/Large): two query tiles, three key tiles
    {"tc_c_h64", 1, 70, 1, 64, 60, 70, 1, false, 0.0, 24, 64, 128},
    // 40 query rows spread over S = 70: a warp's band needs two chunks
    {"tc_q_spread", 2, 40, 1, 32, 8, 70, 1, true, 0.0, 25, 64, 128},
    // bit-packed masks without ranks, two words per row, dropatt
    {"tc_q_bits", 2, 6, 2, 16, 3, 70, 1, true, 0.2, 26, 64, 128, true},
    {"tc_c_bits", 1, 9, 1, 16, 0, 9, 1, false, 0.0, 27, 64, 128, true},
};

/// The tensor-core kernels of every case in the configuration of `warps`
/// warps per block.
std::string moduleTextTc(int warps) {
  std::string s = R"(#include "xlnetc_prelude.cuh"
#include "xlnetc_k_attention_tc.cuh"
typedef unsigned long long u64;
typedef long long i64;
typedef xl_bf16 h16;
)";
  for (const Case &c : kTcCases)
    s += fmt::format(R"(
XL_KERNEL void tc_{0}(const h16 *q, const h16 *k, const h16 *v,
    const h16 *kr, const float *se, const float *rw, const float *rr,
    const float *rs, const i64 *seg, const i64 *rank, const i64 *rows,
    h16 *o, float *lse, int *st, u64 seed) {{
  xl_rel_attention_tc<{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}ull,
      {11}u, {13}, {14}>(q, k, v, kr, se, rw, rr, rs, seg, rank, rows, o, lse,
      st, {12}, seed);
}}
XL_EXPORT(tc_{0})
)",
                     c.name, c.B, c.T, c.N, c.H, c.K(), c.S, c.P, c.R(),
                     c.rows ? 1 : 0, doubleBits(c.scale()),
                     c.dropatt > 0 ? floatBits(c.dropatt) : 0u, c.site,
                     c.bits ? 1 : 0, warps);
  // The backward: PHASE 0..3 on tensor cores, the bias columns (PHASE 4)
  // as the emitter launches them; once with no inits and, for PHASE 2..4,
  // once adding every gradient but dq into given tensors (the emitter's
  // add-into fusion of the two streams' gradients).
  for (const Case &c : kTcCases)
    for (int phase = 0; phase < 5; ++phase)
      for (int withInit = 0; withInit < (phase >= 2 ? 2 : 1); ++withInit)
        s += fmt::format(R"(
XL_KERNEL void tcgrad{15}_{0}_{13}(const h16 *dout, const h16 *q,
    const h16 *k, const h16 *v, const h16 *kr, const float *se,
    const float *rw, const float *rr, const float *rs, const i64 *seg,
    const i64 *rank, const i64 *rows, {16}h16 *dq, h16 *dk, h16 *dv,
    h16 *dkr, float *dse, float *drw, float *drr, float *drs, double *ws,
    int *st, u64 seed) {{
  xl_rel_attention_tc_grad<{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9},
      {10}ull, {11}u, {13}, {14}, {18}>(dout, q, k, v, kr, se, rw, rr, rs, seg,
      rank, rows, {17}, dq, dk, dv, dkr, dse, drw, drr, drs, ws, st, {12}, seed);
}}
XL_EXPORT(tcgrad{15}_{0}_{13})
)",
                         c.name, c.B, c.T, c.N, c.H, c.K(), c.S, c.P, c.R(),
                         c.rows ? 1 : 0, doubleBits(c.scale()),
                         c.dropatt > 0 ? floatBits(c.dropatt) : 0u, c.site, phase,
                         c.bits ? 1 : 0, withInit ? "i" : "",
                         withInit ? "const h16 *dki, const h16 *dvi, const h16 *dkri, "
                                    "const float *dsei, const float *drwi, "
                                    "const float *drri, const float *drsi, "
                                  : "",
                         withInit ? "dki, dvi, dkri, dsei, drwi, drri, drsi"
                                  : "(const h16 *)0, (const h16 *)0, (const h16 *)0, "
                                    "(const float *)0, (const float *)0, "
                                    "(const float *)0, (const float *)0",
                         warps);
  return s;
}

/// The bf16 contract (docs/Devices.md): on bf16 inputs, the tensor-core
/// forward rounds q + r_w, q + r_r and P to bf16 and sums in f32, so it
/// matches the host's fp32 result within TC_TOL of the largest output and
/// the log-sum-exp within TC_TOL (absolute, the scores being O(1)); its
/// outputs are bitwise the same for every grid and schedule.
constexpr double kTcTol = 1e-2;
/// The backward's gradients also round c and P·f to bf16 for their
/// products: within TC_GRAD_TOL of each tensor's largest magnitude, with
/// cosine similarity >= 0.999 to the host's.
constexpr double kTcGradTol = 2e-2;

/// Runs every case's forward and backward in the configuration of `warps`
/// warps on an emulated device opened under `schedule`, each checked
/// against the host; returns the results of every case.
std::vector<float> runTc(const char *schedule, int warps) {
  ScopedEnv env("XLNETC_EMU_SCHEDULE", schedule);
  std::unique_ptr<Device> dev;
  EXPECT_TRUE(openDevice(DeviceKind::Emu, {}, dev));
  std::unique_ptr<Module> mod;
  Status st = dev ? dev->loadModule({fmt::format("tc-attention-test-w{}.cu", warps),
                                     moduleTextTc(warps), {}},
                                    mod)
                  : Status::error("no device");
  EXPECT_TRUE(st) << st.message();
  if (!mod)
    return {};
  std::vector<DevPtr> live;
  auto put = [&](const void *src, size_t bytes) {
    DevPtr p = 0;
    EXPECT_TRUE(dev->alloc(std::max<size_t>(bytes, 8), p));
    if (src)
      EXPECT_TRUE(dev->upload(p, src, bytes));
    else
      EXPECT_TRUE(dev->memset(p, 0, std::max<size_t>(bytes, 8)));
    live.push_back(p);
    return p;
  };
  auto put16 = [&](const std::vector<uint16_t> &h) { return put(h.data(), h.size() * 2); };
  auto putT = [&](const Tensor &t) { return put(t.bytes(), t.nbytes()); };
  const unsigned block = unsigned(attnTcBlock(warps));
  const int64_t tileRows = attnTcRows(warps);
  std::vector<float> all;
  for (const Case &c : kTcCases) {
    Inputs in = makeInputs(c, 700);
    for (Tensor *t : {&in.q, &in.k, &in.kR})
      for (int64_t e = 0; e < t->numel(); ++e)
        t->f32()[e] *= 0.5f; // scores of O(1), as in a trained model
    std::vector<uint16_t> q = roundToBf16(in.q), k = roundToBf16(in.k),
                          v = roundToBf16(in.v), kR = roundToBf16(in.kR);
    host::RelAttentionArgs a;
    a.q = &in.q, a.k = &in.k, a.v = &in.v, a.kR = &in.kR;
    a.segEmbed = &in.segEmb, a.rwBias = &in.rw, a.rrBias = &in.rr;
    a.rsBias = &in.rs, a.segMat = &in.segMat, a.mask = &in.mask;
    a.rows = c.rows ? &in.rows : nullptr;
    a.scale = c.scale(), a.dropatt = c.dropatt, a.dropoutSite = c.site;
    a.seed = kSeed;
    Tensor ref = Tensor::zeros(DType::F32, {c.B, c.T, c.N, c.H});
    EXPECT_TRUE(host::relAttention(a, ref)) << c.name;
    const std::vector<double> refLse = referenceLse(c, in);
    double maxRef = 1e-30;
    for (int64_t x = 0; x < ref.numel(); ++x)
      maxRef = std::max(maxRef, double(std::fabs(ref.f32()[x])));
    std::vector<DevPtr> args = {put16(q),        put16(k),     put16(v),
                                put16(kR),       putT(in.segEmb),
                                putT(in.rw),     putT(in.rr),  putT(in.rs),
                                putT(in.segId),  putT(in.rank),
                                c.rows ? putT(in.rows) : DevPtr(0)};
    const unsigned tiles = unsigned(c.B * c.N * ((c.T + tileRows - 1) / tileRows));
    std::vector<float> first;
    for (unsigned grid : {1u, 2u, tiles + 1u}) {
      const std::string what =
          fmt::format("{} grid {} schedule {} warps {}", c.name, grid, schedule, warps);
      DevPtr o = put(nullptr, size_t(ref.numel()) * 2);
      DevPtr lse = put(nullptr, refLse.size() * 4);
      DevPtr status = put(nullptr, 5 * 4);
      std::vector<DevPtr> launch = args;
      launch.insert(launch.end(), {o, lse, status});
      launchOn(*dev, *mod, std::string("tc_") + c.name, grid, block, launch,
               size_t(attnTcSmemBytes(c.H, warps)));
      std::vector<uint16_t> got16(size_t(ref.numel()));
      std::vector<float> got(got16.size()), gotLse(refLse.size());
      int words[5];
      EXPECT_TRUE(dev->download(got16.data(), o, got16.size() * 2));
      EXPECT_TRUE(dev->download(gotLse.data(), lse, gotLse.size() * 4));
      EXPECT_TRUE(dev->download(words, status, sizeof words));
      EXPECT_EQ(words[0], 0) << what;
      double worst = 0, dot = 0, nr = 0, ng = 0;
      for (size_t x = 0; x < got.size(); ++x) {
        got[x] = floatFromBf16(got16[x]);
        const double r = ref.f32()[x];
        worst = std::max(worst, std::fabs(got[x] - r));
        dot += got[x] * r, nr += r * r, ng += double(got[x]) * got[x];
      }
      EXPECT_LE(worst, kTcTol * maxRef) << what << " out";
      EXPECT_GE(dot / std::sqrt(nr * ng + 1e-300), 0.9999) << what << " cosine";
      for (size_t r = 0; r < refLse.size(); ++r)
        EXPECT_NEAR(gotLse[r], refLse[r], kTcTol * std::max(1.0, std::fabs(refLse[r])))
            << what << " lse row " << r;
      if (c.rows) // the padding slot: zeros
        for (int64_t x = 0; x < c.N * c.H; ++x)
          EXPECT_EQ(got[size_t((1 * c.T + 1) * c.N * c.H + x)], 0.0f) << what;
      if (grid == 1 && warps == 4)
        std::printf("%-12s out max error %.2e of %.2e, lse max error %.2e\n", c.name,
                    worst, maxRef, [&] {
                      double w = 0;
                      for (size_t r = 0; r < refLse.size(); ++r)
                        w = std::max(w, std::fabs(gotLse[r] - refLse[r]));
                      return w;
                    }());
      got.insert(got.end(), gotLse.begin(), gotLse.end());
      if (first.empty())
        first = got;
      else
        EXPECT_EQ(got, first) << "bitwise equal across grids: " << what;
    }
    all.insert(all.end(), first.begin(), first.end());

    // The backward against the host's fp32 gradients on the same values.
    const int64_t B = c.B, T = c.T, N = c.N, H = c.H, K = c.K();
    std::vector<uint16_t> dout = roundToBf16(in.dout);
    std::vector<Tensor> g = {Tensor::zeros(DType::F32, {B, T, N, H}),
                             Tensor::zeros(DType::F32, {B, K, N, H}),
                             Tensor::zeros(DType::F32, {B, K, N, H}),
                             Tensor::zeros(DType::F32, {c.P, c.R(), N, H}),
                             Tensor::zeros(DType::F32, {2, N, H}),
                             Tensor::zeros(DType::F32, {N, H}),
                             Tensor::zeros(DType::F32, {N, H}),
                             Tensor::zeros(DType::F32, {N, H})};
    const char *names[] = {"dq", "dk", "dv", "dk_r", "dseg_embed",
                           "dr_w_bias", "dr_r_bias", "dr_s_bias"};
    host::RelAttentionGrads hg{&g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7]};
    EXPECT_TRUE(host::relAttentionGrad(in.dout, a, hg)) << c.name;
    const int64_t rowTiles = (T + tileRows - 1) / tileRows;
    const int64_t full[5] = {B * N * rowTiles, B * N * rowTiles,
                             B * N * ((K + tileRows - 1) / tileRows),
                             c.P * N * ((c.R() + tileRows - 1) / tileRows),
                             (N * H + kAttnTcColumnsBlock - 1) / kAttnTcColumnsBlock};
    // The launch of each phase: PHASE 4, the bias columns, has its own
    // block and no shared memory.
    auto blockOf = [&](int phase) {
      return phase < 4 ? block : unsigned(kAttnTcColumnsBlock);
    };
    auto smemOf = [&](int phase) {
      return phase < 4 ? size_t(attnTcSmemBytes(H, warps, true)) : size_t(0);
    };
    DevPtr ws = put(nullptr, size_t(B * T * N * (2 * H + 4)) * 8);
    DevPtr status = put(nullptr, 5 * 4);
    DevPtr gout = put16(dout);
    std::vector<float> firstGrad;
    for (unsigned grid : {1u, 3u, 0u}) { // 0: one block per work item
      std::vector<DevPtr> outs;
      for (size_t x = 0; x < g.size(); ++x)
        outs.push_back(put(nullptr, size_t(g[x].numel()) * (x < 4 ? 2 : 4)));
      std::vector<DevPtr> gargs = {gout};
      gargs.insert(gargs.end(), args.begin(), args.end());
      gargs.insert(gargs.end(), outs.begin(), outs.end());
      gargs.insert(gargs.end(), {ws, status});
      for (int phase = 0; phase < 5; ++phase)
        launchOn(*dev, *mod, fmt::format("tcgrad_{}_{}", c.name, phase),
                 grid ? grid : unsigned(full[phase]), blockOf(phase), gargs, smemOf(phase));
      std::vector<float> grads;
      for (size_t x = 0; x < g.size(); ++x) {
        const std::string what = fmt::format("{} {} grid {} schedule {} warps {}", c.name,
                                             names[x], grid, schedule, warps);
        std::vector<float> got(size_t(g[x].numel()));
        if (x < 4) {
          std::vector<uint16_t> h(got.size());
          EXPECT_TRUE(dev->download(h.data(), outs[x], h.size() * 2));
          for (size_t e = 0; e < h.size(); ++e)
            got[e] = floatFromBf16(h[e]);
        } else {
          EXPECT_TRUE(dev->download(got.data(), outs[x], got.size() * 4));
        }
        double maxRef = 1e-30, worst = 0, dot = 0, nr = 0, ng = 0;
        for (int64_t e = 0; e < g[x].numel(); ++e) {
          const double r = g[x].f32()[e], v = got[size_t(e)];
          maxRef = std::max(maxRef, std::fabs(r));
          worst = std::max(worst, std::fabs(v - r));
          dot += v * r, nr += r * r, ng += v * v;
        }
        EXPECT_LE(worst, kTcGradTol * maxRef) << what;
        EXPECT_GE(dot / std::sqrt(nr * ng + 1e-300), 0.999) << what << " cosine";
        if (grid == 1 && warps == 4)
          std::printf("%-12s %-10s max error %.2e of %.2e, cosine %.6f\n", c.name,
                      names[x], worst, maxRef, dot / std::sqrt(nr * ng + 1e-300));
        grads.insert(grads.end(), got.begin(), got.end());
      }
      if (firstGrad.empty())
        firstGrad = grads;
      else
        EXPECT_EQ(grads, firstGrad) << c.name << ": gradients bitwise equal across grids";
      if (grid != 1)
        continue;
      // PHASE 2..4 again, adding every gradient but dq into other tensors:
      // bitwise the add of what they stored to them, rounded once (bf16 for
      // dk, dv, dk_r; f32 for the bias columns).
      std::vector<DevPtr> inits, sums;
      std::vector<std::vector<uint16_t>> initBits;
      std::vector<Tensor> initF32;
      for (size_t x = 1; x < g.size(); ++x) {
        Tensor t = rnd(g[x].shape, 800 + uint32_t(x), -3, 3);
        if (x < 4) {
          initBits.push_back(roundToBf16(t));
          inits.push_back(put16(initBits.back()));
        } else {
          inits.push_back(putT(t));
          initF32.push_back(std::move(t));
        }
      }
      for (size_t x = 0; x < g.size(); ++x)
        sums.push_back(put(nullptr, size_t(g[x].numel()) * (x < 4 ? 2 : 4)));
      std::vector<DevPtr> iargs = {gout};
      iargs.insert(iargs.end(), args.begin(), args.end());
      iargs.insert(iargs.end(), inits.begin(), inits.end());
      iargs.insert(iargs.end(), sums.begin(), sums.end());
      iargs.insert(iargs.end(), {ws, status});
      for (int phase = 2; phase < 5; ++phase)
        launchOn(*dev, *mod, fmt::format("tcgradi_{}_{}", c.name, phase), 2u, blockOf(phase),
                 iargs, smemOf(phase));
      for (size_t x = 1; x < g.size(); ++x) {
        size_t wrong = 0;
        if (x < 4) {
          std::vector<uint16_t> mine(size_t(g[x].numel())), sum(mine.size());
          EXPECT_TRUE(dev->download(mine.data(), outs[x], mine.size() * 2));
          EXPECT_TRUE(dev->download(sum.data(), sums[x], sum.size() * 2));
          for (size_t e = 0; e < sum.size(); ++e)
            wrong += sum[e] != bf16FromFloat(floatFromBf16(initBits[x - 1][e]) +
                                             floatFromBf16(mine[e]));
        } else {
          std::vector<float> mine(size_t(g[x].numel())), sum(mine.size());
          EXPECT_TRUE(dev->download(mine.data(), outs[x], mine.size() * 4));
          EXPECT_TRUE(dev->download(sum.data(), sums[x], sum.size() * 4));
          const float *init = initF32[x - 4].f32();
          for (size_t e = 0; e < sum.size(); ++e)
            wrong += sum[e] != init[e] + mine[e];
        }
        EXPECT_EQ(wrong, 0u) << c.name << " " << names[x] << " added into its init";
      }
    }
    all.insert(all.end(), firstGrad.begin(), firstGrad.end());
  }
  for (DevPtr p : live)
    dev->free(p);
  return all;
}

TEST(FusedAttentionTc, ForwardAndBackwardMatchTheHostWithinBf16UnderEverySchedule) {
  const std::vector<float> forward = runTc("forward", 4);
  ASSERT_FALSE(forward.empty());
  for (const char *schedule : {"reverse", "random:5"})
    EXPECT_EQ(runTc(schedule, 4), forward) << "schedule " << schedule << " changed a result";
}

/// The configurations with fewer warps per block (AttentionTc.h: 2 on the
/// 99-KiB GPUs at d_head 64, 1 above d_head 80 there) give bitwise the
/// 4-warp results, forward and every gradient of every case (runTc checks
/// each against the host too), under a random schedule.
TEST(FusedAttentionTc, EveryTileConfigurationGivesBitwiseTheSameResults) {
  const std::vector<float> four = runTc("forward", 4);
  ASSERT_FALSE(four.empty());
  for (int warps : {2, 1})
    EXPECT_EQ(runTc("random:9", warps), four) << warps << " warps changed a result";
}

/// cuobjdump, for reading the SASS of a CUBIN (with nvdisasm beside it):
/// $XLNETC_CUOBJDUMP, the CUDA toolkit's, or the one scripts/install-deps.sh
/// installs from PyPI; empty when there is none.
std::string findCuobjdump() {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("XLNETC_CUOBJDUMP"))
    candidates.push_back(env);
  candidates.push_back("/usr/local/cuda/bin/cuobjdump");
  candidates.push_back("/usr/local/lib/xlnetc-tools/bin/cuobjdump");
  for (const std::string &c : candidates)
    if (!c.empty() && ::access(c.c_str(), X_OK) == 0)
      return c;
  return "";
}

/// The SASS of a CUBIN, by cuobjdump -sass.
std::string sassOf(const std::string &cuobjdump, const std::string &cubin) {
  char path[] = "/tmp/xlnetc-sass-XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  if (fd < 0)
    return "";
  EXPECT_EQ(::write(fd, cubin.data(), cubin.size()), ssize_t(cubin.size()));
  ::close(fd);
  std::string text;
  // cuobjdump runs nvdisasm, which sits beside it.
  const std::string dir = cuobjdump.substr(0, cuobjdump.rfind('/'));
  const std::string cmd =
      "PATH='" + dir + "':\"$PATH\" '" + cuobjdump + "' -sass " + path + " 2>&1";
  if (FILE *f = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
      text.append(buf, got);
    EXPECT_EQ(::pclose(f), 0) << text;
  }
  ::unlink(path);
  return text;
}

/// The tensor-core kernels (forward, backward PHASE 0..3) compile for sm_90
/// without spills or a stack frame, and their SASS (cuobjdump) runs the
/// products on the tensor cores: bf16 HMMA instructions with f32
/// accumulators.
TEST(FusedAttentionTc, CompilesForSm90OnTensorCoresWithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  CompiledCubin cubin;
  Status st = xlnetc::rt::testing::compileForSm90("tc-attention-test.cu",
                                                 moduleTextTc(4), cubin);
  ASSERT_TRUE(st) << st.message();
  int kernels = 0;
  for (const KernelResourceUsage &u : parsePtxasLog(cubin.log)) {
    if (!u.entry)
      continue;
    ++kernels;
    EXPECT_EQ(u.spillStores + u.spillLoads, 0) << u.kernel;
    EXPECT_EQ(u.stackBytes, 0) << u.kernel;
    std::printf("%s: %d registers, %lld bytes stack\n", u.kernel.c_str(), u.registers,
                static_cast<long long>(u.stackBytes));
  }
  // forward, 5 phases, 3 with inits
  EXPECT_EQ(kernels, 9 * int(std::size(kTcCases)));
  const std::string cuobjdump = findCuobjdump();
  if (cuobjdump.empty())
    GTEST_SKIP() << "no cuobjdump (scripts/install-deps.sh installs it): "
                    "the SASS was not read";
  const std::string sass = sassOf(cuobjdump, cubin.cubin);
  // cuobjdump prints "Function : NAME" before each kernel's code. Every
  // tensor-core kernel — the forward and the backward's PHASE 0..3 — has
  // bf16 HMMA with f32 accumulators (how many depends on how far ptxas
  // unrolls; each has at least two products).
  for (const Case &c : kTcCases)
    for (int phase = -1; phase < 4; ++phase) {
      const std::string name = phase < 0 ? fmt::format("tc_{}", c.name)
                                         : fmt::format("tcgrad_{}_{}", c.name, phase);
      const std::string head = "Function : " + name + "\n";
      size_t at = sass.find(head);
      ASSERT_NE(at, std::string::npos) << name << "\n" << sass.substr(0, 2000);
      size_t end = sass.find("Function : ", at + head.size());
      const std::string body =
          sass.substr(at, end == std::string::npos ? end : end - at);
      int hmma = 0;
      for (size_t p = body.find("HMMA.16816.F32.BF16"); p != std::string::npos;
           p = body.find("HMMA.16816.F32.BF16", p + 1))
        ++hmma;
      EXPECT_GE(hmma, 2) << name;
      std::printf("%-22s %3d HMMA.16816.F32.BF16 in its SASS\n", name.c_str(), hmma);
    }
}

/// The configurations with fewer warps (AttentionTc.h: what the 99-KiB GPUs
/// get) compile for sm_86 without spills or a stack frame, every case
/// (through the kernel cache: cold, about 30 s each on 2 cores).
TEST(FusedAttentionTc, FewerWarpsCompileForSm86WithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  KernelCache cache = KernelCache::openDefault();
  for (int warps : {2, 1}) {
    NvrtcSource src;
    src.name = fmt::format("tc-attention-test-w{}.cu", warps);
    src.text = moduleTextTc(warps);
    for (const SourceFile &h : embeddedDeviceFiles())
      src.headers.push_back({h.name, h.text});
    NvrtcOptions opts;
    opts.arch = "sm_86";
    opts.ptxasVerbose = true;
    CompiledCubin cubin;
    Status st = compileCubin(src, opts, &cache, cubin);
    ASSERT_TRUE(st) << st.message();
    int kernels = 0;
    for (const KernelResourceUsage &u : parsePtxasLog(cubin.log)) {
      if (!u.entry)
        continue;
      ++kernels;
      EXPECT_EQ(u.spillStores + u.spillLoads, 0) << u.kernel << ", " << warps << " warps";
      EXPECT_EQ(u.stackBytes, 0) << u.kernel << ", " << warps << " warps";
    }
    EXPECT_EQ(kernels, 9 * int(std::size(kTcCases))) << warps << " warps";
  }
}

} // namespace
