#include "cli/serve/api.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/batch_output.hpp"
#include "core/manifest/batch.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli::serve {

namespace fs = std::filesystem;
using nlohmann::json;
using resource::AnchorTarget;

namespace {

// Upstream answers errors with Go's http.Error: plain text and a newline.
http::Response text(int status, const std::string& message) {
  return {.status = status,
          .content_type = "text/plain; charset=utf-8",
          .body = message + "\n",
          .headers = {{"X-Content-Type-Options", "nosniff"}}};
}

http::Response not_allowed(const std::string& method, const std::string& anchor, const std::string& allowed) {
  http::Response r = text(405, method + " is not allowed on '" + anchor + "' (allowed: " + allowed + ")");
  r.headers.push_back({"Allow", allowed});
  return r;
}

// The files of one request, written where prepare_resource reads a
// document's file: a private directory removed with the request.
class Uploads {
public:
  ~Uploads() {
    if (m_dir.empty()) return;
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  const std::string& dir() {
    if (m_dir.empty()) {
      std::string pattern = (fs::temp_directory_path() / "emco-serve-XXXXXX").string();
      if (!::mkdtemp(pattern.data())) fail(ErrorKind::failed, "cannot create a directory for the uploaded files");
      m_dir = pattern;
    }
    return m_dir;
  }
  // Writes `data` as `filename` (its last path element; "file" when it has
  // none) and returns the name written.
  std::string add(const std::string& filename, const std::string& data) {
    std::string name = fs::path(filename).filename().string();
    if (name.empty() || name == "." || name == "..") name = "file";
    while (fs::exists(fs::path(dir()) / name)) name = "_" + name;  // two parts with one name
    const fs::path path = fs::path(dir()) / name;
    std::ofstream out(path, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) fail(ErrorKind::failed, "cannot store the uploaded file '" + name + "'");
    ::chmod(path.c_str(), 0600);
    return name;
  }

private:
  std::string m_dir;
};

// The value of parameter `key` in a header's "a; key=value; ..." list.
std::string header_param(const std::string& value, const std::string& key) {
  for (const auto& piece : split(value, ';')) {
    std::string p = trim(piece);
    auto eq = p.find('=');
    if (eq == std::string::npos || to_lower(trim(p.substr(0, eq))) != key) continue;
    std::string v = trim(p.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return "";
}

// The document emcoctl would have read for this request: the body's
// metadata, spec and clusterLabel (nothing else: file paths come only from
// the uploads) and the uploaded files.
manifest::File request_document(const http::Request& req, const std::string& anchor, bool declarative, Uploads& uploads) {
  json body = json::object();
  json files = json::array();
  std::string single;
  const std::string type = to_lower(req.header("content-type"));
  if (starts_with(type, "multipart/form-data")) {
    bool metadata = false;
    for (const auto& p : parse_multipart(req.body, req.header("content-type"))) {
      if (p.name == "metadata") {
        body = json::parse(p.data, nullptr, false);
        if (body.is_discarded()) fail(ErrorKind::invalid, "the 'metadata' part is not JSON");
        metadata = true;
      } else if (p.name == "file") {
        single = uploads.add(p.filename, p.data);
      } else if (p.name == "files") {
        files.push_back(uploads.add(p.filename, p.data));
      }
    }
    if (!metadata && declarative) fail(ErrorKind::invalid, "the multipart body has no 'metadata' part");
  } else if (!trim(req.body).empty()) {
    body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) fail(ErrorKind::invalid, "the request body is not JSON");
  } else if (declarative) {
    fail(ErrorKind::invalid, "Empty body");
  }
  if (!body.is_object()) fail(ErrorKind::invalid, "the request body must be a JSON object");
  json doc = {{"version", "emco/v2"}, {"resourceContext", {{"anchor", anchor}}}};
  for (const char* key : {"metadata", "spec", "clusterLabel"})
    if (body.contains(key)) doc[key] = body[key];
  if (!single.empty()) doc["file"] = single;
  else if (!files.empty()) doc["files"] = files;
  manifest::ReadOptions ro;
  ro.strict_top_level = false;  // as emcoctl mode: upstream's clients send what upstream ignores
  const std::string base = files.empty() && single.empty() ? fs::current_path().string() : uploads.dir();
  manifest::File file = manifest::parse_text(doc.dump(), req.method + " /v2/" + anchor, base, ro);
  // The document was made here: its positions would point nowhere.
  for (auto& d : file.documents) {
    d.line = 0;
    d.lines.clear();
    d.warnings.clear();
  }
  return file;
}

// The methods each kind of anchor answers (upstream's routes).
std::vector<std::string> methods_of(AnchorTarget t) {
  switch (t) {
    case AnchorTarget::collection: return {"GET", "POST"};
    case AnchorTarget::resource: return {"GET", "PUT", "DELETE"};
    case AnchorTarget::operation: return {"POST"};
    case AnchorTarget::status: return {"GET"};
  }
  return {};
}

}  // namespace

std::vector<Part> parse_multipart(const std::string& body, const std::string& content_type) {
  const std::string boundary = header_param(content_type, "boundary");
  if (boundary.empty()) fail(ErrorKind::invalid, "the multipart body has no boundary (Content-Type: " + content_type + ")");
  const std::string delimiter = "--" + boundary;
  auto bad = [] { fail(ErrorKind::invalid, "the multipart body is malformed"); };
  size_t at = body.find(delimiter);
  if (at == std::string::npos) bad();
  at += delimiter.size();
  std::vector<Part> parts;
  for (;;) {
    if (body.compare(at, 2, "--") == 0) break;  // the closing delimiter
    if (body.compare(at, 2, "\r\n") != 0) bad();
    at += 2;
    size_t head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string::npos) bad();
    Part part;
    for (const auto& line : split(body.substr(at, head_end - at), '\n')) {
      std::string l = trim(line);
      auto colon = l.find(':');
      if (colon == std::string::npos) continue;
      if (to_lower(trim(l.substr(0, colon))) != "content-disposition") continue;
      const std::string v = l.substr(colon + 1);
      part.name = header_param(v, "name");
      part.filename = header_param(v, "filename");
    }
    at = head_end + 4;
    size_t end = body.find("\r\n" + delimiter, at);
    if (end == std::string::npos) bad();
    part.data = body.substr(at, end - at);
    parts.push_back(std::move(part));
    at = end + 2 + delimiter.size();
  }
  return parts;
}

http::Response handle(Context& request_ctx, const http::Request& req, const ApiOptions& options) {
  if (!starts_with(req.path, "/v2/")) return text(404, "404 page not found");
  std::string anchor_text = req.path.substr(4);
  while (ends_with(anchor_text, "/")) anchor_text.pop_back();
  if (anchor_text.empty()) return text(404, "404 page not found");
  std::ostringstream out, err;
  Context ctx(out, err, request_ctx);
  ctx.quiet = true;
  try {
    resource::Anchor a;
    try {
      a = resource::parse_anchor(anchor_text);
    } catch (const Error& e) {
      return text(404, e.message());  // what a router answers for a path it has no route for
    }
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    const std::vector<std::string> allowed = methods_of(a.target);
    if (std::find(allowed.begin(), allowed.end(), method) == allowed.end())
      return not_allowed(req.method, anchor_text, join(allowed, ", "));
    if (method == "GET") {
      const std::string target = req.query.empty() ? anchor_text : anchor_text + "?" + req.query;
      run_anchor(ctx, manifest::Verb::get, target, Format::json, {});
      return {.status = 200, .body = out.str()};
    }
    const bool declarative = a.target == AnchorTarget::collection || a.target == AnchorTarget::resource;
    const manifest::Verb verb = method == "DELETE" ? manifest::Verb::remove : manifest::Verb::apply;
    Uploads uploads;
    manifest::File file;
    if (verb == manifest::Verb::remove) {
      manifest::Document d;
      d.source = "DELETE /v2/" + anchor_text;
      d.index = 1;
      d.anchor_text = anchor_text;
      d.anchor = a;
      d.name = a.key.parts.back().second;
      d.body = std::make_shared<json>(json{{"metadata", json::object()}});
      file.documents.push_back(std::move(d));
    } else {
      file = request_document(req, anchor_text, declarative, uploads);
    }
    manifest::BatchOptions bo;
    bo.continue_on_error = true;  // the error comes back as the item's, with its kind
    bo.create_only = method == "POST";  // upstream's POST creates (409 when it exists); PUT writes
    bo.runtime = &ctx.runtime();
    bo.deliver = false;           // the server's delivery thread drives the queue
    bo.on_warning = [&](const std::string& w) {
      if (options.warn) options.warn(w);
    };
    auto result = manifest::run_batch(ctx.store(), verb, {file}, bo);
    if (result.items.empty()) return text(500, "the request did nothing");
    const manifest::ItemResult& it = result.items.front();
    const int code = http_status(it);
    if (it.outcome == "error") return text(code, it.error);
    if (a.target == AnchorTarget::operation) {
      if (options.queued) options.queued();
      return {.status = code, .content_type = "", .body = ""};
    }
    if (code == 204) return {.status = 204, .content_type = "", .body = ""};
    auto stored = ctx.store().get(resource::parse_anchor(it.anchor).key);
    if (!stored) return text(500, it.anchor + " is not in the workspace after it was stored");
    return {.status = code, .body = manifest::render_object(*stored, false) + "\n"};
  } catch (const Error& e) {
    return text(http_status(e.kind()), e.message());
  }
}

}  // namespace emco::cli::serve
