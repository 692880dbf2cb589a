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

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += {t[n >> 18], t[(n >> 12) & 63], t[(n >> 6) & 63], t[n & 63]};
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    out += {t[n >> 18], t[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += {t[n >> 18], t[(n >> 12) & 63], t[(n >> 6) & 63], '='};
  }
  return out;
}

// map<string, string|bytes> fields: repeated {key = 1, value = 2}.
json string_map(const Fields& f, int n, bool bytes) {
  json out = json::object();
  for (auto [it, end] = f.equal_range(n); it != end; ++it) {
    Fields entry;
    if (!parse(it->second, entry)) continue;
    std::string value = first(entry, 2);
    out[first(entry, 1)] = bytes ? base64(value) : value;
  }
  return out;
}

json object_meta(const std::string& raw) {
  Fields m;
  parse(raw, m);
  json meta = json::object();
  const std::pair<int, const char*> strings[] = {{1, "name"}, {2, "generateName"}, {3, "namespace"},
                                                 {6, "resourceVersion"}};
  for (const auto& [n, key] : strings)
    if (!first(m, n).empty()) meta[key] = first(m, n);
  json labels = string_map(m, 11, false), annotations = string_map(m, 12, false);
  if (!labels.empty()) meta["labels"] = labels;
  if (!annotations.empty()) meta["annotations"] = annotations;
  json finalizers = json::array();
  for (auto [it, end] = m.equal_range(14); it != end; ++it) finalizers.push_back(it->second);
  if (!finalizers.empty()) meta["finalizers"] = finalizers;
  return meta;
}

}  // namespace

bool decode_object_protobuf(const std::string& body, json& out, std::string& error) {
  Fields unknown, type_meta, obj;
  if (body.size() < 4 || body.compare(0, 4, std::string("k8s\0", 4)) != 0 ||
      !parse(std::string_view(body).substr(4), unknown) || !parse(first(unknown, 1), type_meta) ||
      !parse(first(unknown, 2), obj)) {
    error = "cannot decode the protobuf body";
    return false;
  }
  std::string api_version = first(type_meta, 1), kind = first(type_meta, 2);
  out = {{"apiVersion", api_version}, {"kind", kind}, {"metadata", object_meta(first(obj, 1))}};
  auto flag = [&](int n, const char* key) {
    if (first(obj, n) == "1") out[key] = true;
  };
  if (api_version == "v1" && kind == "Namespace") {
    Fields spec;
    parse(first(obj, 2), spec);
    json finalizers = json::array();
    for (auto [it, end] = spec.equal_range(1); it != end; ++it) finalizers.push_back(it->second);
    if (!finalizers.empty()) out["spec"] = {{"finalizers", finalizers}};
  } else if (api_version == "v1" && kind == "ConfigMap") {
    json data = string_map(obj, 2, false), binary = string_map(obj, 3, true);
    if (!data.empty()) out["data"] = data;
    if (!binary.empty()) out["binaryData"] = binary;
    flag(4, "immutable");
  } else if (api_version == "v1" && kind == "Secret") {
    json data = string_map(obj, 2, true), string_data = string_map(obj, 4, false);
    if (!data.empty()) out["data"] = data;
    if (!string_data.empty()) out["stringData"] = string_data;
    if (!first(obj, 3).empty()) out["type"] = first(obj, 3);
    flag(5, "immutable");
  } else {
    error = "the simulator reads protobuf bodies of Namespaces, ConfigMaps and Secrets only, not " +
            (kind.empty() ? std::string("this object") : kind) + "; send JSON";
    return false;
  }
  return true;
}

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
