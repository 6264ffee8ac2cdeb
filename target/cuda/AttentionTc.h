//===- AttentionTc.h - Launch geometry of the tensor-core attention -------===//
//
// The host side of xlnetc_k_attention_tc.cuh: which head sizes the
// tensor-core attention takes, its tile configurations (WARPS warps per
// block), their blocks, rows per tile and dynamic shared memory, and which
// configuration a GPU gets. The device side's constants are XlAttnTc<WARPS>
// and XlAttnTcSmem<H, WARPS>; the emitted source static_asserts that
// XlAttnTcSmem<H, WARPS>::kBytes (kGradBytes) equals
// attnTcSmemBytes(H, WARPS) (attnTcSmemBytes(H, WARPS, true)), so the two
// cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_TARGET_CUDA_ATTENTIONTC_H
#define XLNETC_TARGET_CUDA_ATTENTIONTC_H

#include <cstdint>

namespace xlnetc::rt::dev {

/// Threads per block of a configuration of `warps` warps.
constexpr int attnTcBlock(int warps) { return 32 * warps; }
/// Query rows per tile (forward, PHASE 0, 1), and keys or k_r rows per tile
/// (PHASE 2, 3): 16 per warp.
constexpr int attnTcRows(int warps) { return 16 * warps; }
/// Threads per block of the backward's PHASE 4 (the bias columns, any
/// block size; no dynamic shared memory), whatever the configuration.
constexpr int kAttnTcColumnsBlock = 128;

/// Whether the tensor-core kernels take head size H (the mma's k is 16;
/// larger heads would not fit its registers).
constexpr bool attnTcSupports(int64_t H) { return H > 0 && H % 16 == 0 && H <= 128; }

/// The dynamic shared memory of the forward (GRAD false) or of every phase
/// of the backward with `warps` warps (XlAttnTcSmem<H, WARPS>: kBytes,
/// kGradBytes). Layout: the k and v tiles (64 rows of H + 8 bf16), a 40-byte
/// row per query row of the tile, the keys' segment ids and ranks (64 i64
/// each), in the backward two [rows][72] bf16 tiles, then one region per
/// warp: two (backward: three) [16][H + 8] bf16 query tiles, an 80-row
/// chunk of H + 8 bf16, its [16][84] f32 product and, in the backward, a
/// [16][88] bf16 chunk of c.
constexpr int64_t attnTcSmemBytes(int64_t H, int warps, bool grad = false) {
  const int64_t ld = H + 8, rows = attnTcRows(warps);
  const int64_t chunk = 80 * ld * 2, prod = 16 * 84 * 4;
  const int64_t head = 2 * 64 * ld * 2 + rows * 40 + 64 * 16;
  if (!grad)
    return head + warps * (2 * 16 * ld * 2 + chunk + prod);
  return head + 2 * rows * 72 * 2 + warps * (3 * 16 * ld * 2 + chunk + prod + 16 * 88 * 2);
}
static_assert(attnTcSmemBytes(64, 4) == 108032, "the figure the docs quote");
static_assert(attnTcSmemBytes(64, 4, true) == 146944, "the figure the docs quote");
static_assert(attnTcSmemBytes(64, 2) == 63744, "the figure the docs quote");
static_assert(attnTcSmemBytes(64, 2, true) == 83200, "the figure the docs quote");

/// The static shared memory of the tensor-core kernels, as ptxas counts it:
/// the dropatt key (XlDropKey, 32 bytes, in a 128-byte allocation).
constexpr int64_t kAttnTcStaticSmem = 128;

/// The configuration of the forward (GRAD false) or backward kernels for
/// head size H on a GPU whose blocks may have `smemPerBlock` bytes of shared
/// memory: the most warps, of 4, 2 and 1, whose shared memory (dynamic and
/// static) fits
/// (more warps per block share each staged key tile among more query rows);
/// 0 when none does. Results do not depend on it (the kernels' sums run in
/// the same order for every configuration).
constexpr int attnTcWarps(int64_t H, bool grad, int64_t smemPerBlock) {
  for (int warps = 4; warps >= 1; warps /= 2)
    if (attnTcSmemBytes(H, warps, grad) + kAttnTcStaticSmem <= smemPerBlock)
      return warps;
  return 0;
}
// XLNet's d_head 64: 4 warps within sm_80's 163 KiB and sm_90's 227 KiB,
// 2 within the 99 KiB of sm_86, sm_89 and sm_120.
static_assert(attnTcWarps(64, true, 227 * 1024) == 4 && attnTcWarps(64, true, 163 * 1024) == 4 &&
                  attnTcWarps(64, true, 99 * 1024) == 2 &&
                  attnTcWarps(64, false, 99 * 1024) == 2,
              "the configurations docs/Devices.md lists");

} // namespace xlnetc::rt::dev

#endif // XLNETC_TARGET_CUDA_ATTENTIONTC_H
