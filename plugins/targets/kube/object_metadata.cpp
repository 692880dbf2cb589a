#include "plugins/targets/kube/object_metadata.hpp"

#include <optional>

#include <nlohmann/json.hpp>

namespace emco::kube {

namespace {

using json = nlohmann::json;

// Building the whole object was most of the cost of reading a write's answer
// in a fan-out to many clusters (its managedFields are most of it); a SAX
// pass keeps only the three fields. Depth 1: the top-level object's members;
// depth 2: the members of its "metadata" object.
class MetadataReader final : public nlohmann::json_sax<json> {
public:
  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  // Beyond long long, still an integer to a parsed value, whose get<long long>() wraps it.
  bool number_unsigned(number_unsigned_t v) override { return scalar(static_cast<long long>(v)); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }
  bool string(string_t& v) override {
    if (!in_metadata_member()) return scalar();
    clear_member();
    if (m_member == "resourceVersion") m_fields.resource_version = std::move(v);
    else if (m_member == "uid") m_fields.uid = std::move(v);
    return true;
  }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (m_depth == 1) {
      m_in_metadata = k == "metadata";
      if (m_in_metadata) m_fields = {};  // a later "metadata" replaces an earlier one
    } else if (m_depth == 2) {
      m_member = std::move(k);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  ObjectMetadata result() && { return m_top_is_object ? std::move(m_fields) : ObjectMetadata{}; }

private:
  bool in_metadata_member() const { return m_depth == 2 && m_in_metadata && m_metadata_is_object; }
  bool metadata_value() const { return m_depth == 1 && m_in_metadata; }

  void clear_member() {
    if (m_member == "resourceVersion") m_fields.resource_version.clear();
    else if (m_member == "uid") m_fields.uid.clear();
    else if (m_member == "generation") m_fields.generation = 0;
  }
  // A value other than a string; `integer` if it is one. (key() has emptied
  // the fields when a "metadata" member begins.)
  bool scalar(std::optional<long long> integer = {}) {
    if (m_depth == 0) m_top_is_object = false;
    if (metadata_value()) m_metadata_is_object = false;
    if (in_metadata_member()) {
      clear_member();
      if (integer && m_member == "generation") m_fields.generation = *integer;
    }
    return true;
  }
  bool open(bool object) {
    if (m_depth == 0) m_top_is_object = object;
    if (in_metadata_member()) clear_member();
    if (metadata_value()) m_metadata_is_object = object;
    ++m_depth;
    return true;
  }
  bool close() {
    --m_depth;
    return true;
  }

  ObjectMetadata m_fields;
  std::string m_member;  // the metadata member being read (depth 2)
  int m_depth = 0;
  bool m_top_is_object = false;
  bool m_in_metadata = false;        // the top-level member being read is "metadata"
  bool m_metadata_is_object = false;  // ... and its value is an object
};

}  // namespace

ObjectMetadata read_object_metadata(std::string_view body) {
  MetadataReader reader;
  if (!json::sax_parse(body, &reader)) return {};
  return std::move(reader).result();
}

}  // namespace emco::kube
