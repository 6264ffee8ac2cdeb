//===- Plot.h - The loss curve of a training run ---------------*- C++ -*-===//
//
// Draws loss vs step from the metrics log (Metrics.h) into a PNG with
// gnuplot. gnuplot is run directly (posix_spawn, no shell); the script goes
// to its stdin and the PNG comes back on its stdout into a temporary file
// that is renamed over the target once gnuplot succeeded, so no path ever
// appears in the gnuplot script and a failed plot never leaves a broken PNG.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_PLOT_H
#define XLNETC_RUNTIME_TRAIN_PLOT_H

#include "runtime/Status.h"

#include <string>

namespace xlnetc::rt::train {

/// Plots the "loss" of each line of `metricsJsonl` against its "step" into
/// `pngPath` (raw loss and, from 10 points on, a moving average), and the
/// held-out losses ("eval_loss" of the eval events) as a second curve. Returns ok
/// with `warning` set (and no PNG written) when gnuplot is not installed or
/// there is nothing to plot; `warning` is cleared otherwise. Errors: the
/// metrics file cannot be read, gnuplot fails, the PNG cannot be written.
/// A trainer should report an error as a warning: the plot is a by-product.
Status plotLossCurve(const std::string &metricsJsonl,
                     const std::string &pngPath, std::string &warning);

/// Full path of `name` found on $PATH (executable regular file); empty when
/// there is none.
std::string findExecutable(const std::string &name);

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_PLOT_H
