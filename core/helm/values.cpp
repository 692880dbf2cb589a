#include "core/helm/values.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_set>

#include "core/util/semver.hpp"
#include "core/template/format.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::helm {
using tmpl::List;
using tmpl::Map;
using tmpl::Value;

namespace {

[[noreturn]] void set_error(const std::string& msg) { fail(ErrorKind::invalid, msg); }

std::string go_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// --- strvals ----------------------------------------------------------------------------

constexpr int k_max_nested_name_level = 30;
constexpr long k_max_index = 65536;

enum class Status { ok, eof };

class SetParser {
public:
  SetParser(std::string_view text, bool as_string) : m_text(text), m_as_string(as_string) {}

  void parse(Value& dest) {
    while (key(dest, 0) == Status::ok) {
    }
  }

private:
  struct Runes {
    std::string text;
    char last = 0;
    bool eof = false;
  };

  Runes runes_until(std::string_view stop) {
    Runes r;
    for (;;) {
      if (m_pos >= m_text.size()) {
        r.eof = true;
        return r;
      }
      char c = m_text[m_pos++];
      if (stop.find(c) != std::string_view::npos) {
        r.last = c;
        return r;
      }
      if (c == '\\') {
        if (m_pos >= m_text.size()) {
          r.eof = true;
          return r;
        }
        r.text += m_text[m_pos++];
      } else {
        r.text += c;
      }
    }
  }

  Value typed(const std::string& v) const {
    if (m_as_string) return Value(v);
    std::string lower = to_lower(v);
    if (lower == "true") return Value(true);
    if (lower == "false") return Value(false);
    if (lower == "null") return Value();
    if (v == "0") return Value::integer(0, tmpl::IntType::int64);
    if (!v.empty() && v[0] != '0') {
      // strconv.ParseInt(v, 10, 64): optional sign, decimal digits, in range.
      std::int64_t i = 0;
      const char* b = v.data();
      const char* e = v.data() + v.size();
      if (*b == '+') ++b;
      auto [ptr, ec] = std::from_chars(b, e, i);
      if (ec == std::errc() && ptr == e && b != e && !(v[0] == '+' && (b == e || *b == '-')))
        return Value::integer(i, tmpl::IntType::int64);
    }
    return Value(v);
  }

  static void set(Value& data, const std::string& key, Value val) {
    if (key.empty()) return;
    data.mutable_map()[key] = std::move(val);
  }

  static List set_index(List list, long index, Value val) {
    if (index < 0) set_error("negative " + std::to_string(index) + " index not allowed");
    if (index > k_max_index)
      set_error("index of " + std::to_string(index) + " is greater than maximum supported index of " +
                std::to_string(k_max_index));
    if (static_cast<long>(list.size()) <= index) list.resize(static_cast<size_t>(index) + 1);
    list[static_cast<size_t>(index)] = std::move(val);
    return list;
  }

  long key_index() {
    auto r = runes_until("]");
    if (r.eof) set_error("error parsing index: EOF");
    long i = 0;
    auto [ptr, ec] = std::from_chars(r.text.data(), r.text.data() + r.text.size(), i);
    if (r.text.empty() || ec != std::errc() || ptr != r.text.data() + r.text.size())
      set_error("error parsing index: strconv.Atoi: parsing " + go_quote(r.text) + ": invalid syntax");
    return i;
  }

  // Returns nullopt when the input is not a `{...}` list (nothing consumed), or an empty
  // optional-with-eof via `eof` when the input ended right after '='.
  std::optional<List> val_list(bool& eof) {
    eof = false;
    if (m_pos >= m_text.size()) {
      eof = true;
      return List{};
    }
    if (m_text[m_pos] != '{') return std::nullopt;
    ++m_pos;
    List list;
    for (;;) {
      auto r = runes_until(",}");
      if (r.eof) set_error("list must terminate with '}'");
      if (r.last == '}') {
        if (m_pos < m_text.size() && m_text[m_pos] == ',') ++m_pos;
        list.push_back(typed(r.text));
        return list;
      }
      list.push_back(typed(r.text));
    }
  }

  Status key(Value& data, int level) {
    auto r = runes_until("=[,.");
    if (r.eof) {
      if (r.text.empty()) return Status::eof;
      set_error("key " + go_quote(r.text) + " has no value");
    }
    const std::string& k = r.text;
    switch (r.last) {
      case '[': {
        long i = key_index();
        List list;
        if (const Value* existing = data.find(k)) {
          if (!existing->is_list())
            set_error("unable to parse key: interface conversion: interface {} is " + existing->go_type() +
                      ", not []interface {}");
          list = existing->as_list();
        }
        Status st = Status::ok;
        list = list_item(std::move(list), i, level, st);
        set(data, k, Value(std::move(list)));
        return st;
      }
      case '=': {
        bool eof = false;
        auto vl = val_list(eof);
        if (eof) {
          set(data, k, Value(""));
          return Status::eof;
        }
        if (vl) {
          set(data, k, Value(std::move(*vl)));
          return Status::ok;
        }
        auto v = runes_until(",");
        set(data, k, typed(v.text));
        return Status::ok;
      }
      case ',':
        set(data, k, Value(""));
        set_error("key " + go_quote(k) + " has no value (cannot end with ,)");
      case '.': {
        if (++level > k_max_nested_name_level)
          set_error("value name nested level is greater than maximum supported nested level of " +
                    std::to_string(k_max_nested_name_level));
        Value inner;
        if (const Value* existing = data.find(k)) {
          if (!existing->is_map())
            set_error("unable to parse key: interface conversion: interface {} is " + existing->go_type() +
                      ", not map[string]interface {}");
          inner = *existing;  // the same map: Go mutates it in place
        } else {
          inner = Value(Map{});
        }
        Status st = key(inner, level);
        if (st == Status::ok && inner.as_map().empty()) set_error("key map " + go_quote(k) + " has no value");
        if (!inner.as_map().empty()) set(data, k, inner);
        return st;
      }
      default:
        set_error("parse error: unexpected token");
    }
  }

  List list_item(List list, long i, int level, Status& st) {
    if (i < 0) set_error("negative " + std::to_string(i) + " index not allowed");
    auto r = runes_until("[.=");
    if (!r.text.empty()) set_error("unexpected data at end of array index: " + go_quote(r.text));
    if (r.eof) {
      st = Status::eof;
      return list;
    }
    switch (r.last) {
      case '=': {
        bool eof = false;
        auto vl = val_list(eof);
        if (eof) return set_index(std::move(list), i, Value(""));
        if (vl) return set_index(std::move(list), i, Value(std::move(*vl)));
        auto v = runes_until(",");
        return set_index(std::move(list), i, typed(v.text));
      }
      case '[': {
        long next = key_index();
        List current;
        if (static_cast<long>(list.size()) > i && !list[static_cast<size_t>(i)].is_null()) {
          const Value& existed = list[static_cast<size_t>(i)];
          if (!existed.is_list())
            set_error("unable to parse key: interface conversion: interface {} is " + existed.go_type() +
                      ", not []interface {}");
          current = existed.as_list();
        }
        Status inner_st = Status::ok;
        List nested = list_item(std::move(current), next, level, inner_st);
        if (inner_st == Status::eof) {
          st = Status::eof;
          return list;
        }
        return set_index(std::move(list), i, Value(std::move(nested)));
      }
      case '.': {
        Value inner = Value(Map{});
        if (static_cast<long>(list.size()) > i) {
          if (list[static_cast<size_t>(i)].is_map()) inner = list[static_cast<size_t>(i)];
          else list[static_cast<size_t>(i)] = inner;
        }
        Status inner_st = key(inner, level);
        if (inner_st == Status::eof) {
          st = Status::eof;
          return list;
        }
        return set_index(std::move(list), i, inner);
      }
      default:
        set_error("parse error: unexpected token");
    }
  }

  std::string_view m_text;
  bool m_as_string;
  size_t m_pos = 0;
};

// --- coalescing -------------------------------------------------------------------------
//
// Helm coalesces deep copies of the user's values and of every chart's values. Copying them all
// up front was ~6% of rendering a chart with subcharts, and most tables come through unchanged,
// so a Coalescer copies a table only when it is about to change one (copy on write): the result
// shares every table it did not change with its inputs, which are never modified.
//
// This gives Helm's result because, apart from the globals below, each table of Helm's copies
// ends up in at most one place of the result, so changing a copy of it in that place is what
// changing it in place would show. Helm's writes to the tables it coalesces from (`src[key] =
// nil` in coalesceTablesFullKey) are not copied either: those tables are discarded afterwards,
// so the writes only matter to the loop that follows them, which coalesce_tables reproduces.
//
// Globals: coalesceGlobals hands a subchart shallow copies of its parent's global tables, so
// the tables below them are shared by the parent's and the subchart's globals, and a subchart's
// global defaults added to them show in its parent and in the subcharts after it. A table
// shared that way must be changed in place, so the parent's globals are made this coalesce's
// own, all the way down, before they are handed on.

bool is_table(const Value& v) { return v.is_map(); }

std::string concat_prefix(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

// Helm logs these through log.Printf with the file:line of coalesce.go (v3.17.3).
void warn(const ValuesLog& log, int line, const std::string& message) {
  if (log) log("coalesce.go:" + std::to_string(line) + ": " + message);
}

bool is_dependency(const Chart& c, const std::string& key) {
  for (const auto& sub : c.dependencies)
    if (sub.name() == key) return true;
  return false;
}

// A table of the result being built: the Value holding it and, to copy it and the tables above
// it on first change, the table it sits in and its key there.
struct Slot {
  Value* value;
  Slot* parent = nullptr;  // nullptr: a root the Coalescer's caller owns
  std::string_view key;    // its key in the parent (text that outlives the coalesce)
};

class Coalescer {
public:
  Coalescer(bool merge, const ValuesLog& log) : m_merge(merge), m_log(log) {}

  // A new empty table that is this coalesce's own.
  Value fresh_table() { return own(Value(Map{})); }

  // coalesceValues then the subcharts' values under their names (Helm's coalesce).
  void chart(const Chart& c, Slot& dest, const std::string& prefix) {
    chart_values(c, dest, prefix);
    deps(c, dest, prefix);
  }

  // coalesceTablesFullKey(dst, src): src's keys fill in dst's, recursively; src is only read.
  void tables(Slot& dst, const Value& src, const std::string& prefix, bool merge) {
    // Helm first sets src[key] = nil for each null in dst, then walks src: a null in dst is
    // deleted (merge=false) or left alone (merge=true), whatever src holds there.
    std::vector<std::string> deleted;
    if (!merge) {
      for (const auto& [key, val] : dst.value->as_map())
        if (val.is_null()) deleted.push_back(key);
      if (!deleted.empty()) {
        Map& d = mut(dst);
        for (const auto& key : deleted) d.erase(key);
      }
    }
    for (const auto& [key, val] : src.as_map()) {
      const Map& d = dst.value->as_map();  // again each time: a change may have copied it
      auto it = d.find(key);
      if (it == d.end()) {
        if (std::find(deleted.begin(), deleted.end(), key) == deleted.end()) mut(dst).emplace(key, val);
      } else if (it->second.is_null()) {
        // left alone: Helm's src holds nil here
      } else if (is_table(val)) {
        if (is_table(it->second)) {
          Slot sub{const_cast<Value*>(&it->second), &dst, it->first};
          tables(sub, val, concat_prefix(prefix, key), merge);
        } else {
          warn(m_log, 298, "warning: cannot overwrite table with non table for " + concat_prefix(prefix, key) + " (" +
                               tmpl::format_value(val) + ")");
        }
      } else if (is_table(it->second) && !val.is_null()) {
        warn(m_log, 301, "warning: destination for " + concat_prefix(prefix, key) +
                             " is a table. Ignoring non-table value (" + tmpl::format_value(val) + ")");
      }
    }
  }

private:
  bool m_merge;
  const ValuesLog& m_log;
  std::unordered_set<const Map*> m_owned;  // the tables this coalesce made: changed in place

  Value own(Value v) {
    m_owned.insert(&v.as_map());
    return v;
  }
  bool owned(const Value& v) const { return m_owned.contains(&v.as_map()); }

  // The table in `s`, ready to change: copied (one level) on its first change, after the tables
  // above it, so the inputs are never changed.
  Map& mut(Slot& s) {
    if (!owned(*s.value)) {
      if (s.parent) s.value = &mut(*s.parent).find(s.key)->second;  // the parent may be a new copy
      if (!owned(*s.value)) *s.value = own(Value(Map(s.value->as_map())));
    }
    return s.value->mutable_map();
  }

  // Makes the table in `s` and every table below it this coalesce's own.
  void own_all(Slot& s) {
    Map& m = mut(s);
    for (auto& [key, val] : m) {
      if (!is_table(val)) continue;
      Slot sub{&val, &s, key};
      own_all(sub);
    }
  }

  // coalesceValues: the chart's values under `dest`'s.
  void chart_values(const Chart& c, Slot& dest, const std::string& prefix) {
    std::string sub_prefix = concat_prefix(prefix, c.name());
    for (const auto& [key, val] : c.values.as_map()) {
      const Map& vm = dest.value->as_map();
      auto it = vm.find(key);
      if (it == vm.end()) {
        mut(dest).emplace(key, val);
      } else if (it->second.is_null() && !m_merge) {
        mut(dest).erase(key);
      } else if (it->second.is_map()) {
        if (val.is_map()) {
          Slot sub{const_cast<Value*>(&it->second), &dest, it->first};
          tables(sub, val, concat_prefix(sub_prefix, key), m_merge || is_dependency(c, key));
        } else if (!val.is_null()) {
          warn(m_log, 237, "warning: skipped value for " + sub_prefix + "." + key + ": Not a table.");
        }
      }
    }
  }

  // coalesceGlobals: the parent's globals (in `src`) copied down into dest's.
  void globals(Slot& dest, const Value& src, const std::string& prefix) {
    static const std::string k_global = "global";
    Slot dg{nullptr, &dest, k_global};
    if (const Value* g = dest.value->find(k_global)) {
      if (!g->is_map()) {
        warn(m_log, 138, "warning: skipping globals because destination global is not a table.");
        return;
      }
      dg.value = const_cast<Value*>(g);
    }
    Value sg;
    if (const Value* g = src.find(k_global)) {
      if (!g->is_map()) {
        warn(m_log, 145, "warning: skipping globals because source global is not a table.");
        return;
      }
      sg = *g;
    } else {
      sg = Value(Map{});
    }
    if (!dg.value) dg.value = &mut(dest).emplace(k_global, fresh_table()).first->second;
    for (const auto& [key, val] : sg.as_map()) {
      const Map& dgm = dg.value->as_map();
      auto it = dgm.find(key);
      if (is_table(val)) {
        if (it == dgm.end()) {
          mut(dg).emplace(key, own(Value(Map(val.as_map()))));  // Helm's copyMap: a shallow copy
        } else if (it->second.is_map()) {
          Value vv = own(Value(Map(val.as_map())));
          Value destv = it->second;
          Slot root{&vv};
          tables(root, destv, concat_prefix(prefix, key), true);
          mut(dg)[key] = std::move(vv);
        } else {
          warn(m_log, 161, "Conflict: cannot merge map onto non-map for " + tmpl::go_quote(key) + ". Skipping.");
        }
      } else if (it != dgm.end() && is_table(it->second)) {
        warn(m_log, 175, "key " + key + " is table. Skipping");
      } else {
        mut(dg)[key] = val;
      }
    }
  }

  void deps(const Chart& c, Slot& dest, const std::string& prefix) {
    if (c.dependencies.empty()) return;
    std::string sub_prefix = concat_prefix(prefix, c.name());
    if (const Value* g = dest.value->find("global"); g && g->is_map()) {
      static const std::string k_global = "global";
      Slot dg{const_cast<Value*>(g), &dest, k_global};
      own_all(dg);  // see "Globals" above
    }
    for (const auto& sub : c.dependencies) {
      const Map& dm = dest.value->as_map();
      auto it = dm.find(sub.name());
      Slot dv{nullptr, &dest, sub.name()};
      if (it == dm.end()) {
        dv.value = &mut(dest).emplace(sub.name(), fresh_table()).first->second;
      } else if (!it->second.is_map()) {
        fail(ErrorKind::invalid, "type mismatch on " + sub.name() + ": %!t(" + it->second.go_type() + ")");
      } else {
        dv.value = const_cast<Value*>(&it->second);
      }
      Value parent = *dest.value;  // its globals are read while dv changes (which may copy dest)
      globals(dv, parent, sub_prefix);
      chart(sub, dv, sub_prefix);
    }
  }
};

// --- dependencies -----------------------------------------------------------------------

std::vector<std::string> split_path(std::string_view path) { return split(path, '.'); }

// Helm's PathValue: the value at a dotted path, which must not be a table.
const Value* path_value(const Value& values, const std::string& path) {
  auto parts = split_path(path);
  const Value* table = &values;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    table = table->find(parts[i]);
    if (!table || !table->is_map()) return nullptr;
  }
  const Value* v = table->find(parts.back());
  if (!v || v->is_map()) return nullptr;
  return v;
}

void process_dependency_enabled(Chart& c, const Value& v, const std::string& path, const ValuesLog& log) {
  if (c.metadata.dependencies.empty()) return;
  // The subcharts kept, as indexes into c.dependencies with the name each gets: the unlisted
  // ones, then one per matching requirement (a subchart listed twice under two aliases is kept
  // twice).
  std::vector<std::pair<size_t, std::string>> picks;
  for (size_t i = 0; i < c.dependencies.size(); ++i) {
    const Chart& existing = c.dependencies[i];
    bool listed = false;
    for (const auto& req : c.metadata.dependencies)
      if (existing.name() == req.name && semver::satisfies(req.version, existing.metadata.version)) listed = true;
    if (!listed) picks.emplace_back(i, existing.name());
  }
  for (auto& req : c.metadata.dependencies) {
    for (size_t i = 0; i < c.dependencies.size(); ++i) {
      const Chart& existing = c.dependencies[i];
      if (existing.name() != req.name || !semver::satisfies(req.version, existing.metadata.version)) continue;
      picks.emplace_back(i, req.alias.empty() ? existing.name() : req.alias);
      break;
    }
    if (!req.alias.empty()) req.name = req.alias;
  }
  // Each subchart is moved at its last pick and copied before that (copying every subchart
  // showed in profiles of charts with large subcharts).
  std::vector<size_t> last_pick(c.dependencies.size(), picks.size());
  for (size_t k = 0; k < picks.size(); ++k) last_pick[picks[k].first] = k;
  std::vector<Chart> chosen;
  chosen.reserve(picks.size());
  for (size_t k = 0; k < picks.size(); ++k) {
    auto& [i, name] = picks[k];
    if (last_pick[i] == k) {
      chosen.push_back(std::move(c.dependencies[i]));
    } else {
      chosen.push_back(c.dependencies[i]);
      own_values(chosen.back());  // a coalesced result shares tables with the charts' values
    }
    chosen.back().metadata.name = std::move(name);
  }
  c.dependencies = std::move(chosen);
  for (auto& req : c.metadata.dependencies) req.enabled = true;

  Value cvals = coalesce_values(c, v, false, log);
  // tags
  if (const Value* tags = cvals.find("tags"); tags && tags->is_map()) {
    for (auto& req : c.metadata.dependencies) {
      bool has_true = false, has_false = false;
      for (const auto& t : req.tags) {
        const Value* b = tags->find(t);
        if (b && b->is_bool()) (b->as_bool() ? has_true : has_false) = true;
      }
      if (!has_true && has_false) req.enabled = false;
      else req.enabled = true;
    }
  }
  // conditions: the first path that holds a bool decides
  for (auto& req : c.metadata.dependencies) {
    for (const auto& cond : split(trim(req.condition), ',')) {
      if (cond.empty()) continue;
      const Value* b = path_value(cvals, path + cond);
      if (b && b->is_bool()) {
        req.enabled = b->as_bool();
        break;
      }
    }
  }
  std::vector<std::string> removed;
  for (const auto& req : c.metadata.dependencies)
    if (!req.enabled) removed.push_back(req.name);
  auto is_removed = [&](const std::string& n) {
    return std::find(removed.begin(), removed.end(), n) != removed.end();
  };
  std::vector<Chart> kept;
  for (auto& sub : c.dependencies)
    if (!is_removed(sub.name())) kept.push_back(std::move(sub));
  std::vector<Dependency> kept_meta;
  for (auto& req : c.metadata.dependencies)
    if (!is_removed(req.name)) kept_meta.push_back(std::move(req));
  for (auto& sub : kept) process_dependency_enabled(sub, cvals, path + sub.name() + ".", log);
  c.metadata.dependencies = std::move(kept_meta);
  c.dependencies = std::move(kept);
}

Value path_to_map(const std::string& path, const Value& data) {
  if (path == ".") return data;
  auto parts = split_path(path);
  Value cur = data;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) cur = Value(Map{{*it, cur}});
  return cur;
}

void process_import_values(Chart& c, const ValuesLog& log) {
  if (c.metadata.dependencies.empty()) return;
  Value cvals = coalesce_values(c, Value(Map{}), true, log);
  Coalescer imports(true, log);
  Value b = imports.fresh_table();
  for (auto& req : c.metadata.dependencies) {
    List out;
    if (req.import_values.is_list()) {
      for (const auto& riv : req.import_values.as_list()) {
        std::string child, parent;
        if (riv.is_map()) {
          const Value* ch = riv.find("child");
          const Value* pa = riv.find("parent");
          child = ch && ch->is_string() ? ch->as_string() : "";
          parent = pa && pa->is_string() ? pa->as_string() : "";
        } else if (riv.is_string()) {
          child = "exports." + riv.as_string();
          parent = ".";
        } else {
          continue;
        }
        out.push_back(Value(Map{{"child", child}, {"parent", parent}}));
        const Value* table = values_table(cvals, req.name + "." + child);
        if (!table) continue;  // Helm logs "ImportValues missing table" and goes on
        // A copy: the table stays in cvals under the subchart's name, and Helm's final coalesce
        // copies the two places apart.
        Value add = path_to_map(parent, table->deep_copy());
        Slot into{&b};
        imports.tables(into, add, "", true);
      }
    }
    req.import_values = Value(std::move(out));
  }
  Slot root{&cvals};
  imports.tables(root, b, "", true);
  c.values = std::move(cvals);
}

void process_dependency_import_values(Chart& c, const ValuesLog& log) {
  for (auto& sub : c.dependencies) process_dependency_import_values(sub, log);
  process_import_values(c, log);
}

}  // namespace

void parse_set(std::string_view text, Value& dest, bool as_string) {
  try {
    SetParser(text, as_string).parse(dest);
  } catch (const Error& e) {
    fail(ErrorKind::invalid, std::string("failed parsing ") + (as_string ? "--set-string" : "--set") +
                                 " data: " + e.message());
  }
}

Value merge_maps(const Value& a, const Value& b) {
  Map out = a.is_map() ? a.as_map() : Map{};
  if (b.is_map()) {
    for (const auto& [k, v] : b.as_map()) {
      auto it = out.find(k);
      if (v.is_map() && it != out.end() && it->second.is_map()) {
        it->second = merge_maps(it->second, v);
        continue;
      }
      out[k] = v;
    }
  }
  return Value(std::move(out));
}

Value coalesce_values(const Chart& chart, const Value& values, bool merge, const ValuesLog& log) {
  Coalescer co(merge, log);
  Value dest = values.is_map() ? values : co.fresh_table();
  Slot root{&dest};
  co.chart(chart, root, "");
  return dest;
}

void own_values(Chart& chart) {
  chart.values = chart.values.deep_copy();
  for (auto& sub : chart.dependencies) own_values(sub);
}

void process_dependencies(Chart& chart, const Value& values, const ValuesLog& log) {
  process_dependency_enabled(chart, values, "", log);
  process_dependency_import_values(chart, log);
}

const Value* values_table(const Value& values, std::string_view path) {
  const Value* table = &values;
  for (const auto& part : split_path(path)) {
    table = table->find(part);
    if (!table || !table->is_map()) return nullptr;
  }
  return table;
}

}  // namespace emco::helm
