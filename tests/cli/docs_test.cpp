// Help as a product (issue 2, point 8): one command table drives --help, the
// man pages and the completions. These tests fail when the committed files in
// manpages/ and completions/ or any --help text disagree with the table.

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include "cli/table.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "tests/cli/support.hpp"

namespace emco::test {
namespace {

const fs::path k_source = EMCO_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::set<std::string> file_names(const fs::path& dir) {
  std::set<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.insert(e.path().filename().string());
  return out;
}

std::vector<const cli::CommandSpec*> visible_commands() {
  std::vector<const cli::CommandSpec*> v;
  for (const auto& c : cli::commands())
    if (!c.hidden) v.push_back(&c);
  return v;
}

bool path_is_unique(const cli::CommandSpec& c) {
  int n = 0;
  for (const auto& o : cli::commands()) n += o.path == c.path;
  return n == 1;
}

std::string troff(const std::string& text) {
  std::string out;
  for (char ch : text) out += ch == '-' ? std::string("\\-") : std::string(1, ch);
  return out;
}

TEST_CASE("no two commands share a path", "[docs]") {
  for (const auto* c : visible_commands()) {
    INFO("duplicate command 'emco " << join(c->path, " ") << "'");
    CHECK(path_is_unique(*c));
  }
}

// A command line is parsed against the sections its first two words name
// only (start-up builds no other): every command must be found there.
TEST_CASE("every command is among the commands of its first two words", "[docs]") {
  for (const auto& c : cli::commands()) {
    std::vector<std::string> words(c.path.begin(), c.path.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(2, c.path.size())));
    INFO("'emco " << join(c.path, " ") << "' is not in commands_for({\"" << join(words, "\", \"") << "\"})");
    bool found = false;
    for (const auto* o : cli::commands_for(words)) found = found || o->path == c.path;
    CHECK(found);
  }
  // A top-level verb is not filed under a noun, and the other way round.
  for (const auto* c : cli::commands_for({"version"})) CHECK(c->path.size() >= 1);
  CHECK(cli::commands_for({"no-such-word"}).size() == cli::commands_for({"version"}).size());
  // Sub-nouns and commands filed apart are built without their siblings.
  bool hook = false;
  for (const auto* c : cli::commands_for({"dig", "instantiate"})) hook = hook || (c->path.size() > 1 && c->path[1] == "hook");
  CHECK_FALSE(hook);
  for (const auto* c : cli::commands_for({"dig", "status"})) CHECK(join(c->path, " ") == "dig status");
  bool dig_verbs = false;
  for (const auto* c : cli::commands_for({"dig", "hook"})) dig_verbs = dig_verbs || c->path.size() == 2;
  CHECK_FALSE(dig_verbs);
}

TEST_CASE("committed man pages and completions match the command table", "[docs]") {
  Sandbox s;
  for (const char* what : {"man", "bash", "zsh", "fish"}) {
    Run r = s.emco({"__docs", what, (s.root() / (std::string(what) == "man" ? "manpages" : "completions")).string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  for (const char* dir : {"manpages", "completions"}) {
    INFO("directory " << dir << " is stale: run scripts/gen-docs.sh and commit the result");
    auto generated = file_names(s.path(dir));
    auto committed = file_names(k_source / dir);
    REQUIRE(!generated.empty());
    CHECK(generated == committed);
    for (const auto& name : generated) {
      INFO(std::string(dir) + "/" + name + " differs from the generated file: run scripts/gen-docs.sh");
      CHECK(slurp(s.path(dir) / name) == slurp(k_source / dir / name));
    }
  }
}

TEST_CASE("one man page per noun, every command and flag in it", "[docs]") {
  std::set<std::string> expected = {"emco.1"};
  for (const auto& n : cli::nouns()) expected.insert("emco-" + n.name + ".1");
  CHECK(file_names(k_source / "manpages") == expected);
  for (const auto* c : visible_commands()) {
    if (!path_is_unique(*c)) continue;  // see "no two commands share a path"
    bool is_noun = false;
    for (const auto& n : cli::nouns()) is_noun = is_noun || n.name == c->path[0];
    fs::path page = k_source / "manpages" / (is_noun ? "emco-" + c->path[0] + ".1" : "emco.1");
    std::string text = slurp(page);
    std::string title = ".SS \"emco " + troff(join(c->path, " "));
    INFO(page.filename().string() << " lacks 'emco " << join(c->path, " ") << "'");
    auto at = text.find(title + "\"");
    if (at == std::string::npos) at = text.find(title + " ");
    REQUIRE(at != std::string::npos);
    auto end = text.find(".SS ", at + 1);
    std::string section = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    for (const auto& f : c->flags) {
      INFO("flag --" << f.name);
      CHECK(section.find("\\-\\-" + troff(f.name)) != std::string::npos);
    }
  }
}

TEST_CASE("every command's --help shows its arguments and every flag of the table", "[docs]") {
  Sandbox s;
  for (const auto* c : visible_commands()) {
    if (!path_is_unique(*c)) continue;  // see "no two commands share a path"
    std::vector<std::string> args = c->path;
    args.push_back("--help");
    Run r = s.emco(args);
    INFO("emco " << join(c->path, " ") << " --help\n" << r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.rfind("usage: emco " + join(c->path, " "), 0) == 0);
    CHECK(r.out.find(c->summary) != std::string::npos);
    for (const auto& a : c->args) CHECK(r.out.find(a.name) != std::string::npos);
    for (const auto* list : {&c->flags, &cli::global_flags()}) {
      for (const auto& f : *list) {
        std::string label = (f.short_name ? std::string("-") + f.short_name + ", " : std::string()) + "--" + f.name;
        INFO("flag " << label);
        CHECK(r.out.find(label) != std::string::npos);
        CHECK(r.out.find(f.help) != std::string::npos);
      }
    }
  }
}

TEST_CASE("help for groups lists their commands, emco help X equals X --help", "[docs]") {
  Sandbox s;
  Run top = s.emco({"--help"});
  CHECK(top.code == 0);
  for (const auto& n : cli::nouns()) CHECK(top.out.find("  " + n.name + " ") != std::string::npos);
  for (const auto& n : cli::nouns()) {
    bool is_command = false;
    for (const auto* c : visible_commands()) is_command = is_command || c->path == std::vector<std::string>{n.name};
    if (is_command) continue;  // 'emco ctl' is one command, not a group
    Run g = s.emco({n.name});
    INFO("emco " << n.name << "\n" << g.out << g.err);
    CHECK(g.code == 0);
    for (const auto* c : visible_commands())
      if (c->path[0] == n.name && c->path.size() > 1)
        CHECK(g.out.find(join(std::vector<std::string>(c->path.begin() + 1, c->path.end()), " ")) != std::string::npos);
  }
  Run a = s.emco({"help", "cluster", "create"});
  Run b = s.emco({"cluster", "create", "--help"});
  CHECK(a.code == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("completions offer every command and flag of the table", "[docs]") {
  std::string bash = slurp(k_source / "completions" / "emco.bash");
  std::string zsh = slurp(k_source / "completions" / "_emco");
  std::string fish = slurp(k_source / "completions" / "emco.fish");
  REQUIRE(!bash.empty());
  CHECK(shell("bash -n " + quote((k_source / "completions" / "emco.bash").string())).code == 0);
  for (const auto* c : visible_commands()) {
    std::string path = join(c->path, " ");
    INFO("command " << path);
    CHECK(fish.find("-a " + c->path.back()) != std::string::npos);
    for (const auto& f : c->flags) {
      INFO("flag --" << f.name);
      CHECK(fish.find("'__emco_path_is " + path + "' -l " + f.name) != std::string::npos);
      CHECK(std::regex_search(zsh, std::regex("\"" + path + "\"\\*\\) compadd -- [^\\n]*--" + f.name + "( |\\n| ;;)")));
    }
  }
  // Run the bash completion the way bash does and check a few answers.
  auto complete = [&](const std::string& line) {
    std::string script = "source " + quote((k_source / "completions" / "emco.bash").string()) +
                         "; COMP_WORDS=(" + line + "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _emco; printf '%s\\n' \"${COMPREPLY[@]}\"";
    Run r = shell("bash -c " + quote(script));
    INFO(r.err);
    CHECK(r.code == 0);
    return r.out;
  };
  auto has = [](const std::string& out, const std::string& word) {
    for (const auto& l : lines(out))
      if (l == word) return true;
    return false;
  };
  CHECK(has(complete("emco ''"), "apply"));
  CHECK(has(complete("emco ''"), "cluster"));
  CHECK(has(complete("emco cluster ''"), "label"));
  CHECK(has(complete("emco cluster label ''"), "add"));
  CHECK(has(complete("emco apply --"), "--filename"));
  CHECK(has(complete("emco apply --"), "--continue-on-error"));
  CHECK(has(complete("emco get -o ''"), "json"));
  for (const auto* c : visible_commands()) {
    std::string words = "emco";
    for (const auto& w : c->path) words += " " + w;
    std::string out = complete(words + " --");
    INFO("bash completion of '" << words << " --'");
    for (const auto& f : c->flags) CHECK(has(out, "--" + f.name));
  }
}

TEST_CASE("exit codes are documented in emco.1 and README.md", "[docs]") {
  std::string man = slurp(k_source / "manpages" / "emco.1");
  auto at = man.find(".SH EXIT STATUS");
  REQUIRE(at != std::string::npos);
  for (const auto& e : exit_code_docs()) CHECK(man.find(".B " + std::to_string(e.code) + "\n", at) != std::string::npos);

  std::string readme = slurp(k_source / "README.md");
  INFO("README.md needs a section '## Exit codes' with a table '| code | meaning |' listing exit_code_docs()");
  auto section = readme.find("## Exit codes");
  REQUIRE(section != std::string::npos);
  auto end = readme.find("\n## ", section + 1);
  std::string table = readme.substr(section, end == std::string::npos ? std::string::npos : end - section);
  std::set<int> listed;
  std::regex row(R"(\n\|\s*`?(\d+)`?\s*\|)");
  for (auto it = std::sregex_iterator(table.begin(), table.end(), row); it != std::sregex_iterator(); ++it)
    listed.insert(std::stoi((*it)[1]));
  std::set<int> documented;
  for (const auto& e : exit_code_docs()) documented.insert(e.code);
  CHECK(listed == documented);
}

TEST_CASE("the man pages render without groff warnings", "[docs]") {
  if (shell("command -v groff").code != 0) {
    WARN("skipped: groff is not installed");
    return;
  }
  for (const auto& name : file_names(k_source / "manpages")) {
    Run r = shell("groff -ww -z -man " + quote((k_source / "manpages" / name).string()));
    INFO(name << ": " << r.err);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
  }
}

}  // namespace
}  // namespace emco::test
