//===- Safetensors.cpp - Reading and writing .safetensors files -----------===//

#include "runtime/io/Safetensors.h"

#include "runtime/io/InputFile.h"
#include "runtime/io/SafetensorsHeader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <tuple>
#include <vector>
#include <unistd.h>

namespace xlnetc::rt {

using nlohmann::json;

namespace {

/// Upper bound on a header we are willing to parse (100 MiB, as upstream).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

uint64_t readLE64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

/// Parses one header entry `name` into `t` and its data range.
Status parseEntry(const std::string &name, const json &entry, Tensor &t,
                  uint64_t &begin, uint64_t &end, uint64_t dataSize) {
  if (!entry.is_object())
    return Status::error(fmt::format("tensor '{}': entry is not an object",
                                     name));
  auto dt = entry.find("dtype");
  if (dt == entry.end() || !dt->is_string())
    return Status::error(
        fmt::format("tensor '{}': missing or non-string 'dtype'", name));
  std::optional<DType> dtype = parseSafetensorsDType(dt->get<std::string>());
  if (!dtype)
    return Status::error(fmt::format(
        "tensor '{}': unsupported dtype '{}' (supported: F32, I64, BOOL)", name,
        dt->get<std::string>()));
  auto sh = entry.find("shape");
  if (sh == entry.end() || !sh->is_array())
    return Status::error(
        fmt::format("tensor '{}': missing or non-array 'shape'", name));
  std::vector<int64_t> shape;
  // Element count, checked so that a huge shape cannot overflow.
  uint64_t numel = 1;
  for (const json &d : *sh) {
    if (!d.is_number_unsigned())
      return Status::error(fmt::format(
          "tensor '{}': shape entry {} is not a non-negative integer", name,
          d.dump()));
    uint64_t dim = d.get<uint64_t>();
    if (dim != 0 && numel > (uint64_t(1) << 60) / dim)
      return Status::error(fmt::format("tensor '{}': shape {} is too large",
                                       name, sh->dump()));
    numel *= dim;
    shape.push_back(int64_t(dim));
  }
  uint64_t bytes = numel * dtypeSize(*dtype);
  auto off = entry.find("data_offsets");
  if (off == entry.end() || !off->is_array() || off->size() != 2 ||
      !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
    return Status::error(fmt::format(
        "tensor '{}': missing or malformed 'data_offsets' (want [begin, end])",
        name));
  begin = (*off)[0].get<uint64_t>();
  end = (*off)[1].get<uint64_t>();
  if (begin > end || end > dataSize)
    return Status::error(fmt::format(
        "tensor '{}': data_offsets [{}, {}] out of range (data section has {} "
        "bytes)",
        name, begin, end, dataSize));
  if (end - begin != bytes)
    return Status::error(fmt::format(
        "tensor '{}': data_offsets [{}, {}] span {} bytes but {}{} needs {}",
        name, begin, end, end - begin, dt->get<std::string>(), shapeStr(shape),
        bytes));
  t.dtype = *dtype;
  t.shape = std::move(shape);
  return Status::ok();
}

Status readImpl(const std::string &path, TensorMap &out,
                std::map<std::string, std::string> *metadata) {
  std::ifstream in;
  detail::SafetensorsHeader header;
  XLNETC_RETURN_IF_ERROR(detail::readSafetensorsHeader(path, in, header));
  const uint64_t dataStart = header.dataStart, dataSize = header.dataSize;
  // 1. Every entry, then the layout of them all, before any data is read.
  struct Entry {
    Tensor t;
    uint64_t begin = 0, end = 0;
  };
  std::map<std::string, Entry> entries;
  std::map<std::string, std::string> ignored;
  for (auto it = header.json.begin(); it != header.json.end(); ++it) {
    if (it.key() == "__metadata__") {
      XLNETC_RETURN_IF_ERROR(
          detail::readSafetensorsMetadata(*it, metadata ? *metadata : ignored));
      continue;
    }
    Entry &e = entries[it.key()];
    XLNETC_RETURN_IF_ERROR(parseEntry(it.key(), *it, e.t, e.begin, e.end, dataSize));
  }
  XLNETC_RETURN_IF_ERROR(detail::checkSafetensorsLayout(header.json, dataSize));
  // 2. The data.
  TensorMap loaded;
  for (auto &[name, e] : entries) {
    Tensor &t = e.t;
    t.storage.assign((e.end - e.begin + 7) / 8, 0);
    in.seekg(std::streamoff(dataStart + e.begin));
    in.read(reinterpret_cast<char *>(t.bytes()), std::streamsize(e.end - e.begin));
    if (!in)
      return Status::error(fmt::format("tensor '{}': short read of its data", name));
    loaded[name] = std::move(t);
  }
  for (auto &[name, t] : loaded)
    out[name] = std::move(t);
  return Status::ok();
}

void writeLE64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = (v >> (8 * i)) & 0xff;
}

} // namespace

Status detail::readSafetensorsHeader(const std::string &path, std::ifstream &in,
                                     SafetensorsHeader &out) {
  if (std::string kind = oddFileKind(path); !kind.empty())
    return Status::error(kind + ", not a regular file");
  in.open(path, std::ios::binary);
  if (!in)
    return Status::error(fmt::format("cannot open: {}", std::strerror(errno)));
  in.seekg(0, std::ios::end);
  uint64_t fileSize = uint64_t(in.tellg());
  in.seekg(0);
  if (fileSize < 8)
    return Status::error(fmt::format(
        "file has {} bytes, shorter than the 8-byte header length", fileSize));
  unsigned char lenBytes[8];
  in.read(reinterpret_cast<char *>(lenBytes), 8);
  uint64_t headerLen = readLE64(lenBytes);
  if (headerLen > fileSize - 8)
    return Status::error(fmt::format(
        "header length {} is larger than the rest of the file ({} bytes)",
        headerLen, fileSize - 8));
  if (headerLen > kMaxHeaderBytes)
    return Status::error(
        fmt::format("header length {} exceeds the 100 MiB limit", headerLen));
  std::string headerText(headerLen, '\0');
  in.read(headerText.data(), std::streamsize(headerLen));
  if (!in)
    return Status::error("short read in the header");
  // JSON keeps one value per key; the format forbids a name twice, so the
  // parser's key events are counted.
  std::set<std::string> names;
  std::string duplicate;
  json::parser_callback_t onKey = [&](int depth, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::key && depth == 1 && parsed.is_string() &&
        !names.insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  out.json = json::parse(headerText, onKey, /*allow_exceptions=*/false);
  if (out.json.is_discarded())
    return Status::error("header is not valid JSON");
  if (!out.json.is_object())
    return Status::error("header JSON is not an object");
  if (!duplicate.empty())
    return Status::error(fmt::format("the header names '{}' twice (the format allows "
                                     "each name once)",
                                     duplicate));
  out.dataStart = 8 + headerLen;
  out.dataSize = fileSize - out.dataStart;
  return Status::ok();
}

Status detail::checkSafetensorsLayout(const json &header, uint64_t dataSize) {
  struct Region {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Region> regions;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__" || !it->is_object())
      continue;
    auto off = it->find("data_offsets");
    if (off == it->end() || !off->is_array() || off->size() != 2 ||
        !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
      continue; // the entry's own check names it
    regions.push_back({(*off)[0].get<uint64_t>(), (*off)[1].get<uint64_t>(), it.key()});
  }
  std::sort(regions.begin(), regions.end(), [](const Region &a, const Region &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  // The tensors must tile the data section, as upstream checks it: in offset
  // order each begins where the one before ends, from 0 to its end.
  uint64_t at = 0;
  const Region *previous = nullptr;
  for (const Region &r : regions) {
    if (r.begin < at)
      return Status::error(fmt::format(
          "tensors '{}' and '{}' overlap: data_offsets [{}, {}] and [{}, {}] (the format "
          "forbids overlapping data)",
          previous->name, r.name, previous->begin, previous->end, r.begin, r.end));
    if (r.begin > at)
      return Status::error(fmt::format(
          "bytes [{}, {}) of the data section belong to no tensor (before '{}'; the format "
          "requires the tensors' data to be contiguous)",
          at, r.begin, r.name));
    at = r.end;
    previous = &r;
  }
  if (at < dataSize)
    return Status::error(fmt::format(
        "bytes [{}, {}) at the end of the data section belong to no tensor (the format "
        "requires the tensors' data to cover it)",
        at, dataSize));
  return Status::ok();
}

Status detail::readSafetensorsMetadata(const json &value,
                                       std::map<std::string, std::string> &metadata) {
  if (!value.is_object())
    return Status::error("'__metadata__' is not an object");
  for (auto m = value.begin(); m != value.end(); ++m)
    metadata[m.key()] = m->is_string() ? m->get<std::string>() : m->dump();
  return Status::ok();
}

Status readSafetensors(const std::string &path, TensorMap &out,
                       std::map<std::string, std::string> *metadata) {
  return readImpl(path, out, metadata).withPrefix(path + ": ");
}

Status writeSafetensors(const std::string &path, const TensorMap &tensors,
                        const std::map<std::string, std::string> &metadata) {
  // 1. Header: offsets in sorted-name order (std::map iterates sorted).
  json header = json::object();
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    if (name == "__metadata__")
      return Status::error(path + ": '__metadata__' is not a tensor name");
    if (t.capacityBytes() < t.nbytes())
      return Status::error(fmt::format(
          "{}: tensor '{}' ({}) has too little storage", path, name,
          t.typeStr()));
    json entry = json::object();
    entry["dtype"] = dtypeSafetensorsName(t.dtype);
    entry["shape"] = t.shape;
    entry["data_offsets"] = {offset, offset + t.nbytes()};
    header[name] = std::move(entry);
    offset += t.nbytes();
  }
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::string headerText = header.dump();
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  // 2. Write to a temporary file, then rename over the target.
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
    if (!os)
      return Status::error(fmt::format("{}: cannot create {}: {}", path, tmp,
                                       std::strerror(errno)));
    unsigned char lenBytes[8];
    writeLE64(lenBytes, headerText.size());
    os.write(reinterpret_cast<const char *>(lenBytes), 8);
    os.write(headerText.data(), std::streamsize(headerText.size()));
    for (const auto &[name, t] : tensors)
      os.write(reinterpret_cast<const char *>(t.bytes()),
               std::streamsize(t.nbytes()));
    os.flush();
    if (!os) {
      os.close();
      std::remove(tmp.c_str());
      return Status::error(
          fmt::format("{}: write to {} failed", path, tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return Status::error(fmt::format("{}: cannot rename {} into place: {}",
                                     path, tmp, std::strerror(err)));
  }
  return Status::ok();
}

} // namespace xlnetc::rt
