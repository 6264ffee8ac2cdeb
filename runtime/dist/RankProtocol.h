//===- RankProtocol.h - A data-parallel run's rows and exchanges -*- C++ -*-===//
//
// A data-parallel run (docs/Distributed.md) is N processes of one model.
// Every rank builds the same global batch stream (the 1-process pipeline,
// same seed) and keeps its own rows of it: rank r owns the same rows every
// step, so its Transformer-XL memory stays with them. With bi_data a
// rank's rows are a bi_data batch of their own, as the official
// create_pretraining_data.py arranges them per core: the first half
// forward rows, the second half their backward copies. The parameters
// and moments are the same on every rank; checkpoints hold the global
// memory in the 1-process row order, so a checkpoint is the same file
// whatever N wrote it. The small exchanges by which the ranks agree
// (settings, setup, start, token counts, losses, a stop) are the protocol
// every rank follows in step; xlnetc/Driver/Train.cpp calls them.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DIST_RANKPROTOCOL_H
#define XLNETC_RUNTIME_DIST_RANKPROTOCOL_H

#include "runtime/Tensor.h"
#include "runtime/dist/Transport.h"
#include "runtime/host/DropoutHash.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt::dist {

struct RowSplit {
  int rank = 0, size = 1;
  int64_t globalBatch = 0, localBatch = 0;
  bool biData = false;

  /// Splits `globalBatch` rows over `size` ranks; an error (in the spec's
  /// terms) when they do not divide evenly.
  static rt::Status make(int rank, int size, int64_t globalBatch, bool biData,
                         RowSplit &out);
  /// The global row of this rank's local row j.
  int64_t globalRow(int64_t j) const;
  /// This rank's rows of `t`, whose dimension `dim` is the batch.
  rt::Status slice(const rt::Tensor &t, int dim, rt::Tensor &out) const;
  /// This rank's rows `local` put back at their places in `global` (a
  /// whole batch, dimension `dim` the batch; the inverse of slice).
  rt::Status place(const rt::Tensor &local, int dim, rt::Tensor &global) const;
  /// Every rank's rows of `local` (dimension `dim` the batch) put back in
  /// global order: an all-gather; every rank gets the result.
  rt::Status gather(rt::dist::Transport &world, const rt::Tensor &local, int dim,
                    rt::Tensor &global) const;

private:
  /// Copies this rank's rows from its local block to their places in the
  /// global one (`toGlobal`) or back, `outer` blocks of rows of `rowBytes`.
  void copyRows(const uint8_t *from, uint8_t *to, int64_t outer, int64_t rowBytes,
                bool toGlobal) const;
};

/// The dropout masks' map (host/DropoutHash.h) of a step that runs `part`
/// of `rank`'s rows: `part` splits rank.localBatch (its rank k: micro-batch
/// k; a split of size 1: all of them), and the step's local row j is global
/// row rank.globalRow(part.globalRow(j)). So a rank or micro-batch draws the
/// masks its rows have in the whole batch, however the batch is split.
rt::host::DropoutRows dropoutRows(const RowSplit &rank, const RowSplit &part);

/// The small exchanges of a data-parallel run, by what they are for. Each
/// carries its kind and a running count, so ranks that have fallen out of
/// step (one in the loss exchange, another in the parameter check) say so,
/// naming both, instead of reading each other's numbers.
enum class Exchange : uint64_t {
  Settings = 1,
  Setup,
  Start,
  TokenCounts,
  Loss,
  Stop,
  StopCheckpoint,
  ParameterCheck,
  EvalLoss,
  EvalTokens,
};
const char *exchangeName(Exchange what);

/// Every rank's `value` in exchange `what`, by rank; an error, the same on
/// every rank, when the ranks are not all in the same exchange.
rt::Status exchange64(rt::dist::Transport &world, Exchange what, uint64_t value,
                      std::vector<uint64_t> &out);

/// Before anything else: every rank must run with the same settings (the
/// resolved spec and every flag that changes what a rank does), as
/// (key, value) pairs in one order; an error, on every rank, names the first
/// key whose value differs between rank 0 and the first rank that differs,
/// and both values.
rt::Status checkSameSettings(rt::dist::Transport &world,
                             const std::vector<std::pair<std::string, std::string>> &settings);

/// FNV-1a over the tensors' bytes, in name order (the parameter check).
uint64_t hashTensors(const rt::TensorMap &tensors);

/// Every rank's `hash` must equal rank 0's; otherwise an error naming the
/// first rank that differs and `step`.
rt::Status checkSameOnEveryRank(rt::dist::Transport &world, uint64_t hash, int64_t step);

/// Every rank must run the same step on the same kind of device (`auto`
/// resolves per rank): `setup` describes this rank's ("host, batch 2, 195
/// plan steps, ..."); an error, on every rank, names the first rank whose
/// setup differs from rank 0's and this rank's own.
rt::Status checkSameSetup(rt::dist::Transport &world, const std::string &setup);

/// Before the first step: every rank must read the same batches and start
/// from the same parameters. `start` describes this rank's (its corpus's
/// fingerprint, the step and the parameters' hash); an error, on every
/// rank, names the first rank that differs from rank 0 and this rank's own.
rt::Status checkSameStart(rt::dist::Transport &world, const std::string &start);

/// Every rank's `value` in exchange `what` (exchange64), by rank.
rt::Status gatherDoubles(rt::dist::Transport &world, Exchange what, double value,
                         std::vector<double> &out);

} // namespace xlnetc::rt::dist

#endif // XLNETC_RUNTIME_DIST_RANKPROTOCOL_H
