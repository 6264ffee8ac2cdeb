//===- ResumeSettings.cpp - A resume trains the run it resumes ------------===//

#include "xlnetc/Driver/ResumeSettings.h"

#include <fmt/format.h>

#include <algorithm>

namespace xlnetc {
namespace {

/// "a, b and c".
std::string listOf(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

std::string joined(const std::vector<std::string> &items, const char *separator) {
  std::string out;
  for (const std::string &item : items)
    out += (out.empty() ? "" : separator) + item;
  return out;
}

} // namespace

rt::Status checkResumeSettings(const ModelSpec &kept, const ModelSpec &resolved,
                               const std::vector<std::string> &overrides,
                               const std::string &keptPath, const std::string &specName,
                               std::vector<SpecChange> &accepted) {
  accepted.clear();
  const std::vector<SpecChange> changes = specChanges(kept, resolved);
  auto changeOf = [&](const std::string &key) {
    return std::find_if(changes.begin(), changes.end(),
                        [&](const SpecChange &c) { return c.key == key; });
  };

  // 1. Every --override names a key whose value this spec changes: a typo
  //    or a stale flag is caught rather than ignored.
  std::vector<std::string> badOverrides;
  for (const std::string &key : overrides) {
    std::string suggestion;
    const auto change = changeOf(key);
    if (key.empty())
      badOverrides.push_back("'': an empty key name");
    else if (!isSpecKey(key, suggestion))
      badOverrides.push_back(fmt::format(
          "{}: no such spec key{}", key,
          suggestion.empty() ? "" : fmt::format(" (did you mean {}?)", suggestion)));
    else if (change == changes.end())
      badOverrides.push_back(fmt::format(
          "{}: {} has the same value in {} as in the run's {}, so there is nothing to "
          "override",
          key, key, specName, keptPath));
    else if (change->rule == ResumeRule::Free)
      badOverrides.push_back(fmt::format("{}: a resume takes another {} as it is (it says "
                                         "where the step runs, not what it computes)",
                                         key, key));
  }
  if (!badOverrides.empty())
    return rt::Status::error("--override " + joined(badOverrides, "; --override "));

  // 2. Every change is a training setting that --override names.
  std::vector<std::string> refused, fixedKeys, unnamedKeys;
  for (const SpecChange &c : changes) {
    if (c.rule == ResumeRule::Free)
      continue;
    const bool named = std::find(overrides.begin(), overrides.end(), c.key) != overrides.end();
    if (c.rule == ResumeRule::Override && named) {
      accepted.push_back(c);
      continue;
    }
    std::string entry = fmt::format("{}: {} -> {}", c.key, c.oldValue, c.newValue);
    if (c.rule == ResumeRule::Fixed) {
      entry += fmt::format(" (fixed by {})", c.fixedBy);
      fixedKeys.push_back(c.key);
    } else {
      unnamedKeys.push_back(c.key);
    }
    refused.push_back(std::move(entry));
  }
  if (refused.empty())
    return rt::Status::ok();
  accepted.clear();
  std::vector<std::string> ways;
  if (!fixedKeys.empty())
    ways.push_back(fmt::format(
        "{} cannot change in a resumed run: train {} in a new run (another --out)",
        listOf(fixedKeys), fixedKeys.size() == 1 ? "the new value" : "the new values"));
  if (!unnamedKeys.empty())
    ways.push_back(fmt::format(
        "{}pass --override {} to train on with the {}new value{} (the run's spec.toml and "
        "metrics.jsonl record the change)",
        fixedKeys.empty() ? "" : fmt::format("with {} as before, ", listOf(fixedKeys)),
        joined(unnamedKeys, ","), fixedKeys.empty() ? "" : "other ",
        unnamedKeys.size() == 1 ? "" : "s"));
  ways.push_back(fmt::format("resume with the run's own values ({} is a spec)", keptPath));
  return rt::Status::error(fmt::format(
      "--resume: {} setting{} of {} differ{} from the run's ({}): {}; {}", refused.size(),
      refused.size() == 1 ? "" : "s", specName, refused.size() == 1 ? "s" : "", keptPath,
      joined(refused, ", "), joined(ways, "; or ")));
}

} // namespace xlnetc
