#pragma once
// emco's in-process Go text/template engine with Sprig v3 and Helm's template functions.
//
// Go semantics throughout: parse errors read "template: NAME:LINE: ...", execution errors
// "template: NAME:LINE:COL: executing \"NAME\" at <NODE>: ...", exactly as text/template words
// them. Parse once (add), execute many times (execute); execute() is const and may run
// concurrently on one Engine only if no function mutates shared maps.
//
// Additions to the agreed contract (all compatible): Options::random_seed, Options::set_name,
// Options::clock; Engine::names(), Engine::has_function(); Context::random_bytes(); in
// value.hpp Value::integer(i, IntType), to_json_text(), Object::data() and Object::go_string().

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/template/value.hpp"

namespace emco {
class Clock;
}

namespace emco::tmpl {

class Context;
// A template function. Arguments arrive already evaluated; a function that fails throws
// emco::Error (the engine reports it as Go does: `error calling NAME: MESSAGE`).
using Function = std::function<Value(Context&, std::vector<Value>& args)>;

struct Options {
  // Sprig + Helm functions (include, tpl, required, toYaml, ...); false = Go's builtins only.
  bool helm_functions = true;
  // Helm's rendering: missingkey=zero, and "<no value>" is removed from the output of
  // execute() and tpl (as Helm's engine does after executing; include keeps it, as in Helm).
  bool missingkey_zero = false;
  // Nesting limit for template/include/tpl calls. Helm errors out of runaway include recursion;
  // the message is "... rendering template has a nested reference name exceeded max depth".
  int max_include_depth = 1000;
  // Execution output limit (a huge range); exceeding it is an error.
  std::size_t max_output_bytes = std::size_t{256} << 20;
  // Seed for rand* / uuidv4 / certificate serial numbers when deterministic output is wanted
  // (tests); 0 = OpenSSL's RNG. Keys (genCA, genPrivateKey, ...) always come from OpenSSL's.
  unsigned long long random_seed = 0;
  // Name of the template set, as Go's errors quote it ("no template X associated with template
  // gotpl"); Helm's is "gotpl", and tpl's templates are parsed under this name.
  std::string set_name = "gotpl";
  // Clock for Sprig's date functions (now, ago, date ...); nullptr = emco::system_clock().
  Clock* clock = nullptr;
};

class Engine {
public:
  explicit Engine(Options options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Parses `text` as template `name` (Go's Parse: {{define}} blocks add named templates to the
  // same set; a later definition of a name replaces the earlier one, as Go's AddParseTree does;
  // a template whose body is empty/whitespace does not replace a non-empty one).
  // Throws emco::Error(invalid) "template: NAME:LINE: ..." as Go words parse errors.
  void add(const std::string& name, std::string_view text);
  // The same, keeping `text` itself rather than a copy (the trees' nodes are views into it).
  void add(const std::string& name, std::shared_ptr<const std::string> text);
  bool has(const std::string& name) const;
  // Names of every template in the set, sorted.
  std::vector<std::string> names() const;

  // Executes template `name` with `dot`. Throws emco::Error(failed) with Go's wording
  // `template: NAME:LINE:COL: executing "NAME" at <.Values.x>: ...`; `fail`/`required`
  // errors read `... error calling fail: MESSAGE` (Helm's own reformatting is the caller's).
  std::string execute(const std::string& name, const Value& dot) const;

  // Registers an extra or overriding function (visible to templates parsed afterwards
  // and to execution).
  void set_function(const std::string& name, Function fn);
  bool has_function(const std::string& name) const;

  const Options& options() const;

  struct Impl;

private:
  // add's parse of `text`; `shared` is the text to keep, made from `text` when null.
  void add_text(const std::string& name, std::string_view text, std::shared_ptr<const std::string> shared);
  std::unique_ptr<Impl> m_impl;
};

// What a Function sees of the running engine.
class Context {
public:
  virtual ~Context() = default;
  // Helm's include: executes template `name` with `dot`, returning its output.
  virtual std::string include(const std::string& name, const Value& dot) = 0;
  // Helm's tpl: parses `text` as a template in the running set (named after the calling
  // template) and executes it with `dot`.
  virtual std::string tpl(const std::string& text, const Value& dot) = 0;
  // The template being executed (Helm's .Template.Name is the caller's business).
  virtual const std::string& template_name() const = 0;
  // parse_yaml(text, YamlMode::helm, source) as the engine first parsed it (a chart's fromYaml
  // calls often parse one text again and again): the same Value, shared, so a caller that hands
  // it out or changes it deep-copies it first. Failures are not kept: each throws anew.
  virtual Value parsed_yaml(const std::string& text, const std::string& source) = 0;
  virtual const Options& options() const = 0;
  // Random bytes (the kernel's getrandom(2), or a seeded generator when Options::random_seed is
  // set).
  virtual void random_bytes(unsigned char* out, std::size_t n) = 0;
};

}  // namespace emco::tmpl
