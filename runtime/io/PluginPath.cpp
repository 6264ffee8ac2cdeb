//===- PluginPath.cpp - Where a dlopen'd plugin of xlnetc is --------------===//

#include "runtime/io/PluginPath.h"

#include <cstdlib>
#include <filesystem>

namespace xlnetc::rt {

std::vector<std::string> pluginCandidates(const char *envVar, const std::string &fileName) {
  if (const char *env = std::getenv(envVar); env && *env)
    return {env};
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / fileName).string());
    out.push_back((exe.parent_path().parent_path() / "lib" / fileName).string());
  }
  out.push_back(fileName);
  return out;
}

} // namespace xlnetc::rt
