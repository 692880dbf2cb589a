// The one semver module (Masterminds/semver v3) behind Helm and Sprig. The cases below are
// the ones where the two copies it replaced disagreed, and the rules neither tested.
#include <catch2/catch.hpp>

#include "core/util/error.hpp"
#include "core/util/semver.hpp"

using namespace emco;

namespace {

bool sat(const char* constraint, const char* version) {
  auto v = semver::parse_version(version);
  REQUIRE(v);
  return semver::satisfies(semver::parse_constraints(constraint), *v);
}

}  // namespace

TEST_CASE("semver: versions parse as Masterminds' NewVersion", "[semver]") {
  auto v = semver::parse_version("v1.2.3-beta.1+build.5");
  REQUIRE(v);
  CHECK(v->major == 1);
  CHECK(v->minor == 2);
  CHECK(v->patch == 3);
  CHECK(v->prerelease == "beta.1");
  CHECK(v->metadata == "build.5");
  CHECK(v->original == "v1.2.3-beta.1+build.5");
  CHECK(semver::parse_version("1")->minor == 0);
  CHECK_FALSE(semver::parse_version("1.2.3-01"));      // numeric prerelease with a leading zero
  CHECK(semver::parse_version("1.2.3+01"));            // metadata may have one
  CHECK_FALSE(semver::parse_version("1.2.3-"));        // empty prerelease
  CHECK_FALSE(semver::parse_version("1.2.3-a..b"));    // empty identifier
  CHECK_FALSE(semver::parse_version("V1.2.3"));        // only a lowercase v
  CHECK_FALSE(semver::parse_version(" 1.2.3"));        // no trimming
  CHECK_FALSE(semver::parse_version("99999999999999999999.0.0"));  // past uint64
}

TEST_CASE("semver: precedence follows semver 2.0", "[semver]") {
  auto cmp = [](const char* a, const char* b) {
    return semver::compare(*semver::parse_version(a), *semver::parse_version(b));
  };
  CHECK(cmp("1.0.0-alpha", "1.0.0-alpha.1") < 0);
  CHECK(cmp("1.0.0-alpha.1", "1.0.0-alpha.beta") < 0);  // numeric below alphanumeric
  CHECK(cmp("1.0.0-beta.2", "1.0.0-beta.11") < 0);      // numerically
  CHECK(cmp("1.0.0-rc.1", "1.0.0") < 0);
  CHECK(cmp("1.0.0+a", "1.0.0+b") == 0);                // metadata ignored
}

TEST_CASE("semver: wildcard comparisons keep Masterminds' dirty rules", "[semver]") {
  // > with a partial version means above the whole range (the Sprig copy had this; the
  // Helm copy treated >1.2 as >=1.3.0 too, but not >1.2.3-style prereleases)
  CHECK_FALSE(sat(">1.2", "1.2.9"));
  CHECK(sat(">1.2", "1.3.0"));
  CHECK_FALSE(sat(">1", "1.9.0"));
  CHECK(sat(">1", "2.0.0"));
  // <= with a partial version includes the whole range
  CHECK(sat("<=1.2", "1.2.99"));
  CHECK_FALSE(sat("<=1.2", "1.3.0"));
  CHECK(sat("<=1.x", "1.99.0"));
  // != with a wildcard excludes the range
  CHECK_FALSE(sat("!=1.2.x", "1.2.7"));
  CHECK(sat("!=1.2.x", "1.3.0"));
  CHECK(sat("!=1.2.3", "1.2.4"));
  // ~ and ^ with partial versions and 0.x
  CHECK(sat("~1", "1.9.9"));
  CHECK_FALSE(sat("~1", "2.0.0"));
  CHECK(sat("^0.2", "0.2.9"));
  CHECK_FALSE(sat("^0.2", "0.3.0"));
  CHECK(sat("^0.0.3", "0.0.3"));
  CHECK_FALSE(sat("^0.0.3", "0.0.4"));
  CHECK(sat("^0", "0.9.0"));
  CHECK_FALSE(sat("^0", "1.0.0"));
  CHECK(sat("^*", "7.0.0"));
  CHECK(sat("~*", "7.0.0"));
  CHECK(sat("x", "7.0.0"));
  CHECK(sat("~>1.2", "1.2.5"));
  CHECK(sat("=>1.2", "1.2.0"));
  CHECK(sat("=<1.2", "1.2.5"));
}

TEST_CASE("semver: a prerelease needs a comparison that names one, term by term", "[semver]") {
  CHECK(sat(">=1.0.0-0", "1.5.0-beta"));
  // the Helm copy admitted a prerelease when any term of the group named one; Masterminds
  // checks each term, so the "<2.0.0" term turns it away
  CHECK_FALSE(sat(">=1.0.0-0 <2.0.0", "1.5.0-beta"));
  CHECK(sat(">=1.0.0-0 <2.0.0-0", "1.5.0-beta"));
  CHECK_FALSE(sat("1.x", "1.2.0-rc.1"));
}

TEST_CASE("semver: constraint syntax", "[semver]") {
  CHECK(sat(">= 1.19, < 1.33", "1.32.0"));
  CHECK(sat(">=1.19,<1.33", "1.32.0"));
  CHECK(sat("> 1.2 < 3", "2.0.0"));            // an operator apart from its version
  CHECK(sat("1.2 - 1.4", "1.4.9"));           // the upper end of a range is <= 1.4 (1.4.x)
  CHECK_FALSE(sat("1.2 - 1.4", "1.5.0"));
  CHECK(sat("<1.0 || >=2.0", "2.1.0"));
  CHECK(sat("1.2.3+meta", "1.2.3"));          // the constraint's metadata is dropped
  auto improper = [](const char* c) {
    try {
      semver::parse_constraints(c);
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("parsed");
  };
  CHECK(improper("junk") == "improper constraint: junk");
  CHECK(improper(">=1 ||  ") == "improper constraint:   ");  // the segment as given
  CHECK(improper("") == "improper constraint: ");
  CHECK(improper("1.2.3.4") == "improper constraint: 1.2.3.4");
  CHECK(improper(">=1.2>2") == "improper constraint: >=1.2>2");
  // Helm's convenience: false instead of an error, and an empty constraint means any version
  CHECK_FALSE(semver::satisfies(std::string_view("junk"), std::string_view("1.0.0")));
  CHECK_FALSE(semver::satisfies(std::string_view(">=1"), std::string_view("not-a-version")));
  CHECK(semver::satisfies(std::string_view(" "), std::string_view("1.0.0")));
}
