#include "core/store/plan_codec.hpp"

#include <cstring>

#include "core/util/error.hpp"

namespace emco::store {

namespace {
constexpr std::string_view k_magic = "EPL1";
}

PlanWriter::PlanWriter() : m_out(k_magic) {}

void PlanWriter::put_u32(uint32_t v) {
  char b[4] = {static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff), static_cast<char>((v >> 16) & 0xff),
               static_cast<char>((v >> 24) & 0xff)};
  m_out.append(b, 4);
}

void PlanWriter::put_str(std::string_view s) {
  put_u32(static_cast<uint32_t>(s.size()));
  m_out.append(s);
}

void PlanWriter::cluster(std::string_view name, int group) {
  m_out.push_back('C');
  put_u32(static_cast<uint32_t>(group));
  put_str(name);
}

void PlanWriter::resource(std::string_view hook, std::string_view name, std::string_view hash) {
  m_out.push_back('R');
  put_str(hook);
  put_str(name);
  put_str(hash);
}

std::string PlanWriter::finish() {
  m_out.push_back('E');
  std::string out = std::move(m_out);
  m_out = std::string(k_magic);
  return out;
}

PlanReader::PlanReader(std::string_view data, std::string_view what) : m_data(data), m_what(what) {
  if (m_data.substr(0, k_magic.size()) != k_magic) malformed();
  m_pos = k_magic.size();
}

void PlanReader::malformed() const {
  fail(ErrorKind::internal, "the stored plan of " + m_what + " is malformed at byte " + std::to_string(m_pos),
       "the workspace database is damaged; restore it from a backup");
}

uint32_t PlanReader::get_u32() {
  if (m_data.size() - m_pos < 4) malformed();
  const auto* p = reinterpret_cast<const unsigned char*>(m_data.data() + m_pos);
  m_pos += 4;
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

std::string_view PlanReader::get_str() {
  uint32_t n = get_u32();
  if (m_data.size() - m_pos < n) malformed();
  std::string_view s = m_data.substr(m_pos, n);
  m_pos += n;
  return s;
}

PlanReader::Item PlanReader::next() {
  if (m_pos == m_data.size()) malformed();
  char tag = m_data[m_pos++];
  if (tag == 'E' && m_pos == m_data.size()) {
    --m_pos;  // stays at the end mark: next() keeps returning end
    return Item::end;
  }
  if (tag == 'C') {
    m_group = static_cast<int>(get_u32());
    m_name = get_str();
    m_in_cluster = true;
    return Item::cluster;
  }
  if (tag == 'R' && m_in_cluster) {
    m_hook = get_str();
    m_name = get_str();
    m_hash = get_str();
    return Item::resource;
  }
  --m_pos;
  malformed();
}

}  // namespace emco::store
