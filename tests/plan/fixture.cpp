#include "tests/plan/fixture.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/template/engine.hpp"
#include "core/util/clock.hpp"
#include "plugins/builtin.hpp"

namespace emco::test {

fs::path flows_dir() {
  const char* env = std::getenv("EMCO_FLOWS");
  fs::path p = env ? fs::path(env) : fs::path(EMCO_SOURCE_DIR) / ".." / "shared" / "emco-flows";
  return fs::exists(p / "README.md") ? fs::canonical(p) : fs::path();
}

Workspace::Workspace() {
  std::string tmpl = (fs::temp_directory_path() / "emco-plan-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  m_dir = tmpl;
  m_store = store::Store::open_memory();
  plugins::builtin_runtime();  // the plugins' intent kinds, before any document is read
}

Workspace::~Workspace() {
  std::error_code ec;
  fs::remove_all(m_dir, ec);
}

fs::path Workspace::write(const std::string& name, const std::string& text) {
  fs::path p = m_dir / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

fs::path Workspace::pack(const fs::path& src, const std::string& name) {
  fs::path out = m_dir / name;
  fs::create_directories(out.parent_path());
  std::string cmd = "tar -czf '" + out.string() + "' -C '" + src.string() + "' .";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("tar failed: " + cmd);
  return out;
}

namespace {

void run(store::Store& st, std::vector<manifest::File> files) {
  for (auto& f : files) {
    std::vector<manifest::Document> kept;
    for (auto& d : f.documents)
      if (d.anchor.target != resource::AnchorTarget::operation) kept.push_back(std::move(d));
    f.documents = std::move(kept);
  }
  manifest::BatchOptions o;
  manifest::run_batch(st, manifest::Verb::apply, files, o);
}

}  // namespace

plan::Options plan_options() {
  plan::Options o;
  o.registry = &plugins::builtin_runtime().controllers;
  return o;
}

void Workspace::apply(const fs::path& file, const fs::path& values) {
  manifest::ReadOptions ro;
  if (!values.empty()) {
    std::ifstream in(values);
    std::stringstream ss;
    ss << in.rdbuf();
    auto v = std::make_shared<tmpl::Value>(tmpl::parse_yaml(ss.str(), tmpl::YamlMode::go_yaml, values.string()));
    ro.render = [v](const std::string& body, const std::string& source) {
      tmpl::Options o;
      o.helm_functions = false;
      o.set_name = source;
      tmpl::Engine engine(o);
      engine.add(source, body);
      return engine.execute(source, *v);
    };
  }
  run(*m_store, manifest::read_files(file.string(), ro));
}

void Workspace::apply_text(const std::string& yaml) {
  manifest::ReadOptions ro;
  run(*m_store, {manifest::parse_text(yaml, "test.yaml", m_dir.string(), ro)});
}

std::string dump(const appcontext::AppContext& ctx) {
  std::ostringstream o;
  o << "context " << ctx.id << " owner " << ctx.owner.kind << " " << ctx.owner.key.str() << "\n";
  for (const auto& [k, v] : ctx.meta) o << "meta " << k << ": " << v << "\n";
  std::map<std::string, std::string> contents;  // hash -> text
  for (const auto& app : ctx.apps) {
    o << "app " << app.name << "\n";
    for (const auto& d : app.dependencies) o << "  depends on " << d.app << " " << d.op_status << " wait " << d.wait << "\n";
    for (const auto& c : app.clusters) {
      o << "  cluster " << c.name << " group " << c.group << "\n";
      for (const auto& r : c.resources) {
        o << "    resource " << r.name << " " << r.hash().substr(0, 12) << "\n";
        contents[r.hash()] = r.text();
      }
      for (const auto& g : c.hooks)
        for (const auto& r : g.resources) {
          o << "    hook " << g.event << " " << r.name << " " << r.hash().substr(0, 12) << "\n";
          contents[r.hash()] = r.text();
        }
    }
  }
  for (const auto& [h, text] : contents) o << "--- content " << h.substr(0, 12) << "\n" << text;
  return o.str();
}

void check_golden(const std::string& name, const std::string& actual) {
  fs::path p = fs::path(EMCO_SOURCE_DIR) / "tests" / "plan" / "golden" / name;
  const char* update = std::getenv("EMCO_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << actual;
    WARN("golden file rewritten: " << p.string());
    return;
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) FAIL("golden file missing: " << p.string() << " (run with EMCO_UPDATE_GOLDEN=1 to create it)");
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == actual);
}

}  // namespace emco::test
