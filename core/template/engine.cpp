#include "core/template/engine.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <unordered_map>

#include "core/template/format.hpp"
#include "core/template/funcs.hpp"
#include "core/template/parse.hpp"
#include "core/util/error.hpp"

namespace emco::tmpl {

namespace {

constexpr std::size_t k_max_range_iterations = 50'000'000;

// A template set; tpl parses into a child set that sees its parent's templates.
struct TemplateSet {
  StringMap<std::shared_ptr<Tree>> map;
  const TemplateSet* parent = nullptr;
  const Tree* find(std::string_view name) const {
    for (const TemplateSet* s = this; s; s = s->parent) {
      auto it = s->map.find(name);
      if (it != s->map.end()) return it->second.get();
    }
    return nullptr;
  }
};

// An evaluated value with the two bits of reflect state Go's behaviour depends on:
// `invalid` = reflect's invalid Value (a missing key, "<no value>"); `boxed` = the value is
// still wrapped in an interface{} (came out of a map/list), which shows in error messages.
struct EV {
  Value v;
  bool invalid = false;
  bool boxed = false;
};

enum class Flow { normal, brk, cont };

struct Var {
  std::string_view name;  // "$" or a declaring node's name (the tree outlives its execution)
  EV value;
};

}  // namespace

namespace {

// Go's builtins, plus Sprig's and Helm's functions for Helm engines: built once per process
// (a render used to spend 2% of its time registering them) and never modified.
const FuncMap& standard_functions(bool helm_functions) {
  static const FuncMap go_only = [] {
    FuncMap m;
    register_go_builtins(m);
    return m;
  }();
  static const FuncMap with_helm = [] {
    FuncMap m;
    register_go_builtins(m);
    register_sprig(m);
    register_sprig_crypto(m);
    register_sprig_time(m);
    register_helm(m);
    return m;
  }();
  return helm_functions ? with_helm : go_only;
}

}  // namespace

struct Engine::Impl {
  Options opts;
  TemplateSet set;
  const FuncMap* standard = nullptr;
  FuncMap own;  // set_function's additions and overrides
  const FuncDef* find_function(std::string_view name) const {
    if (!own.empty()) {
      auto it = own.find(name);
      if (it != own.end()) return &it->second;
    }
    auto it = standard->find(name);
    return it == standard->end() ? nullptr : &it->second;
  }
  bool has_function(std::string_view name) const { return find_function(name) != nullptr; }
  std::mutex tpl_mutex;
  std::unordered_map<std::string, std::vector<std::shared_ptr<Tree>>> tpl_cache;
  std::mutex yaml_mutex;
  std::unordered_map<std::string, Value> yaml_cache;  // parsed_yaml's texts (helm mode)
  std::size_t yaml_cache_bytes = 0;
  // add()'s parses by the size of their text (file tree first; its Tree::text is the text):
  // sizes rarely collide, so texts are compared only then instead of hashing every file.
  std::unordered_multimap<std::size_t, std::vector<std::shared_ptr<Tree>>> parsed_texts;
  const std::vector<std::shared_ptr<Tree>>* parsed(std::string_view text) const {
    auto [from, to] = parsed_texts.equal_range(text.size());
    for (auto it = from; it != to; ++it)
      if (*it->second.front()->text == text) return &it->second;
    return nullptr;
  }

  void add_trees(TemplateSet& into, const std::vector<std::shared_ptr<Tree>>& trees) const {
    for (const auto& t : trees) {
      auto it = into.map.find(t->name);
      // Go's associate(): an empty template does not replace a non-empty one.
      if (it != into.map.end() && is_empty_tree(t->root) && !is_empty_tree(it->second->root)) continue;
      into.map[t->name] = t;
    }
  }
};

namespace {

struct RunState {
  std::size_t iterations = 0;
  int depth = 0;
  // Made on first use with Options::random_seed: constructing a generator (a default seed
  // expands into 312 words) for every executed file showed in profiles.
  std::optional<std::mt19937_64> rng;
  // The variables of every template running, innermost last: each Exec sees those from its
  // base up. One stack for the run, as a vector per include was an allocation per call.
  std::vector<Var> vars;
  // Argument vectors of finished calls, cleared, for the next calls to fill: a vector per
  // function call was a tenth of the allocations of a render.
  std::vector<std::vector<Value>> spare_args;
  std::vector<Value> take_args() {
    if (spare_args.empty()) return {};
    std::vector<Value> v = std::move(spare_args.back());
    spare_args.pop_back();
    return v;
  }
  void give_back(std::vector<Value>&& v) {
    v.clear();
    spare_args.push_back(std::move(v));
  }
};

class Exec final : public Context {
public:
  Exec(Engine::Impl& eng, RunState& run, const TemplateSet* set, const Tree* tree, std::string* out)
      : m_eng(eng), m_run(run), m_set(set), m_tree(tree), m_out(out), m_vars(run.vars), m_base(run.vars.size()) {}
  ~Exec() override { m_vars.resize(m_base); }
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;

  void run(const EV& dot) {
    m_vars.push_back(Var{"$", dot});
    walk(dot, m_tree->root);
  }

  // ---- Context ----
  std::string include(const std::string& name, const Value& dot) override {
    const Tree* t = m_set->find(name);
    if (!t) {
      throw Error(ErrorKind::failed, "template: no template " + go_quote(name) + " associated with template " +
                                         go_quote(m_eng.opts.set_name));
    }
    // Helm also counts each name's nested includes against the limit; a name's count never
    // exceeds the depth of all nested calls, so the depth alone decides.
    if (m_run.depth >= m_eng.opts.max_include_depth) {
      throw Error(ErrorKind::failed,
                  "rendering template has a nested reference name: " + name + ": unable to execute template");
    }
    ++m_run.depth;
    std::string buf;
    try {
      Exec sub(m_eng, m_run, m_set, t, &buf);
      sub.run(EV{dot, false, false});
    } catch (...) {
      --m_run.depth;
      throw;
    }
    --m_run.depth;
    return buf;
  }

  std::string tpl(const std::string& text, const Value& dot) override {
    std::vector<std::shared_ptr<Tree>> trees;
    {
      std::lock_guard<std::mutex> lock(m_eng.tpl_mutex);
      auto it = m_eng.tpl_cache.find(text);
      if (it != m_eng.tpl_cache.end()) trees = it->second;
    }
    const std::string& name = m_eng.opts.set_name;
    if (trees.empty()) {
      try {
        trees = parse_template(name, std::make_shared<const std::string>(text),
                               [this](std::string_view f) { return m_eng.find_function(f); });
      } catch (const Error& e) {
        throw Error(ErrorKind::failed, "cannot parse template " + go_quote(text) + ": " + e.message());
      }
      std::lock_guard<std::mutex> lock(m_eng.tpl_mutex);
      if (m_eng.tpl_cache.size() > 10000) m_eng.tpl_cache.clear();
      m_eng.tpl_cache.emplace(text, trees);
    }
    TemplateSet child;
    child.parent = m_set;
    m_eng.add_trees(child, trees);
    const Tree* t = child.find(name);
    if (m_run.depth >= m_eng.opts.max_include_depth) {
      throw Error(ErrorKind::failed,
                  "rendering template has a nested reference name: " + name + ": unable to execute template");
    }
    ++m_run.depth;
    std::string buf;
    try {
      Exec sub(m_eng, m_run, &child, t, &buf);
      sub.run(EV{dot, false, false});
    } catch (const Error& e) {
      --m_run.depth;
      throw Error(ErrorKind::failed, "error during tpl function execution for " + go_quote(text) + ": " + e.message());
    }
    --m_run.depth;
    if (m_eng.opts.missingkey_zero) remove_no_value(buf);
    return buf;
  }

  Value parsed_yaml(const std::string& text, const std::string& source) override {
    {
      std::lock_guard<std::mutex> lock(m_eng.yaml_mutex);
      auto it = m_eng.yaml_cache.find(text);
      if (it != m_eng.yaml_cache.end()) return it->second;
    }
    Value v = parse_yaml(text, YamlMode::helm, source);
    std::lock_guard<std::mutex> lock(m_eng.yaml_mutex);
    // Bounded as tpl's cache is: a render that parses ever new texts keeps at most 64 MiB of them.
    if (m_eng.yaml_cache_bytes + text.size() > (std::size_t{64} << 20)) {
      m_eng.yaml_cache.clear();
      m_eng.yaml_cache_bytes = 0;
    }
    if (m_eng.yaml_cache.emplace(text, v).second) m_eng.yaml_cache_bytes += text.size();
    return v;
  }

  const std::string& template_name() const override { return m_tree->name; }
  const Options& options() const override { return m_eng.opts; }
  void random_bytes(unsigned char* out, std::size_t n) override {
    if (m_eng.opts.random_seed != 0) {
      if (!m_run.rng) m_run.rng.emplace(m_eng.opts.random_seed);
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>((*m_run.rng)() & 0xFF);
      return;
    }
    // The kernel's random source, read as Go's crypto/rand reads it. OpenSSL's RAND_bytes set up
    // its generator on first use (3% of rendering kube-prometheus-stack as a process) and loaded
    // libcrypto for charts that need nothing else from it.
    for (std::size_t done = 0; done < n;) {
      ssize_t got = ::getrandom(out + done, n - done, 0);
      if (got < 0) {
        if (errno == EINTR) continue;
        func_fail("random source failed");
      }
      done += static_cast<std::size_t>(got);
    }
  }

  static void remove_no_value(std::string& s) {
    static constexpr std::string_view nv = "<no value>";
    size_t pos = s.find(nv);
    if (pos == std::string::npos) return;
    std::string out;
    out.reserve(s.size());
    size_t last = 0;
    while (pos != std::string::npos) {
      out.append(s, last, pos - last);
      last = pos + nv.size();
      pos = s.find(nv, last);
    }
    out.append(s, last);
    s = std::move(out);
  }

private:
  Engine::Impl& m_eng;
  RunState& m_run;
  const TemplateSet* m_set;
  const Tree* m_tree;
  std::string* m_out;
  const Node* m_node = nullptr;
  std::vector<Var>& m_vars;  // the run's; this template's are those from m_base up
  const std::size_t m_base;

  void at(const Node* n) { m_node = n; }

  [[noreturn]] void errorf(const std::string& msg) {
    if (!m_node) throw Error(ErrorKind::failed, "template: " + m_tree->name + ": " + msg);
    throw Error(ErrorKind::failed, "template: " + m_tree->location(m_node) + ": executing " + go_quote(m_tree->name) +
                                       " at <" + m_node->to_string() + ">: " + msg);
  }

  void check_output() {
    if (m_out->size() > m_eng.opts.max_output_bytes)
      errorf("output exceeds the limit of " + std::to_string(m_eng.opts.max_output_bytes) + " bytes");
  }

  // ---- variables ----
  void push(std::string_view name, const EV& v) { m_vars.push_back(Var{name, v}); }
  void set_var(std::string_view name, const EV& v) {
    for (size_t i = m_vars.size(); i-- > m_base;) {
      if (m_vars[i].name == name) {
        m_vars[i].value = v;
        return;
      }
    }
    errorf("undefined variable: " + std::string(name));
  }
  void set_top_var(size_t n, const EV& v) { m_vars[m_vars.size() - n].value = v; }
  EV var_value(std::string_view name) {
    for (size_t i = m_vars.size(); i-- > m_base;)
      if (m_vars[i].name == name) return m_vars[i].value;
    errorf("undefined variable: " + std::string(name));
  }

  // ---- walking ----
  Flow walk(const EV& dot, const Node* node) {
    switch (node->type) {
      case NodeType::action: {
        at(node);
        EV val = eval_pipeline(dot, node->pipe);
        if (node->pipe->decls.empty()) print_value(node, val);
        return Flow::normal;
      }
      case NodeType::break_: return Flow::brk;
      case NodeType::continue_: return Flow::cont;
      case NodeType::comment: return Flow::normal;
      case NodeType::if_:
      case NodeType::with: return walk_if_or_with(dot, node);
      case NodeType::list:
        for (const Node* n : node->nodes) {
          Flow f = walk(dot, n);
          if (f != Flow::normal) return f;
        }
        return Flow::normal;
      case NodeType::range: return walk_range(dot, node);
      case NodeType::template_: walk_template(dot, node); return Flow::normal;
      case NodeType::text:
        m_out->append(node->text);
        check_output();
        return Flow::normal;
      default: at(node); errorf("unknown node: " + node->to_string());
    }
  }

  void print_value(const Node* n, const EV& v) {
    at(n);
    if (v.invalid || v.v.is_null()) m_out->append("<no value>");
    else append_value(*m_out, v.v);
    check_output();
  }

  Flow walk_if_or_with(const EV& dot, const Node* node) {
    size_t mark = m_vars.size();
    EV val = eval_pipeline(dot, node->pipe);
    bool truth = !val.invalid && val.v.truthy();
    Flow f = Flow::normal;
    if (truth) f = walk(node->type == NodeType::with ? val : dot, node->branches.list);
    else if (node->branches.else_list) f = walk(dot, node->branches.else_list);
    m_vars.resize(mark);
    return f;
  }

  Flow walk_range(const EV& dot, const Node* r) {
    at(r);
    size_t mark0 = m_vars.size();
    EV val = eval_pipeline(dot, r->pipe);
    size_t mark = m_vars.size();
    const auto& decls = r->pipe->decls;
    auto one = [&](const EV& index, const EV& elem) -> bool {
      if (++m_run.iterations > k_max_range_iterations) errorf("range iteration limit exceeded");
      if (!decls.empty()) {
        if (r->pipe->is_assign) set_var(decls[0]->idents[0], decls.size() > 1 ? index : elem);
        else set_top_var(1, elem);
      }
      if (decls.size() > 1) {
        if (r->pipe->is_assign) set_var(decls[1]->idents[0], elem);
        else set_top_var(2, index);
      }
      Flow f = walk(elem, r->branches.list);
      m_vars.resize(mark);
      return f == Flow::brk;
    };
    Value v = val.v;
    if (v.is_object()) {
      auto d = v.as_object()->data();
      if (!d) errorf("range can't iterate over " + format_value(v));
      v = *d;
    }
    bool ran = false;
    if (!val.invalid) {
      switch (v.kind()) {
        case Kind::list: {
          const List& l = v.as_list();
          for (size_t i = 0; i < l.size(); ++i) {
            ran = true;
            if (one(EV{Value(static_cast<std::int64_t>(i))}, EV{l[i], false, true})) break;
          }
          break;
        }
        case Kind::integer: {
          if (decls.size() > 1) errorf("can't use " + format_value(v) + " to iterate over more than one variable");
          std::int64_t n = v.as_int();
          for (std::int64_t i = 0; i < n; ++i) {
            ran = true;
            EV e{Value::integer(i, v.int_type())};
            if (one(e, e)) break;
          }
          break;
        }
        case Kind::map: {
          std::vector<std::pair<std::string, Value>> items(v.as_map().begin(), v.as_map().end());
          for (auto& [k, e] : items) {
            ran = true;
            if (one(EV{Value(k)}, EV{e, false, true})) break;
          }
          break;
        }
        case Kind::null: break;
        default: errorf("range can't iterate over " + format_value(v));
      }
    }
    if (!ran && r->branches.else_list) walk(dot, r->branches.else_list);
    m_vars.resize(mark0);
    return Flow::normal;
  }

  void walk_template(const EV& dot, const Node* t) {
    at(t);
    const Tree* tmpl = m_set->find(t->text);
    if (!tmpl) errorf("template " + go_quote(t->text) + " not defined");
    if (m_run.depth >= m_eng.opts.max_include_depth)
      errorf("exceeded maximum template depth (" + std::to_string(m_eng.opts.max_include_depth) + ")");
    EV newdot = eval_pipeline(dot, t->pipe);
    ++m_run.depth;
    try {
      Exec sub(m_eng, m_run, m_set, tmpl, m_out);
      sub.run(newdot);
    } catch (...) {
      --m_run.depth;
      throw;
    }
    --m_run.depth;
  }

  // ---- evaluation ----
  EV eval_pipeline(const EV& dot, const Node* pipe) {
    EV value;
    if (!pipe) {
      value.invalid = true;
      return value;
    }
    at(pipe);
    bool has_final = false;
    for (const Node* cmd : pipe->nodes) {
      EV final = std::move(value);  // the previous command's result becomes this one's last argument
      value = eval_command(dot, cmd, has_final ? &final : nullptr);
      has_final = true;
      value.boxed = false;
      if (value.v.is_null()) value.invalid = true;
    }
    for (const Node* var : pipe->decls) {
      if (pipe->is_assign) set_var(var->idents[0], value);
      else push(var->idents[0], value);
    }
    return value;
  }

  void not_a_function(NodeSpan args, const EV* final) {
    if (args.size() > 1 || final) errorf("can't give argument to non-function " + args[0]->to_string());
  }

  EV eval_command(const EV& dot, const Node* cmd, const EV* final) {
    const Node* first = cmd->nodes[0];
    switch (first->type) {
      case NodeType::field: return eval_field_node(dot, first, cmd->nodes, final);
      case NodeType::chain: return eval_chain_node(dot, first, cmd->nodes, final);
      case NodeType::identifier: return eval_function(dot, first, cmd, cmd->nodes, final);
      case NodeType::pipe:
        not_a_function(cmd->nodes, final);
        return eval_pipeline(dot, first);
      case NodeType::variable: return eval_variable_node(dot, first, cmd->nodes, final);
      default: break;
    }
    at(first);
    not_a_function(cmd->nodes, final);
    switch (first->type) {
      case NodeType::boolean: return EV{*first->constant};
      case NodeType::dot: return dot;
      case NodeType::nil: errorf("nil is not a command");
      case NodeType::number: return ideal_constant(first);
      case NodeType::string: return EV{*first->constant};
      default: errorf("can't evaluate command " + go_quote(first->to_string()));
    }
  }

  EV ideal_constant(const Node* n) {
    at(n);
    if (n->number_overflows_int) errorf(std::string(n->text) + " overflows int");
    return EV{*n->constant};
  }

  EV eval_field_node(const EV& dot, const Node* field, NodeSpan args, const EV* final) {
    at(field);
    return eval_field_chain(dot, dot, field, field->idents, 0, args, final);
  }

  EV eval_chain_node(const EV& dot, const Node* chain, NodeSpan args, const EV* final) {
    at(chain);
    if (chain->pipe->type == NodeType::nil) errorf("indirection through explicit nil in " + chain->to_string());
    EV pipe = eval_arg_any(dot, chain->pipe, true);
    return eval_field_chain(dot, pipe, chain, chain->idents, 0, args, final);
  }

  EV eval_variable_node(const EV& dot, const Node* var, NodeSpan args, const EV* final) {
    at(var);
    EV value = var_value(var->idents[0]);
    if (var->idents.size() == 1) {
      not_a_function(args, final);
      return value;
    }
    return eval_field_chain(dot, value, var, var->idents, 1, args, final);
  }

  EV eval_field_chain(const EV& dot, const EV& receiver, const Node* node, std::span<const std::string_view> idents,
                      size_t from, NodeSpan args, const EV* final) {
    const NodeSpan no_args;
    const size_t n = idents.size();
    size_t i = from;
    // Through maps that have the key, by pointer (the receiver holds them; a copy of each step's
    // value was two atomic counts): only the value the chain ends on is copied.
    const Value* r = &receiver.v;
    bool boxed = receiver.boxed;
    if (!receiver.invalid) {
      for (; i + 1 < n && r->is_map(); ++i) {
        const Value* found = r->find(idents[i]);
        if (!found) break;
        r = found;
        boxed = true;
      }
    }
    if (i + 1 == n) return eval_field(dot, idents[i], node, args, final, *r, receiver.invalid, boxed);
    EV step = eval_field(dot, idents[i], node, no_args, nullptr, *r, receiver.invalid, boxed);
    for (++i; i + 1 < n; ++i) step = eval_field(dot, idents[i], node, no_args, nullptr, step.v, step.invalid, step.boxed);
    return eval_field(dot, idents[n - 1], node, args, final, step.v, step.invalid, step.boxed);
  }

  // Field `name` of the receiver `r` (reflect's invalid value if `invalid`; `boxed` as in EV).
  EV eval_field(const EV& dot, std::string_view name, const Node* node, NodeSpan args, const EV* final, const Value& r,
                bool invalid, bool boxed) {
    if (invalid) return EV{Value(), true};
    bool has_args = args.size() > 1 || final;
    switch (r.kind()) {
      case Kind::null: errorf("nil pointer evaluating interface {}." + std::string(name));
      case Kind::map: {
        if (has_args) errorf(std::string(name) + " is not a method but has arguments");
        const Value* found = r.find(name);
        if (found) return EV{*found, false, true};
        if (m_eng.opts.missingkey_zero) return EV{Value(), false, true};
        return EV{Value(), true};
      }
      case Kind::object: {
        // A reference of its own: evaluating the arguments may change the map `r` is in.
        const std::shared_ptr<const Object> obj = r.as_object();
        if (obj->has_method(name)) {
          std::vector<Value> argv;
          for (size_t i = 1; i < args.size(); ++i) argv.push_back(eval_arg_any(dot, args[i], false).v);
          if (final) argv.push_back(final->v);
          Value result;
          try {
            result = obj->call_method(name, argv);
          } catch (const Error& e) {
            at(node);
            errorf("error calling " + std::string(name) + ": " + e.message());
          } catch (const std::exception& e) {
            at(node);
            errorf("error calling " + std::string(name) + ": " + e.what());
          }
          return EV{result, result.is_null()};
        }
        auto f = obj->field(name);
        if (f) {
          if (has_args) errorf(std::string(name) + " is not a method but has arguments");
          return EV{*f};
        }
        auto d = obj->data();
        if (d && d->is_map()) return eval_field(dot, name, node, args, final, *d, false, false);
        errorf("can't evaluate field " + std::string(name) + " in type " + obj->type_name());
      }
      default:
        errorf("can't evaluate field " + std::string(name) + " in type " + (boxed ? std::string("interface {}") : r.go_type()));
    }
  }

  EV eval_function(const EV& dot, const Node* ident, const Node* cmd, NodeSpan args, const EV* final) {
    at(ident);
    // The parse's function, unless set_function may have named another since.
    const FuncDef* def = m_eng.own.empty() ? ident->func : m_eng.find_function(ident->text);
    if (!def) errorf(go_quote(ident->text) + " is not a defined function");
    return eval_call(dot, *def, ident->text, cmd, args, final);
  }

  EV eval_call(const EV& dot, const FuncDef& def, std::string_view name, const Node* node,
               NodeSpan args, const EV* final) {
    const std::string& sig = def.sig;
    bool variadic = !sig.empty() && sig.back() == '*';
    size_t nparams = variadic ? sig.size() - 1 : sig.size();
    size_t nargs = args.size() - 1;  // args[0] is the function name
    size_t num_in = nargs + (final ? 1 : 0);
    if (variadic) {
      if (num_in < nparams - 1)
        errorf("wrong number of args for " + std::string(name) + ": want at least " + std::to_string(nparams - 1) + " got " +
               std::to_string(nargs));
    } else if (num_in != nparams) {
      errorf("wrong number of args for " + std::string(name) + ": want " + std::to_string(nparams) + " got " + std::to_string(num_in));
    }
    auto param = [&](size_t i) -> char { return i < nparams - (variadic ? 1 : 0) ? sig[i] : sig[nparams - 1]; };

    if (name == "and" || name == "or") {
      EV v;
      for (size_t i = 1; i < args.size(); ++i) {
        v = eval_arg_any(dot, args[i], false);
        bool t = !v.invalid && v.v.truthy();
        if (t == (name == "or")) return v;
      }
      if (final) v = *final;
      return v;
    }

    std::vector<Value> argv = m_run.take_args();
    argv.reserve(num_in);
    for (size_t i = 1; i < args.size(); ++i) argv.push_back(eval_arg(dot, param(i - 1), args[i]));
    if (final) argv.push_back(validate(*final, param(num_in - 1)));
    Value result;
    try {
      result = def.fn(*this, argv);
    } catch (const Error& e) {
      at(node);
      errorf("error calling " + std::string(name) + ": " + e.message());
    } catch (const std::exception& e) {
      at(node);
      errorf("error calling " + std::string(name) + ": " + e.what());
    }
    m_run.give_back(std::move(argv));
    // A string longer than the output limit could never be written. Without
    // this check a chain of calls that each grow their input (`printf "%q"`
    // doubles the backslashes) ran out of memory before writing a byte.
    if (result.is_string() && result.as_string().size() > m_eng.opts.max_output_bytes) {
      at(node);
      errorf("error calling " + std::string(name) + ": its result exceeds the output limit of " +
             std::to_string(m_eng.opts.max_output_bytes) + " bytes");
    }
    return EV{std::move(result), result.is_null()};
  }

  Value validate(const EV& ev, char t) {
    if (t == 'a') return ev.invalid ? Value() : ev.v;
    if (ev.invalid) {
      if (t == 'm' || t == 'l') return Value();
      errorf("invalid value; expected " + type_string(t));
    }
    const Value& v = ev.v;
    bool ok = false;
    switch (t) {
      case 's': ok = v.is_string(); break;
      case 'i': ok = v.is_int() && v.int_type() == IntType::int_; break;
      case 'I': ok = v.is_int() && v.int_type() == IntType::int64; break;
      case 'f': ok = v.is_float(); break;
      case 'b': ok = v.is_bool(); break;
      case 'm': ok = v.is_map() || v.is_null(); break;
      case 'l': ok = v.is_list() || v.is_null(); break;
      default: ok = true;
    }
    if (v.is_object() && (t == 'm' || t == 'l')) {
      auto d = v.as_object()->data();
      if (d && ((t == 'm' && d->is_map()) || (t == 'l' && d->is_list()))) return *d;
    }
    if (!ok) {
      if (v.is_null()) errorf("wrong type for value; expected " + type_string(t) + "; got interface {}");
      errorf("wrong type for value; expected " + type_string(t) + "; got " + v.go_type());
    }
    return v;
  }

  // evalArg with an interface{} parameter (keep_box: typ == nil, used for chain heads)
  EV eval_arg_any(const EV& dot, const Node* n, bool keep_box) {
    at(n);
    Node* self = const_cast<Node*>(n);  // a field or function named alone is its own argument list
    EV r;
    switch (n->type) {
      case NodeType::dot: r = dot; break;
      case NodeType::nil: return EV{Value()};
      case NodeType::field: r = eval_field_node(dot, n, NodeSpan(&self, 1), nullptr); break;
      case NodeType::variable: r = eval_variable_node(dot, n, {}, nullptr); break;
      case NodeType::pipe: r = eval_pipeline(dot, n); break;
      case NodeType::identifier:
        r = eval_function(dot, n, n, NodeSpan(&self, 1), nullptr);
        break;
      case NodeType::chain: r = eval_chain_node(dot, n, {}, nullptr); break;
      case NodeType::boolean:
      case NodeType::string: return EV{*n->constant};
      case NodeType::number: return ideal_constant(n);
      default: errorf("can't handle " + n->to_string() + " for arg of type interface {}");
    }
    if (!keep_box) r.boxed = false;
    return r;
  }

  Value eval_arg(const EV& dot, char t, const Node* n) {
    at(n);
    Node* self = const_cast<Node*>(n);  // a field or function named alone is its own argument list
    switch (n->type) {
      case NodeType::dot: return validate(dot, t);
      case NodeType::nil:
        if (t == 'a' || t == 'm' || t == 'l') return Value();
        errorf("cannot assign nil to " + type_string(t));
      case NodeType::field:
        return validate(eval_field_node(dot, n, NodeSpan(&self, 1), nullptr), t);
      case NodeType::variable: return validate(eval_variable_node(dot, n, {}, nullptr), t);
      case NodeType::pipe: return validate(eval_pipeline(dot, n), t);
      case NodeType::identifier:
        return validate(eval_function(dot, n, n, NodeSpan(&self, 1), nullptr), t);
      case NodeType::chain: return validate(eval_chain_node(dot, n, {}, nullptr), t);
      default: break;
    }
    switch (t) {
      case 'a': return eval_arg_any(dot, n, false).v;
      case 'b':
        if (n->type == NodeType::boolean) return *n->constant;
        errorf("expected bool; found " + n->to_string());
      case 'f':
        if (n->type == NodeType::number) return Value(n->constant->as_float());
        errorf("expected float; found " + n->to_string());
      case 'i':
      case 'I':
        if (n->type == NodeType::number && n->number_is_int) {
          std::int64_t i = n->constant->is_int() ? n->constant->as_int() : static_cast<std::int64_t>(n->constant->as_float());
          return Value::integer(i, t == 'i' ? IntType::int_ : IntType::int64);
        }
        errorf("expected integer; found " + n->to_string());
      case 's':
        if (n->type == NodeType::string) return *n->constant;
        errorf("expected string; found " + n->to_string());
      default: errorf("can't handle " + n->to_string() + " for arg of type " + type_string(t));
    }
  }
};

}  // namespace

// ---- Engine ----

Engine::Engine(Options options) : m_impl(std::make_unique<Impl>()) {
  m_impl->opts = std::move(options);
  m_impl->standard = &standard_functions(m_impl->opts.helm_functions);
}

Engine::~Engine() = default;

void Engine::add(const std::string& name, std::string_view text) { add_text(name, text, nullptr); }

void Engine::add(const std::string& name, std::shared_ptr<const std::string> text) {
  const std::string_view view = *text;
  add_text(name, view, std::move(text));
}

void Engine::add_text(const std::string& name, std::string_view text, std::shared_ptr<const std::string> shared) {
  // A chart's subcharts often vendor the same library (every bitnami subchart carries its own
  // copy of `common`): a text parsed before gives the same nodes, so its trees are shared and
  // only the names differ -- the file's own tree takes `name`, and every tree reports errors
  // under `name`, as a fresh parse would.
  // (A define named like the file would make the two parses differ: such texts parse anew.)
  auto names_a_define = [&name](const std::vector<std::shared_ptr<Tree>>& trees) {
    return std::any_of(trees.begin() + 1, trees.end(), [&name](const auto& t) { return t->name == name; });
  };
  if (const auto* before = m_impl->parsed(text); before && !names_a_define(*before)) {
    std::vector<std::shared_ptr<Tree>> trees;
    trees.reserve(before->size());
    for (const auto& t : *before) {
      auto copy = std::make_shared<Tree>(*t);
      if (trees.empty()) copy->name = name;
      copy->parse_name = name;
      trees.push_back(std::move(copy));
    }
    m_impl->add_trees(m_impl->set, trees);
    return;
  }
  if (!shared) shared = std::make_shared<const std::string>(text);
  auto trees = parse_template(name, std::move(shared), [this](std::string_view f) { return m_impl->find_function(f); });
  m_impl->add_trees(m_impl->set, trees);
  if (!trees.empty() && trees.front()->name == name) m_impl->parsed_texts.emplace(text.size(), std::move(trees));
}

bool Engine::has(const std::string& name) const { return m_impl->set.find(name) != nullptr; }

std::vector<std::string> Engine::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : m_impl->set.map) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Engine::execute(const std::string& name, const Value& dot) const {
  const Tree* t = m_impl->set.find(name);
  if (!t) {
    throw Error(ErrorKind::not_found, "template: no template " + go_quote(name) + " associated with template " +
                                          go_quote(m_impl->opts.set_name));
  }
  RunState run;
  std::string out;
  // Room for as much as the file's text, which a file's output is often near: growing from
  // empty copied large outputs several times.
  out.reserve(t->text->size());
  Exec exec(*m_impl, run, &m_impl->set, t, &out);
  // Execute(nil) gives Go an invalid dot: fields of it evaluate to "no value" without error
  exec.run(EV{dot, dot.is_null(), false});
  if (m_impl->opts.missingkey_zero) Exec::remove_no_value(out);
  return out;
}

void Engine::set_function(const std::string& name, Function fn) {
  m_impl->own[name] = FuncDef{std::move(fn), "a*"};
}

bool Engine::has_function(const std::string& name) const { return m_impl->has_function(name); }

const Options& Engine::options() const { return m_impl->opts; }

}  // namespace emco::tmpl
