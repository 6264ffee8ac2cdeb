//===- AttentionTc.h - Launch geometry of the tensor-core attention -------===//
//
// The host side of xlnetc_k_attention_tc.cuh: which head sizes the
// tensor-core attention takes, its block, rows per tile and dynamic shared
// memory. The device side's constants are XlAttnTc and XlAttnTcSmem<H>; the
// emitted source static_asserts that XlAttnTcSmem<H>::kBytes (kGradBytes)
// equals attnTcSmemBytes(H) (attnTcSmemBytes(H, true)), so the two cannot
// drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_ATTENTIONTC_H
#define XLNETC_RUNTIME_DEVICE_ATTENTIONTC_H

#include <cstdint>

namespace xlnetc::rt::dev {

constexpr int kAttnTcBlock = 128; ///< 4 warps
constexpr int kAttnTcRows = 64;   ///< query rows per tile (16 per warp)

/// Whether the tensor-core kernels take head size H (the mma's k is 16;
/// larger heads would not fit its registers).
constexpr bool attnTcSupports(int64_t H) { return H > 0 && H % 16 == 0 && H <= 128; }

/// The dynamic shared memory of the forward (GRAD false) or of every phase
/// of the backward (XlAttnTcSmem<H>: kBytes, kGradBytes). Layout: the k and
/// v tiles (64 rows of H + 8 bf16), 64 rows of 40 bytes, the keys' segment
/// ids and ranks (64 i64 each), in the backward two [64][72] bf16 tiles,
/// then four warp regions: two (backward: three) [16][H + 8] bf16 query
/// tiles, an 80-row chunk of H + 8 bf16, its [16][84] f32 product and, in
/// the backward, a [16][88] bf16 chunk of c.
constexpr int64_t attnTcSmemBytes(int64_t H, bool grad = false) {
  const int64_t ld = H + 8;
  const int64_t chunk = 80 * ld * 2, prod = 16 * 84 * 4;
  const int64_t head = 2 * 64 * ld * 2 + 64 * 40 + 64 * 16;
  if (!grad)
    return head + 4 * (2 * 16 * ld * 2 + chunk + prod);
  return head + 2 * 64 * 72 * 2 + 4 * (3 * 16 * ld * 2 + chunk + prod + 16 * 88 * 2);
}
static_assert(attnTcSmemBytes(64) == 108032, "the figure the docs quote");
static_assert(attnTcSmemBytes(64, true) == 146944, "the figure the docs quote");

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_ATTENTIONTC_H
