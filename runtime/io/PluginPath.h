//===- PluginPath.h - Where a dlopen'd plugin of xlnetc is ------*- C++ -*-===//
//
// The runtime's optional pieces (libxlnetc-mpi.so, libxlnetc-tensorboard.so)
// are shared libraries loaded with dlopen only when asked for, so xlnetc and
// xlnetc-run start where their dependencies are missing. One search order
// for all of them.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_IO_PLUGINPATH_H
#define XLNETC_RUNTIME_IO_PLUGINPATH_H

#include <string>
#include <vector>

namespace xlnetc::rt {

/// The paths to try for plugin `fileName`: $`envVar` alone when it is set,
/// else beside the executable, ../lib from it, and the loader's search path.
std::vector<std::string> pluginCandidates(const char *envVar, const std::string &fileName);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_IO_PLUGINPATH_H
