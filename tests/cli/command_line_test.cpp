// The command line as CLI11 parses it (cli/parse.cpp): the forms it accepts
// besides `--flag value` — `--flag=value`, `-ovalue`, combined short
// switches, `--` before arguments that start with '-' — and that a flag's
// value is the next word whatever it looks like. Each case runs the built
// binary on the base workspace.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/fixture.hpp"

namespace emco::test {
namespace {

using nlohmann::json;

Run run(const Sandbox& s, const std::vector<std::string>& args) {
  Run r = s.emco(args);
  std::string cmd;
  for (const auto& a : args) cmd += " " + a;
  INFO("emco" << cmd << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
  return r;
}

TEST_CASE("a flag's value may follow '=' or, for a short flag, the letter itself", "[command-line]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  Run spaced = run(s, {"project", "get", "proj1", "-o", "json"});
  REQUIRE(spaced.code == 0);
  CHECK(json::parse(spaced.out)["metadata"]["name"] == "proj1");
  for (const auto& form : {std::vector<std::string>{"--output=json"}, {"-ojson"}, {"--output", "json"}}) {
    std::vector<std::string> args = {"project", "get", "proj1"};
    args.insert(args.end(), form.begin(), form.end());
    Run r = run(s, args);
    CHECK(r.code == 0);
    CHECK(r.out == spaced.out);
  }
  // Flags and arguments in any order after the command's words.
  Run before = run(s, {"project", "get", "-o", "json", "proj1"});
  CHECK(before.code == 0);
  CHECK(before.out == spaced.out);
}

TEST_CASE("short switches combine, and -h among them asks for help", "[command-line]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  // emcoctl's -s stops at the first failing document; -q is emco's --quiet.
  s.write("two.yaml", doc("projects/nope/composite-apps", "metadata:\n  name: x\nspec:\n  compositeAppVersion: v1\n") +
                          "---\n" + doc("projects", "metadata:\n  name: p2\n"));
  Run combined = run(s, {"ctl", "apply", "-f", "two.yaml", "-qs"});
  CHECK(combined.code == 0);  // emcoctl prints API errors and exits 0
  CHECK(combined.out.find("Response Code: 404") != std::string::npos);
  CHECK(combined.out.find("Response Code: 201") == std::string::npos);  // stopped before p2
  Run help = run(s, {"project", "create", "-qh"});
  CHECK(help.code == 0);
  CHECK(help.out == run(s, {"project", "create", "--help"}).out);
}

TEST_CASE("a switch given a value is refused by its name, in the long and the short form", "[command-line]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  for (const auto& word : {"--watch=1", "-w=1", "-qw=1"}) {
    Run r = run(s, {"status", word});
    CHECK(r.code == 64);
    CHECK(r.err.find("flag '--watch' takes no value") != std::string::npos);
  }
}

TEST_CASE("a double dash ends the flags: what follows is an argument even when it starts with '-'", "[command-line]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  Run as_flag = run(s, {"project", "get", "-p1"});
  CHECK(as_flag.code == 64);
  CHECK(as_flag.err.find("unknown flag '-p1' for 'emco project get'") != std::string::npos);
  Run as_arg = run(s, {"project", "get", "--", "-p1"});
  CHECK(as_arg.code == 3);  // the argument reached the handler, whose naming rule refuses it
  CHECK(as_arg.err.find("invalid name '-p1'") != std::string::npos);
}

TEST_CASE("a value-taking flag takes the next word even when it starts with '-'", "[command-line]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  REQUIRE(run(s, {"project", "create", "p7", "--description", "-not-a-flag"}).code == 0);
  Run g = run(s, {"project", "get", "p7", "-o", "json"});
  REQUIRE(g.code == 0);
  CHECK(json::parse(g.out)["metadata"]["description"] == "-not-a-flag");
}

TEST_CASE("the workspace flag may be given twice (the last one counts), other flags may not", "[command-line]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  Sandbox elsewhere;
  Run r = run(elsewhere, {"project", "get", "proj1", "--workspace", elsewhere.root().string(), "--workspace", s.root().string()});
  CHECK(r.code == 0);
  Run twice = run(s, {"project", "get", "proj1", "-q", "--quiet"});
  CHECK(twice.code == 64);
  CHECK(twice.err.find("flag '--quiet' given more than once") != std::string::npos);
}

}  // namespace
}  // namespace emco::test
