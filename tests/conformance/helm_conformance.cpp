// Helm conformance driver: renders every chart x variant of a corpus directory the way
// `helm template rel chart --namespace ns [-f values-custom.yaml]` does, in this one process,
// and compares with helm's recorded output.
//
//   helm_conformance CORPUS_DIR OUT_DIR [NAME...]
//
// For each render it writes OUT_DIR/<name>-<variant>.{yaml,stderr} and prints one line:
//   PASS <name>/<variant> [byte-identical|yaml-equal|masked|error-matches]
//   FAIL <name>/<variant>: <reason>
// and finally "N passed, M failed" plus "B byte-identical". A render passes when
//   - helm succeeded: the same "# Source:" documents in the same order, each equal after
//     parsing both as YAML; for renders listed with a .nondet file, the lines helm's two
//     runs disagreed on are compared up to their key only (a line without a key, such as
//     a block scalar's base64 of a random password, by its indentation and length);
//   - helm failed: we fail too, with the same "Error: ..." message.
// Exit status: 0 when everything passed, 1 otherwise.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "core/helm/helm.hpp"
#include "core/template/value.hpp"
#include "core/util/strings.hpp"

namespace fs = std::filesystem;
using namespace emco;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary);
  out << data;
}

struct Doc {
  std::string source;
  std::string body;
};

// Splits helm template output at its "---\n# Source: X\n" headers.
std::vector<Doc> split_sources(const std::string& text) {
  std::vector<Doc> docs;
  const std::string header = "---\n# Source: ";
  size_t pos = text.find(header);
  while (pos != std::string::npos) {
    size_t line_end = text.find('\n', pos + header.size());
    if (line_end == std::string::npos) line_end = text.size();
    Doc d;
    d.source = text.substr(pos + header.size(), line_end - pos - header.size());
    size_t next = text.find("\n" + header, line_end);
    size_t body_end = next == std::string::npos ? text.size() : next + 1;
    d.body = line_end < body_end ? text.substr(line_end + 1, body_end - line_end - 1) : "";
    docs.push_back(std::move(d));
    pos = next == std::string::npos ? std::string::npos : next + 1;
  }
  return docs;
}

bool yaml_equal(const std::string& a, const std::string& b) {
  if (a == b) return true;
  try {
    auto va = tmpl::parse_yaml_documents(a, tmpl::YamlMode::helm, "expected");
    auto vb = tmpl::parse_yaml_documents(b, tmpl::YamlMode::helm, "actual");
    if (va.size() != vb.size()) return false;
    for (size_t i = 0; i < va.size(); ++i)
      if (!deep_equal(va[i], vb[i])) return false;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Line numbers (1-based, in helm's first run = the expected file) that differ between runs.
std::set<size_t> nondet_lines(const std::string& diff) {
  std::set<size_t> lines;
  for (const auto& line : split(diff, '\n')) {
    if (!starts_with(line, "@@ -")) continue;
    size_t start = std::stoul(line.substr(4));
    size_t count = 1;
    auto comma = line.find(',');
    auto space = line.find(' ', 4);
    if (comma != std::string::npos && comma < space) count = std::stoul(line.substr(comma + 1));
    for (size_t i = 0; i < count; ++i) lines.insert(start + i);
  }
  return lines;
}

// The key part of a "key: value" line (the whole line when there is no ": ").
std::string line_key(const std::string& line) {
  auto p = line.find(": ");
  if (p != std::string::npos) return line.substr(0, p + 2);
  const auto indent = line.find_first_not_of(' ');
  return std::to_string(indent == std::string::npos ? line.size() : indent) + " " + std::to_string(line.size());
}

std::string first_error_line(const std::string& err) {
  for (const auto& line : split(err, '\n'))
    if (starts_with(line, "Error: ")) return line;
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: helm_conformance CORPUS_DIR OUT_DIR [NAME...]\n";
    return 2;
  }
  fs::path corpus = argv[1];
  fs::path out_dir = argv[2];
  fs::create_directories(out_dir);
  std::set<std::string> only(argv + 3, argv + argc);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(corpus))
    if (e.is_directory() && fs::exists(e.path() / "chart") && (only.empty() || only.count(e.path().filename())))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());

  int passed = 0, failed = 0, identical = 0;
  for (const auto& name : names) {
    fs::path dir = corpus / name;
    for (const std::string variant : {"default", "custom"}) {
      fs::path expected_path = dir / ("expected-" + variant + ".yaml");
      if (!fs::exists(expected_path)) continue;
      std::string expected = slurp(expected_path);
      std::string expected_err = fs::exists(dir / ("expected-" + variant + ".stderr"))
                                     ? slurp(dir / ("expected-" + variant + ".stderr"))
                                     : "";
      bool helm_failed = !first_error_line(expected_err).empty();
      helm::TemplateArgs args;
      args.chart = (dir / "chart").string();
      args.release_name = "rel";
      args.namespace_name = "ns";
      if (variant == "custom") args.value_files.push_back((dir / "values-custom.yaml").string());
      std::ostringstream out, err;
      int rc = helm::template_main(args, out, err);
      std::string actual = out.str();
      write(out_dir / (name + "-" + variant + ".yaml"), actual);
      write(out_dir / (name + "-" + variant + ".stderr"), err.str());
      std::string label = name + "/" + variant;
      std::string reason;
      std::string how;
      if (helm_failed) {
        if (rc == 0) reason = "helm failed but we rendered";
        else if (first_error_line(err.str()) != first_error_line(expected_err))
          reason = "error differs: " + first_error_line(err.str());
        else how = "error-matches";
      } else if (rc != 0) {
        reason = "render failed: " + first_error_line(err.str());
      } else if (actual == expected) {
        how = "byte-identical";
        ++identical;
      } else if (fs::exists(dir / ("expected-" + variant + ".nondet"))) {
        auto masked = nondet_lines(slurp(dir / ("expected-" + variant + ".nondet")));
        auto el = split(expected, '\n'), al = split(actual, '\n');
        if (el.size() != al.size()) {
          reason = "line count differs (" + std::to_string(al.size()) + " vs " + std::to_string(el.size()) + ")";
        } else {
          for (size_t i = 0; i < el.size() && reason.empty(); ++i) {
            bool ok = masked.count(i + 1) ? line_key(el[i]) == line_key(al[i]) : el[i] == al[i];
            if (!ok) reason = "line " + std::to_string(i + 1) + " differs";
          }
        }
        if (reason.empty()) how = "masked";
      } else {
        auto ed = split_sources(expected), ad = split_sources(actual);
        if (ed.size() != ad.size()) {
          reason = "document count differs (" + std::to_string(ad.size()) + " vs " + std::to_string(ed.size()) + ")";
        }
        for (size_t i = 0; i < ed.size() && i < ad.size() && reason.empty(); ++i) {
          if (ed[i].source != ad[i].source) reason = "document " + std::to_string(i + 1) + " source differs: " +
                                                     ad[i].source + " vs " + ed[i].source;
          else if (!yaml_equal(ed[i].body, ad[i].body))
            reason = "document " + std::to_string(i + 1) + " (" + ed[i].source + ") differs";
        }
        if (reason.empty()) how = "yaml-equal";
      }
      if (reason.empty()) {
        ++passed;
        std::cout << "PASS " << label << " " << how << "\n";
      } else {
        ++failed;
        std::cout << "FAIL " << label << ": " << reason << "\n";
      }
    }
  }
  std::cout << identical << " byte-identical\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
