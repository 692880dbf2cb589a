#include "core/store/status_codec.hpp"

#include <cstdint>

namespace emco::store {

namespace {

constexpr char k_format = 1;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_bytes(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out += s;
}

// A field equal to the previous resource's costs one byte.
void put_field(std::string& out, std::string_view s, std::string_view previous) {
  if (s == previous) {
    out += '\0';
    return;
  }
  put_varint(out, s.size() + 1);
  out += s;
}

class Reader {
public:
  explicit Reader(std::string_view data) : m_data(data) {}
  bool at_end() const { return m_pos == m_data.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_end()) malformed();
      const auto b = static_cast<unsigned char>(m_data[m_pos++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    malformed();
  }
  std::string_view bytes(uint64_t n) {
    if (m_data.size() - m_pos < n) malformed();
    std::string_view s = m_data.substr(m_pos, n);
    m_pos += n;
    return s;
  }
  char byte() {
    if (at_end()) malformed();
    return m_data[m_pos++];
  }
  [[noreturn]] void malformed() const { throw MalformedStates{m_pos}; }

private:
  std::string_view m_data;
  size_t m_pos = 0;
};

}  // namespace

std::string encode_resource_states(const std::vector<ResourceStateView>& states) {
  std::string out;
  if (states.empty()) return out;
  out += k_format;
  const ResourceStateView* previous = nullptr;
  static const ResourceStateView none;
  for (const auto& s : states) {
    const ResourceStateView& p = previous ? *previous : none;
    put_bytes(out, s.resource);
    put_field(out, s.status, p.status);
    put_field(out, s.message, p.message);
    put_field(out, s.time, p.time);
    put_field(out, s.ready, p.ready);
    previous = &s;
  }
  return out;
}

void visit_resource_states(std::string_view data, const std::function<void(const ResourceStateView&)>& fn) {
  if (data.empty()) return;
  Reader r(data);
  if (r.byte() != k_format) r.malformed();
  ResourceStateView previous;
  bool first = true;
  while (!r.at_end()) {
    ResourceStateView s;
    s.resource = r.bytes(r.varint());
    for (auto field : {&ResourceStateView::status, &ResourceStateView::message, &ResourceStateView::time,
                       &ResourceStateView::ready}) {
      const uint64_t code = r.varint();
      s.*field = code == 0 ? previous.*field : r.bytes(code - 1);
    }
    if (!first && !(previous.resource < s.resource)) r.malformed();  // order and uniqueness, which lookups rely on
    fn(s);
    previous = s;
    first = false;
  }
}

}  // namespace emco::store
