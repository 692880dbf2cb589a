#include "plugins/sim/protobuf.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/util/strings.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

// One message's fields: number -> values (length-delimited bytes or the
// decimal text of a varint).
using Fields = std::multimap<int, std::string>;

bool varint(std::string_view& in, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    auto b = static_cast<unsigned char>(in[0]);
    in.remove_prefix(1);
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

bool parse(std::string_view in, Fields& out) {
  while (!in.empty()) {
    uint64_t key;
    if (!varint(in, key)) return false;
    int field = static_cast<int>(key >> 3);
    switch (key & 7) {
      case 0: {
        uint64_t v;
        if (!varint(in, v)) return false;
        out.emplace(field, std::to_string(v));
        break;
      }
      case 1:
        if (in.size() < 8) return false;
        in.remove_prefix(8);
        break;
      case 2: {
        uint64_t len;
        if (!varint(in, len) || len > in.size()) return false;
        out.emplace(field, std::string(in.substr(0, len)));
        in.remove_prefix(len);
        break;
      }
      case 5:
        if (in.size() < 4) return false;
        in.remove_prefix(4);
        break;
      default:
        return false;
    }
  }
  return true;
}

std::string first(const Fields& f, int n) {
  auto it = f.find(n);
  return it == f.end() ? std::string() : it->second;
}

}  // namespace

bool decode_csr_protobuf(const std::string& body, json& out, std::string& error) {
  if (body.size() < 4 || body.compare(0, 4, std::string("k8s\0", 4)) != 0) {
    error = "protobuf body without the k8s envelope";
    return false;
  }
  Fields unknown, csr, meta, status;
  if (!parse(std::string_view(body).substr(4), unknown) || !parse(first(unknown, 2), csr) ||
      !parse(first(csr, 1), meta) || !parse(first(csr, 3), status)) {
    error = "cannot decode the protobuf body";
    return false;
  }
  Fields type_meta;
  parse(first(unknown, 1), type_meta);
  if (first(type_meta, 2) != "CertificateSigningRequest") {
    error = "protobuf bodies are supported for CertificateSigningRequest approval only";
    return false;
  }
  json conditions = json::array();
  for (auto [it, end] = status.equal_range(1); it != end; ++it) {
    Fields c;
    if (!parse(it->second, c)) continue;
    json cond = {{"type", first(c, 1)}, {"status", first(c, 6)}};
    if (!first(c, 2).empty()) cond["reason"] = first(c, 2);
    if (!first(c, 3).empty()) cond["message"] = first(c, 3);
    conditions.push_back(cond);
  }
  out = {{"metadata", {{"name", first(meta, 1)}}}, {"status", {{"conditions", conditions}}}};
  if (!first(meta, 6).empty()) out["metadata"]["resourceVersion"] = first(meta, 6);
  return true;
}

}  // namespace emco::sim::detail
