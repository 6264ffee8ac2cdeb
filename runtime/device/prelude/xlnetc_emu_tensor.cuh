//===- xlnetc_emu_tensor.cuh - Emulated mma, ldmatrix, cp.async -----------===//
//
// Host implementations of the prelude's tensor-core and async-copy functions,
// with the register fragment layouts of the PTX ISA ("Matrix fragments for
// mma.m16n8k16 with floating point type", "ldmatrix"). Included at the end
// of xlnetc_emu.cuh. Notation: lane = %laneid, g = lane >> 2 (groupID),
// t = lane & 3 (threadID_in_group). A 32-bit register holding two 16-bit
// elements keeps the lower-indexed one in bits 0-15.
//
// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32, D = A*B + C
//   A (16x16, row) regs a0..a3: a0 = A[g][2t..2t+1]     a1 = A[g+8][2t..2t+1]
//                                a2 = A[g][2t+8..2t+9]  a3 = A[g+8][2t+8..2t+9]
//   B (16x8, col)  regs b0..b1: b0 = B[2t..2t+1][g]     b1 = B[2t+8..2t+9][g]
//   C, D (16x8 f32), c0..c3:    c0,c1 = C[g][2t], C[g][2t+1]
//                               c2,c3 = C[g+8][2t], C[g+8][2t+1]
//   Products of bf16/f16 values are exact in double; each output is
//   fl32(c + sum_k a*b) with the sum in double (in k order). The tensor core
//   also forms the products exactly but adds with its own (truncating)
//   internal precision, so results can differ in the last bit or so;
//   integer-valued data, as in the layout tests, is exact on both.
//
// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16
//   Matrix i (8 rows of 8 16-bit elements, each row 16 contiguous bytes at a
//   16-byte aligned address) takes its row addresses from lanes 8i..8i+7
//   (row r from lane 8i+r); x1 reads lanes 0-7, x2 lanes 0-15. Register ri of
//   each lane: M_i[g][2t..2t+1]; with .trans: M_i[2t][g], M_i[2t+1][g].
//
// cp.async.cg.shared.global [dst], [src], 16 (, src_size)
//   A copy lands (reads its source and writes its destination, all at once)
//   at some point between its issue and the cp.async.wait_group<N> of the
//   issuing thread that retires its group, i.e. all but the N most recently
//   committed groups. As on the GPU, nothing else bounds it, and the schedule
//   picks the point:
//     forward  at the wait: as late as possible, so a read of the
//              destination or a write of the source before the wait sees
//              stale shared memory / changes what is copied;
//     reverse  at the issue: as early as possible, so the destination changes
//              under a kernel still reading it (a prefetch into a buffer in
//              use) and later writes of the source are not copied;
//     random   at a seeded coin flip (probability 1/2) at the issue, at every
//              switch point of the issuing thread (barrier, warp collective,
//              __nanosleep) and at every wait_group, and at the retiring wait
//              at the latest. Copies of one thread land in any order.
//   Copies issued after the last commit_group belong to no group: wait_group
//   does not retire them (a later commit adds them to the next group).
//   commit_group with nothing pending makes an empty group, as in PTX. Copies
//   still in flight when the thread exits are dropped.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_EMU_TENSOR_CUH
#define XLNETC_EMU_TENSOR_CUH

#include <cstdint>
#include <cstring>
#include <string>

#include "xlnetc_emu_builtins.cuh"
#include "xlnetc_emu_core.h"
#include "xlnetc_emu_numeric.h"

// Everything below is private to the kernel object that includes it (see
// xlnetc_emu.cuh, "Linking").
#pragma GCC visibility push(hidden)

namespace xl::emu {

//===----------------------------------------------------------------------===//
// mma.sync.m16n8k16
//===----------------------------------------------------------------------===//

struct MmaIn {
  u32 a[4];
  u32 b[2];
  float c[4];
};
static_assert(sizeof(MmaIn) <= kPayloadBytes, "mma operands do not fit");

template <bool IsBf16> inline double mmaElement(u32 reg, unsigned half) {
  unsigned short bits = static_cast<unsigned short>(half ? reg >> 16 : reg);
  return IsBf16 ? numeric::bf16BitsToFloat(bits)
                : numeric::f16BitsToFloat(bits);
}

/// Gathers A, B and C of the warp from the 32 lanes' fragments, multiplies,
/// and scatters D back into the lanes' fragments.
template <bool IsBf16> bool completeMma(Warp &warp, unsigned, std::string &) {
  double A[16][16], B[16][8], C[16][8];
  for (unsigned lane = 0; lane < 32; ++lane) {
    MmaIn in;
    std::memcpy(&in, warp.lanes[lane]->in, sizeof in);
    unsigned g = lane >> 2, t = lane & 3;
    for (unsigned r = 0; r < 4; ++r) {
      unsigned row = g + ((r & 1) ? 8 : 0), col = 2 * t + ((r & 2) ? 8 : 0);
      A[row][col] = mmaElement<IsBf16>(in.a[r], 0);
      A[row][col + 1] = mmaElement<IsBf16>(in.a[r], 1);
    }
    for (unsigned r = 0; r < 2; ++r) {
      unsigned k = 2 * t + (r ? 8 : 0);
      B[k][g] = mmaElement<IsBf16>(in.b[r], 0);
      B[k + 1][g] = mmaElement<IsBf16>(in.b[r], 1);
    }
    for (unsigned i = 0; i < 4; ++i)
      C[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)] = in.c[i];
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned g = lane >> 2, t = lane & 3;
    float d[4];
    for (unsigned i = 0; i < 4; ++i) {
      unsigned row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
      double sum = 0;
      for (unsigned k = 0; k < 16; ++k)
        sum += A[row][k] * B[k][col];
      d[i] = static_cast<float>(C[row][col] + sum);
    }
    std::memcpy(warp.lanes[lane]->out, d, sizeof d);
  }
  return true;
}

inline constexpr CollectiveOp kMmaBf16{"xl_mma_m16n8k16_bf16", true, true,
                                       &completeMma<true>};
inline constexpr CollectiveOp kMmaF16{"xl_mma_m16n8k16_f16", true, true,
                                      &completeMma<false>};

inline void mma(const CollectiveOp &op, float d[4], const u32 a[4],
                const u32 b[2], const float c[4], SrcLoc loc) {
  Thread &self = current();
  MmaIn in;
  std::memcpy(in.a, a, sizeof in.a);
  std::memcpy(in.b, b, sizeof in.b);
  std::memcpy(in.c, c, sizeof in.c);
  std::memcpy(self.in, &in, sizeof in);
  self.worker->warpCollective(self, op, ~0u, loc);
  std::memcpy(d, self.out, 4 * sizeof(float));
}

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

template <int NUM, bool TRANS>
bool completeLdmatrix(Warp &warp, unsigned, std::string &error) {
  const unsigned short *rows[32];
  for (unsigned lane = 0; lane < 8 * NUM; ++lane) {
    const void *p;
    std::memcpy(&p, warp.lanes[lane]->in, sizeof p);
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) {
      const Thread &t = *warp.lanes[lane];
      error = format("ldmatrix row address %p of thread %u in block %s is not "
                     "16-byte aligned (%s)",
                     p, t.linear, t.worker->blockName().c_str(),
                     formatLoc(t.loc).c_str());
      return false;
    }
    rows[lane] = static_cast<const unsigned short *>(p);
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned g = lane >> 2, t = lane & 3;
    u32 regs[4];
    for (unsigned m = 0; m < NUM; ++m) {
      const unsigned short *const *matrix = rows + 8 * m;
      unsigned short lo, hi;
      if (TRANS) {
        lo = matrix[2 * t][g];
        hi = matrix[2 * t + 1][g];
      } else {
        lo = matrix[g][2 * t];
        hi = matrix[g][2 * t + 1];
      }
      regs[m] = static_cast<u32>(lo) | (static_cast<u32>(hi) << 16);
    }
    std::memcpy(warp.lanes[lane]->out, regs, NUM * sizeof(u32));
  }
  return true;
}

template <int NUM, bool TRANS>
inline constexpr CollectiveOp kLdmatrix{
    NUM == 1   ? (TRANS ? "ldmatrix.x1.trans" : "ldmatrix.x1")
    : NUM == 2 ? (TRANS ? "ldmatrix.x2.trans" : "ldmatrix.x2")
               : (TRANS ? "ldmatrix.x4.trans" : "ldmatrix.x4"),
    true, true, &completeLdmatrix<NUM, TRANS>};

//===----------------------------------------------------------------------===//
// cp.async
//===----------------------------------------------------------------------===//

inline void cpAsync(void *dst, const void *src, unsigned srcBytes, SrcLoc loc) {
  if (srcBytes > 16) {
    recordKernelError(
        format("cp.async src-size %u exceeds the copy size 16", srcBytes), loc);
    abandonCurrent();
  }
  if (reinterpret_cast<uintptr_t>(dst) % 16 != 0 ||
      (srcBytes > 0 && reinterpret_cast<uintptr_t>(src) % 16 != 0)) {
    recordKernelError(
        format("cp.async addresses %p <- %p are not 16-byte aligned", dst, src),
        loc);
    abandonCurrent();
  }
  Thread &self = current();
  self.worker->issueCopy(self, AsyncCopy{dst, src, srcBytes, kUncommitted});
}

inline void cpAsyncCommit() {
  Thread &self = current();
  for (AsyncCopy &copy : self.copies)
    if (copy.group == kUncommitted)
      copy.group = self.committedGroups;
  ++self.committedGroups;
}

/// Lands the copies of every committed group except the `pending` most
/// recent ones (in issue order); the wait is a landing point for the others.
inline void cpAsyncWait(unsigned pending) {
  Thread &self = current();
  unsigned retire = self.committedGroups > pending
                        ? self.committedGroups - pending // groups [0, retire)
                        : 0;
  if (!self.copies.empty())
    self.worker->landCopies(self, retire);
}

} // namespace xl::emu

//===----------------------------------------------------------------------===//
// The prelude's functions (same names and signatures as on the GPU)
//===----------------------------------------------------------------------===//

/// D = A*B + C, m16n8k16, bf16 inputs, f32 accumulators (all 32 lanes).
inline void xl_mma_m16n8k16_bf16(float d[4], const u32 a[4], const u32 b[2],
                                 const float c[4], XLNETC_EMU_LOC) {
  ::xl::emu::mma(::xl::emu::kMmaBf16, d, a, b, c, XLNETC_EMU_HERE);
}
/// D = A*B + C, m16n8k16, f16 inputs, f32 accumulators (all 32 lanes).
inline void xl_mma_m16n8k16_f16(float d[4], const u32 a[4], const u32 b[2],
                                const float c[4], XLNETC_EMU_LOC) {
  ::xl::emu::mma(::xl::emu::kMmaF16, d, a, b, c, XLNETC_EMU_HERE);
}

/// ldmatrix.sync.aligned.m8n8.x{NUM}{.trans}.shared.b16 into r[0..NUM).
template <int NUM, bool TRANS = false>
inline void xl_ldmatrix(u32 *r, const void *smem_row, XLNETC_EMU_LOC) {
  static_assert(NUM == 1 || NUM == 2 || NUM == 4, "ldmatrix loads 1, 2 or 4");
  ::xl::emu::Thread &self = ::xl::emu::current();
  std::memcpy(self.in, &smem_row, sizeof smem_row);
  self.worker->warpCollective(self, ::xl::emu::kLdmatrix<NUM, TRANS>, ~0u,
                              XLNETC_EMU_HERE);
  std::memcpy(r, self.out, NUM * sizeof(u32));
}
inline void xl_ldmatrix_x1(u32 *r, const void *p, XLNETC_EMU_LOC) {
  xl_ldmatrix<1, false>(r, p, xlFile_, xlLine_);
}
inline void xl_ldmatrix_x2(u32 *r, const void *p, XLNETC_EMU_LOC) {
  xl_ldmatrix<2, false>(r, p, xlFile_, xlLine_);
}
inline void xl_ldmatrix_x4(u32 *r, const void *p, XLNETC_EMU_LOC) {
  xl_ldmatrix<4, false>(r, p, xlFile_, xlLine_);
}
inline void xl_ldmatrix_x1_trans(u32 *r, const void *p, XLNETC_EMU_LOC) {
  xl_ldmatrix<1, true>(r, p, xlFile_, xlLine_);
}
inline void xl_ldmatrix_x2_trans(u32 *r, const void *p, XLNETC_EMU_LOC) {
  xl_ldmatrix<2, true>(r, p, xlFile_, xlLine_);
}
inline void xl_ldmatrix_x4_trans(u32 *r, const void *p, XLNETC_EMU_LOC) {
  xl_ldmatrix<4, true>(r, p, xlFile_, xlLine_);
}

/// cp.async.cg.shared.global, 16 bytes.
inline void xl_cp_async_16(void *dst_smem, const void *src_gmem,
                           XLNETC_EMU_LOC) {
  ::xl::emu::cpAsync(dst_smem, src_gmem, 16, XLNETC_EMU_HERE);
}
/// cp.async with src-size: copies src_bytes (0..16) and zero-fills the rest
/// of the 16 (tails); src is not read when src_bytes is 0.
inline void xl_cp_async_16_zfill(void *dst_smem, const void *src_gmem,
                                 int src_bytes, XLNETC_EMU_LOC) {
  ::xl::emu::cpAsync(dst_smem, src_gmem,
                     src_bytes < 0 ? 0u : static_cast<unsigned>(src_bytes),
                     XLNETC_EMU_HERE);
}
/// cp.async.commit_group.
inline void xl_cp_async_commit() { ::xl::emu::cpAsyncCommit(); }
/// cp.async.wait_group N: all but the N most recent groups are complete.
template <int N> inline void xl_cp_async_wait() {
  static_assert(N >= 0, "wait_group takes a non-negative count");
  ::xl::emu::cpAsyncWait(static_cast<unsigned>(N));
}
/// cp.async.wait_all (= commit_group + wait_group 0).
inline void xl_cp_async_wait_all() {
  xl_cp_async_commit();
  xl_cp_async_wait<0>();
}

#pragma GCC visibility pop

#endif // XLNETC_EMU_TENSOR_CUH
