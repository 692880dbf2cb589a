// `emco serve` driven by the real curl as upstream's emcoctl drives EMCO:
// JSON bodies, multipart uploads (a kubeconfig per cluster, a Helm chart and
// a profile as .tgz, each in a "file" part next to a "metadata" part),
// lifecycle POSTs and status queries, over three simulated clusters. What
// reaches the clusters and what the status says over HTTP is checked against
// the simulator and `emco dig status`; then the error codes, concurrent
// requests, and the token and TLS required beyond loopback.

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/sim.hpp"
#include "tests/example_fleet.hpp"
#include "tests/logical_cloud/objects.hpp"
#include "tests/shell.hpp"
#include "tests/test_store.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using emco::test::Ran;
using emco::test::sh;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Polls `done` every 100 ms, at most `tries` times: waiting for the
// background delivery, whose duration is not what these tests measure.
template <class F>
bool eventually(F done, int tries = 1200) {
  for (int i = 0; i < tries; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

struct Reply {
  int status = 0;
  std::string body;
  json parsed() const { return json::parse(body, nullptr, false); }
};

// A running `emco serve` over a workspace in `dir`.
struct Server {
  fs::path dir;
  std::string emco;
  pid_t pid = -1;
  std::string url;  // http(s)://HOST:PORT
  fs::path log;

  Server(const fs::path& d, const std::string& emco_cmd, const std::string& flags, const std::string& name = "serve")
      : dir(d), emco(emco_cmd), log(d / (name + ".log")) {
    pid = emco::test::spawn(dir, "env " + emco + " serve " + flags, log);
    REQUIRE(pid > 0);
    const bool up = eventually([&] {
      std::string text = read_text(log);
      auto at = text.find("serving EMCO's REST API on ");
      if (at == std::string::npos) return false;
      auto start = at + std::string("serving EMCO's REST API on ").size();
      auto end = text.find("/v2/", start);
      if (end == std::string::npos) return false;
      url = text.substr(start, end - start);
      return true;
    }, 300);
    INFO(read_text(log));
    REQUIRE(up);
  }
  ~Server() { stop(); }
  int stop() {
    if (pid <= 0) return -1;
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // curl -X METHOD with `args`, the reply body in a file of its own (calls
  // may run at once).
  Reply call(const std::string& method, const std::string& path, const std::string& args = "") {
    static int n = 0;
    const fs::path out = dir / ("reply-" + std::to_string(++n));
    Ran r = sh(dir, "curl -sS -o '" + out.string() + "' -w '%{http_code}' -X " + method + " " + args + " '" + url + path + "'");
    INFO(method << " " << path << ": " << r.out);
    REQUIRE(r.code == 0);
    return {std::stoi(r.out), read_text(out)};
  }
  Reply get(const std::string& path) { return call("GET", path); }
  Reply post_json(const std::string& path, const json& body) {
    write_text(dir / "request.json", body.dump());
    return call("POST", path, "-H 'Content-Type: application/json' --data-binary @request.json");
  }
  // emcoctl's multipart upload: a "metadata" field with the JSON body and a
  // "file" part whose name is "filename", whatever the file is called.
  Reply post_file(const std::string& path, const json& body, const fs::path& file) {
    write_text(dir / "metadata.json", body.dump());
    return call("POST", path, "-F 'metadata=<metadata.json' -F 'file=@" + file.string() + ";filename=filename'");
  }
};

struct Fleet {
  fs::path dir;
  std::string emco;
  std::unique_ptr<emco::sim::Simulator> sim;

  Fleet() {
    dir = fs::temp_directory_path() / ("emco-serve-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    fs::create_directories(dir);
    fs::copy(fs::path(EMCO_SOURCE_DIR) / "examples/quickstart", dir / "quickstart", fs::copy_options::recursive);
    emco = "LSAN_OPTIONS=suppressions='" EMCO_SOURCE_DIR "/tests/lsan.supp' EMCO_WORKSPACE='" + dir.string() +
           "' EMCO_AUTO_RESUME=0 " + std::string(EMCO_BINARY_DIR) + "/emco";
    emco::sim::SimOptions o;
    o.names = {"edge1", "edge2", "edge3"};
    o.clusters = 3;
    o.ready_delay_ms = 50;
    o.finalize_delay_ms = 0;
    o.dir = (dir / "sim").string();
    sim = std::make_unique<emco::sim::Simulator>(o);
    sim->start();
    // On the run's backend (tests/test_store.hpp): SQLite, or a schema of
    // its own on the PostgreSQL server of the store-postgresql runs.
    const std::string store = emco::test::fresh_store();
    REQUIRE(run(store.empty() ? "init" : "init --store '" + store + "' --no-encrypt").code == 0);
    // The packages upstream's clients upload.
    REQUIRE(sh(dir, "tar -czf hello.tgz -C quickstart/charts hello && tar -czf profile.tgz -C quickstart/profiles/hello .").code == 0);
  }
  ~Fleet() {
    sim->stop();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Ran run(const std::string& args) { return sh(dir, emco + " " + args); }
};

const std::string k_ca = "/v2/projects/quickstart/composite-apps/hello-app/v1";
const std::string k_dig = k_ca + "/deployment-intent-groups/hello-dig";

// The quickstart, as HTTP requests: clusters with their kubeconfigs, a
// project, an admin logical cloud, the app with its chart, a profile, a DIG
// placing the app on every cluster labelled edge-cluster.
void create_quickstart(Fleet& f, Server& s) {
  auto created = [](const Reply& r) {
    INFO(r.body);
    CHECK(r.status == 201);
  };
  created(s.post_json("/v2/cluster-providers", {{"metadata", {{"name", "edge"}}}}));
  for (const auto& c : f.sim->cluster_names()) {
    created(s.post_file("/v2/cluster-providers/edge/clusters", {{"metadata", {{"name", c}}}}, f.sim->kubeconfig_path(c)));
    created(s.post_json("/v2/cluster-providers/edge/clusters/" + c + "/labels", {{"clusterLabel", "edge-cluster"}}));
  }
  created(s.post_json("/v2/projects", {{"metadata", {{"name", "quickstart"}}}}));
  created(s.post_json("/v2/projects/quickstart/logical-clouds", {{"metadata", {{"name", "admin"}}}, {"spec", {{"level", "0"}}}}));
  for (const auto& c : f.sim->cluster_names())
    created(s.post_json("/v2/projects/quickstart/logical-clouds/admin/cluster-references",
                        {{"metadata", {{"name", c}}}, {"spec", {{"clusterProvider", "edge"}, {"cluster", c}}}}));
  CHECK(s.call("POST", "/v2/projects/quickstart/logical-clouds/admin/instantiate").status == 202);
  created(s.post_json("/v2/projects/quickstart/composite-apps",
                      {{"metadata", {{"name", "hello-app"}}}, {"spec", {{"compositeAppVersion", "v1"}}}}));
  created(s.post_file(k_ca + "/apps", {{"metadata", {{"name", "hello"}, {"description", "the chart"}}}}, f.dir / "hello.tgz"));
  created(s.post_json(k_ca + "/composite-profiles", {{"metadata", {{"name", "hello-profile"}}}}));
  created(s.post_file(k_ca + "/composite-profiles/hello-profile/profiles",
                      {{"metadata", {{"name", "hello-profile"}}}, {"spec", {{"app", "hello"}}}}, f.dir / "profile.tgz"));
  created(s.post_json(k_ca + "/deployment-intent-groups",
                      {{"metadata", {{"name", "hello-dig"}}},
                       {"spec",
                        {{"compositeProfile", "hello-profile"},
                         {"version", "r1"},
                         {"logicalCloud", "admin"},
                         {"overrideValues", {{{"app", "hello"}, {"values", {{"replicaCount", "2"}}}}}}}}}));
  created(s.post_json(k_dig + "/intents",
                      {{"metadata", {{"name", "intent"}}}, {"spec", {{"intent", {{"genericPlacementIntent", "hello-placement"}}}}}}));
  created(s.post_json(k_dig + "/generic-placement-intents", {{"metadata", {{"name", "hello-placement"}}}}));
  created(s.post_json(k_dig + "/generic-placement-intents/hello-placement/app-intents",
                      {{"metadata", {{"name", "hello-placement"}}},
                       {"spec",
                        {{"app", "hello"},
                         {"intent", {{"allOf", {{{"clusterProvider", "edge"}, {"clusterLabel", "edge-cluster"}}}}}}}}}));
}

std::string deployed_status_of(Server& s, const std::string& dig) {
  Reply r = s.get(dig + "/status?status=deployed");
  return r.status == 200 ? r.parsed().value("deployedStatus", "") : "";
}

std::string deployed_status(Server& s) { return deployed_status_of(s, k_dig); }

}  // namespace

TEST_CASE("emco serve: the quickstart over HTTP with curl reaches the clusters, and the status over HTTP is "
          "emco dig status's",
          "[serve][sim]") {
  Fleet f;
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
  create_quickstart(f, s);

  // What was uploaded is what the CLI stores: the cluster's kubeconfig, the
  // app's chart (GET gives the metadata, as upstream's with Accept: JSON).
  Reply app = s.call("GET", k_ca + "/apps/hello", "-H 'Accept: application/json'");
  REQUIRE(app.status == 200);
  CHECK(app.parsed()["metadata"]["description"] == "the chart");
  Reply clusters = s.get("/v2/cluster-providers/edge/clusters");
  REQUIRE(clusters.status == 200);
  CHECK(clusters.parsed().size() == 3);
  auto cli = f.run("get cluster-providers/edge/clusters -o json");
  REQUIRE(cli.code == 0);
  CHECK(json::parse(cli.out) == clusters.parsed());
  // clm's list queries: the names carrying a label, or every cluster with its labels.
  CHECK(s.get("/v2/cluster-providers/edge/clusters?label=edge-cluster").parsed() == json{"edge1", "edge2", "edge3"});
  CHECK(s.get("/v2/cluster-providers/edge/clusters?label=other").parsed() == json::array());
  Reply labelled = s.get("/v2/cluster-providers/edge/clusters?withLabels=true");
  REQUIRE(labelled.status == 200);
  CHECK(labelled.parsed()[1]["metadata"]["name"] == "edge2");
  CHECK(labelled.parsed()[1]["labels"] == json{{{"clusterLabel", "edge-cluster"}}});
  CHECK(f.run("dig plan quickstart/hello-app/v1/hello-dig").code == 2);  // the CLI plans from what HTTP stored
  // A multipart POST of a cluster that exists: 409, its kubeconfig kept.
  Reply dup = s.post_file("/v2/cluster-providers/edge/clusters", {{"metadata", {{"name", "edge1"}}}}, f.sim->kubeconfig_path("edge1"));
  CHECK(dup.status == 409);
  CHECK(dup.body == "cluster 'edge/edge1' already exists\n");

  // Lifecycle: approve, instantiate (answered at once; delivered in the background).
  CHECK(s.call("POST", k_dig + "/approve").status == 202);
  CHECK(s.call("POST", k_dig + "/instantiate").status == 202);
  REQUIRE(eventually([&] {
    Reply r = s.get(k_dig + "/status?status=deployed&output=summary");
    return r.status == 200 && r.parsed().value("deployedStatus", "") == "Instantiated" &&
           r.parsed()["deployedCounts"].value("Applied", 0) == 9;
  }));
  for (const auto& c : f.sim->cluster_names()) {
    CHECK(f.sim->list(c, "apps/v1", "Deployment", "default").size() == 1);
    CHECK(f.sim->list(c, "v1", "Service", "default").size() == 1);
  }
  // The status over HTTP is the CLI's, query for query, once the simulated
  // workloads are ready (readiness moves between two reads before that).
  REQUIRE(eventually([&] {
    Reply r = s.get(k_dig + "/status?status=ready&output=summary");
    return r.status == 200 && r.parsed().value("readyStatus", "") == "Ready";
  }));
  for (const std::string q : {"status=deployed", "status=deployed&output=all", "status=ready&output=summary",
                              "status=deployed&apps", "status=deployed&clusters&app=hello"}) {
    std::string flags = "--status " + std::string(q.find("ready") != std::string::npos ? "ready" : "deployed");
    if (q.find("output=all") != std::string::npos) flags += " --output all";
    if (q.find("output=summary") != std::string::npos) flags += " --output summary";
    if (q.find("&apps") != std::string::npos) flags += " --apps";
    if (q.find("&clusters") != std::string::npos) flags += " --clusters";
    if (q.find("app=hello") != std::string::npos) flags += " --app hello";
    Reply r = s.get(k_dig + "/status?" + q);
    INFO(q << ": " << r.body);
    REQUIRE(r.status == 200);
    auto status = f.run("dig status quickstart/hello-app/v1/hello-dig -o json " + flags);
    INFO(status.out);
    REQUIRE(status.code == 0);
    CHECK(r.parsed() == json::parse(status.out));
  }

  // A state that refuses the operation is a conflict; terminate empties the clusters.
  Reply again = s.call("POST", k_dig + "/instantiate");
  INFO(again.body);
  CHECK(again.status == 409);
  CHECK(again.body.find("hello-dig") != std::string::npos);
  CHECK(s.call("POST", k_dig + "/terminate").status == 202);
  const bool terminated = eventually([&] {
    for (const auto& c : f.sim->cluster_names())
      if (!f.sim->list(c, "apps/v1", "Deployment", "default").empty()) return false;
    return deployed_status(s) == "Terminated";
  });
  INFO("the server's log:\n" << read_text(s.log) << "status: " << s.get(k_dig + "/status?status=deployed&output=summary").body);
  REQUIRE(terminated);
  CHECK(s.call("DELETE", k_dig + "/generic-placement-intents/hello-placement/app-intents/hello-placement").status == 204);
  CHECK(s.get(k_dig + "/generic-placement-intents/hello-placement/app-intents/hello-placement").status == 404);
  CHECK(s.stop() == 0);
}

TEST_CASE("emco serve: upstream's status codes and plain-text errors", "[serve]") {
  Fleet f;
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
  Reply created = s.post_json("/v2/projects", {{"metadata", {{"name", "p1"}, {"description", "first"}}}});
  CHECK(created.status == 201);
  CHECK(created.parsed()["metadata"]["name"] == "p1");
  // Re-posting what exists: 409 as upstream's services answer, and the
  // resource stays as it was (PUT changes it).
  Reply again = s.post_json("/v2/projects", {{"metadata", {{"name", "p1"}, {"description", "changed"}}}});
  CHECK(again.status == 409);
  CHECK(again.body == "project 'p1' already exists\n");
  CHECK(s.get("/v2/projects/p1").parsed()["metadata"]["description"] == "first");
  // PUT names the resource; the body's name must match it.
  write_text(f.dir / "put.json", json{{"metadata", {{"name", "p1"}, {"description", "second"}}}}.dump());
  Reply put = s.call("PUT", "/v2/projects/p1", "-H 'Content-Type: application/json' --data-binary @put.json");
  CHECK(put.status == 200);
  CHECK(put.parsed()["metadata"]["description"] == "second");
  write_text(f.dir / "put2.json", json{{"metadata", {{"name", "p2"}}}}.dump());
  CHECK(s.call("PUT", "/v2/projects/p1", "-H 'Content-Type: application/json' --data-binary @put2.json").status == 400);
  CHECK(s.call("PUT", "/v2/projects/p3", "-H 'Content-Type: application/json' --data-binary @put2.json").status == 400);

  Reply missing = s.get("/v2/projects/nope");
  CHECK(missing.status == 404);
  CHECK(missing.body.find("nope") != std::string::npos);
  CHECK(s.get("/v2/projects/nope/composite-apps").status == 404);
  CHECK(s.get("/v2/no-such-root").status == 404);
  CHECK(s.get("/healthz").status == 404);
  // Bad bodies: 400 with the reason, nothing stored.
  Reply bad_field = s.post_json("/v2/projects", {{"metadata", {{"name", "Bad Name"}}}});
  CHECK(bad_field.status == 400);
  CHECK(bad_field.body.find("invalid name") != std::string::npos);
  CHECK(s.call("POST", "/v2/projects", "-H 'Content-Type: application/json' --data-binary '{not json'").status == 400);
  CHECK(s.call("POST", "/v2/projects").status == 400);  // Empty body
  CHECK(s.post_json("/v2/projects/p1/composite-apps", {{"metadata", {{"name", "ca"}}}}).status == 400);  // no version
  // A reference to a missing parent: 404; the wrong method: 405 with Allow.
  CHECK(s.post_json("/v2/projects/nope/composite-apps", {{"metadata", {{"name", "ca"}}}, {"spec", {{"compositeAppVersion", "v1"}}}})
            .status == 404);
  CHECK(s.call("POST", "/v2/projects/p1").status == 405);
  CHECK(s.call("DELETE", "/v2/projects").status == 405);
  CHECK(s.get("/v2/projects/p1/composite-apps/ca/v1/deployment-intent-groups/d/approve").status == 405);
  // A chart that is not a gzip tar, a cluster without its kubeconfig: 400.
  CHECK(s.post_json("/v2/projects/p1/composite-apps", {{"metadata", {{"name", "ca"}}}, {"spec", {{"compositeAppVersion", "v1"}}}})
            .status == 201);
  write_text(f.dir / "not-a-chart", "hello");
  Reply chart = s.post_file("/v2/projects/p1/composite-apps/ca/v1/apps", {{"metadata", {{"name", "a"}}}}, f.dir / "not-a-chart");
  CHECK(chart.status == 400);
  CHECK(chart.body.find("gzip") != std::string::npos);
  CHECK(s.post_json("/v2/cluster-providers", {{"metadata", {{"name", "cp"}}}}).status == 201);
  CHECK(s.post_json("/v2/cluster-providers/cp/clusters", {{"metadata", {{"name", "c1"}}}}).status == 400);
  // Deleting what is still referenced is a conflict; in order, it goes.
  CHECK(s.call("DELETE", "/v2/projects/p1").status == 409);
  CHECK(s.call("DELETE", "/v2/projects/p1/composite-apps/ca/v1").status == 204);
  CHECK(s.call("DELETE", "/v2/projects/p1").status == 204);
  CHECK(s.call("DELETE", "/v2/projects/p1").status == 404);
  // Lifecycle operations on what does not exist: 404.
  CHECK(s.call("POST", "/v2/projects/p9/composite-apps/ca/v1/deployment-intent-groups/d/approve").status == 404);
  auto cli = f.run("get projects -o json");
  CHECK(json::parse(cli.out).empty());
}

TEST_CASE("emco serve: concurrent requests from many clients all land", "[serve]") {
  Fleet f;
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0 --workers 4 -q");
  // 24 curl processes at once, each creating a project and reading the list.
  write_text(f.dir / "run.sh",
             "for i in $(seq 1 24); do\n"
             "  ( curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' "
             "--data-binary \"{\\\"metadata\\\":{\\\"name\\\":\\\"p$i\\\"}}\" " + s.url + "/v2/projects > code-$i;\n"
             "    curl -sS -o /dev/null -w '%{http_code}' " + s.url + "/v2/projects > list-$i ) &\n"
             "done\nwait\n");
  REQUIRE(sh(f.dir, "sh run.sh").code == 0);
  for (int i = 1; i <= 24; ++i) {
    CHECK(read_text(f.dir / ("code-" + std::to_string(i))) == "201");
    CHECK(read_text(f.dir / ("list-" + std::to_string(i))) == "200");
  }
  Reply all = s.get("/v2/projects");
  REQUIRE(all.status == 200);
  CHECK(all.parsed().size() == 24);
}

TEST_CASE("emco serve: beyond loopback it needs a token and TLS, and refuses requests without the token",
          "[serve]") {
  Fleet f;
  // 127.0.0.2 is a loopback address to Linux, but not to emco serve: only
  // 127.0.0.1, ::1 and localhost are.
  auto refused = f.run("serve --listen 127.0.0.2:0");
  CHECK(refused.code == 64);
  CHECK(refused.out.find("needs a token and TLS") != std::string::npos);
  write_text(f.dir / "token", "s3cret-token\n");
  CHECK(f.run("serve --listen 127.0.0.2:0 --token-file token").code == 64);
  REQUIRE(sh(f.dir, "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.crt "
                    "-days 1 -subj /CN=emco-serve -addext subjectAltName=IP:127.0.0.2 2>&1")
              .code == 0);
  Server s(f.dir, f.emco, "--listen 127.0.0.2:0 --token-file token --tls-cert server.crt --tls-key server.key");
  REQUIRE(s.url.rfind("https://127.0.0.2:", 0) == 0);
  Reply none = s.call("GET", "/v2/projects", "--cacert server.crt");
  CHECK(none.status == 401);
  CHECK(s.call("GET", "/v2/projects", "--cacert server.crt -H 'Authorization: Bearer wrong'").status == 401);
  Reply ok = s.call("GET", "/v2/projects", "--cacert server.crt -H 'Authorization: Bearer s3cret-token'");
  CHECK(ok.status == 200);
  CHECK(ok.body == "[]\n");
  // Plain HTTP to the TLS port gets no answer.
  CHECK(sh(f.dir, "curl -sS -o /dev/null " + std::string("http") + s.url.substr(5) + "/v2/projects").code != 0);
  // A token on loopback is required too.
  Server local(f.dir, f.emco, "--listen 127.0.0.1:0 --token-file token", "local");
  CHECK(local.get("/v2/projects").status == 401);
  CHECK(local.call("GET", "/v2/projects", "-H 'Authorization: Bearer s3cret-token'").status == 200);
  // The dashboard's files hold no data and load without the token; its data does not.
  CHECK(local.get("/").status == 200);
  CHECK(local.get("/dashboard/config").parsed() == json{{"actions", false}, {"token", true}});
  CHECK(local.get("/dashboard/overview").status == 401);
  CHECK(local.call("GET", "/dashboard/overview", "-H 'Authorization: Bearer s3cret-token'").status == 200);
}

// The response's headers (names in lower case) and status of a GET with `args`.
static std::map<std::string, std::string> head_of(Server& s, const std::string& path, const std::string& args, int& status) {
  Ran r = sh(s.dir, "curl -sS -o /dev/null -D - " + args + " '" + s.url + path + "'");
  REQUIRE(r.code == 0);
  std::map<std::string, std::string> out;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  status = std::stoi(line.substr(line.find(' ') + 1, 3));
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon), v = line.substr(colon + 1);
    for (auto& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    while (!v.empty() && (v.front() == ' ')) v.erase(0, 1);
    while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
    out[k] = v;
  }
  return out;
}

TEST_CASE("emco serve: the dashboard's files are served from the binary, refer to nothing outside it, and are "
          "cached by ETag",
          "[serve][dashboard]") {
  Fleet f;
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
  const std::vector<std::pair<std::string, std::string>> files = {
      {"/", "text/html; charset=utf-8"}, {"/index.html", "text/html; charset=utf-8"},
      {"/app.js", "text/javascript; charset=utf-8"}, {"/app.css", "text/css; charset=utf-8"}};
  for (const auto& [path, type] : files) {
    INFO(path);
    Reply r = s.get(path);
    REQUIRE(r.status == 200);
    CHECK(!r.body.empty());
    // Offline: no address of another server, no protocol-relative one.
    for (const std::string external : {"http:", "https:", "src=\"//", "href=\"//", "url(//", "@import"})
      CHECK(r.body.find(external) == std::string::npos);
    int status = 0;
    auto headers = head_of(s, path, "", status);
    CHECK(status == 200);
    CHECK(headers["content-type"] == type);
    CHECK(headers["cache-control"] == "no-cache");
    REQUIRE(!headers["etag"].empty());
    head_of(s, path, "-H 'If-None-Match: " + headers["etag"] + "'", status);
    CHECK(status == 304);
    head_of(s, path, "-H 'If-None-Match: \"other\"'", status);
    CHECK(status == 200);
  }
  const std::string index = s.get("/").body;
  CHECK(index.find("src=\"app.js\"") != std::string::npos);
  CHECK(index.find("href=\"app.css\"") != std::string::npos);
  CHECK(s.get("/nothing.js").status == 404);
  CHECK(s.get("/dashboard/config").parsed() == json{{"actions", false}, {"token", false}});
}

TEST_CASE("emco serve: the dashboard is read-only unless --allow-actions, and its matrix is emco dig status's",
          "[serve][dashboard][sim]") {
  Fleet f;
  {
    Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
    create_quickstart(f, s);
    // A browser's write (Origin, Sec-Fetch-Site or the dashboard's header) is refused ...
    for (const std::string& header : std::vector<std::string>{"Origin: " + s.url, "Sec-Fetch-Site: same-origin", "X-EMCO-Client: dashboard"}) {
      Reply r = s.call("POST", k_dig + "/approve", "-H '" + header + "'");
      INFO(header << ": " << r.body);
      CHECK(r.status == 403);
      CHECK(r.body.find("--allow-actions") != std::string::npos);
    }
    CHECK(s.call("DELETE", k_dig + "/intents/intent", "-H 'X-EMCO-Client: dashboard'").status == 403);
    CHECK(s.get(k_dig + "/intents/intent").status == 200);
    auto states = [&] { return s.get(k_dig + "/status?status=deployed&output=summary").parsed()["states"]["actions"]; };
    CHECK(states().size() == 1);  // only Created: nothing was approved
    // ... its reads are not, and clients that are not browsers are not affected.
    CHECK(s.call("GET", k_dig + "/status", "-H 'X-EMCO-Client: dashboard'").status == 200);
    CHECK(s.call("POST", k_dig + "/approve").status == 202);
    CHECK(s.stop() == 0);
  }
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0 --allow-actions", "allowed");
  CHECK(s.get("/dashboard/config").parsed()["actions"] == true);
  // The plan of the approved DIG is `emco dig plan`'s: everything to create.
  Reply planned = s.get("/dashboard/plan?dig=" + k_dig.substr(4));
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  CHECK(f.run("dig plan quickstart/hello-app/v1/hello-dig -o json > plan.json").code == 2);  // 2: changes to make
  CHECK(planned.parsed() == json::parse(read_text(f.dir / "plan.json")));
  CHECK(planned.parsed()["summary"]["create"] == 9);
  CHECK(s.get("/dashboard/plan?dig=projects/quickstart").status == 400);
  // Reachability: `emco cluster check` of the provider's clusters.
  Reply checked = s.get("/dashboard/check?provider=edge");
  INFO(checked.body);
  REQUIRE(checked.status == 200);
  const auto check_report = checked.parsed();  // the loop below must not range over a temporary's member
  REQUIRE(check_report["clusters"].size() == 3);
  for (const auto& c : check_report["clusters"]) CHECK(c["checks"]["reachable"]["status"] == "ok");
  CHECK(check_report["failed"] == 0);
  CHECK(s.get("/dashboard/check?provider=none").status == 404);
  // Another site's page may not post to the server even so.
  Reply cross = s.call("POST", k_dig + "/instantiate", "-H 'Origin: http://evil.example' -H 'X-EMCO-Client: dashboard'");
  CHECK(cross.status == 403);
  CHECK(cross.body.find("another site") != std::string::npos);
  CHECK(s.call("POST", k_dig + "/instantiate", "-H 'Origin: " + s.url + "' -H 'X-EMCO-Client: dashboard'").status == 202);
  REQUIRE(eventually([&] {
    Reply r = s.get(k_dig + "/status?status=deployed&output=summary");
    return r.parsed().value("deployedStatus", "") == "Instantiated" && r.parsed()["deployedCounts"].value("Applied", 0) == 9;
  }));

  // The overview: the DIG with its state and revision.
  Reply overview = s.get("/dashboard/overview");
  REQUIRE(overview.status == 200);
  bool found = false;
  const json rows = overview.parsed()["resources"];
  for (const auto& row : rows)
    if (row["anchor"].get<std::string>().find("hello-dig") != std::string::npos) {
      found = true;
      CHECK(row["state"] == "Instantiated");
      CHECK(row["revision"] == 1);
    }
  CHECK(found);

  // The matrix, aggregated and drilled down, against the CLI's status: each
  // cell is the worst status of the app's resources on the cluster.
  const std::string dig = k_dig.substr(4);
  auto cli = f.run("dig status quickstart/hello-app/v1/hello-dig -o json --status deployed --output all");
  REQUIRE(cli.code == 0);
  std::map<std::string, std::string> expected;  // "provider+cluster" -> status
  const json clusters = json::parse(cli.out)["apps"][0]["clusters"];
  for (const auto& c : clusters) {
    std::string worst = "Applied";
    for (const auto& r : c["resources"])
      if (r["deployedStatus"] != "Applied") worst = r["deployedStatus"];
    expected[c["clusterProvider"].get<std::string>() + "+" + c["cluster"].get<std::string>()] = worst;
  }
  REQUIRE(expected.size() == 3);
  Reply by_provider = s.get("/dashboard/matrix?dig=" + dig + "&status=deployed&by=provider");
  INFO(by_provider.body);
  REQUIRE(by_provider.status == 200);
  json m = by_provider.parsed();
  CHECK(m["columns"] == json{{{"name", "edge"}, {"clusters", 3}}});
  CHECK(m["rows"] == json{{{"app", "hello"}, {"cells", {{{"Applied", 3}}}}}});
  json by_label = s.get("/dashboard/matrix?dig=" + dig + "&by=label").parsed();
  CHECK(by_label["columns"] == json{{{"name", "edge-cluster"}, {"clusters", 3}}});
  json drill = s.get("/dashboard/matrix?dig=" + dig + "&by=label&group=edge-cluster&limit=2").parsed();
  CHECK(drill["total"] == 3);
  REQUIRE(drill["columns"].size() == 2);
  json rest = s.get("/dashboard/matrix?dig=" + dig + "&by=label&group=edge-cluster&offset=2&limit=2").parsed();
  REQUIRE(rest["columns"].size() == 1);
  std::map<std::string, std::string> shown;
  for (const json* page : {&drill, &rest})
    for (size_t i = 0; i < (*page)["columns"].size(); ++i)
      shown[(*page)["columns"][i]["name"]] = (*page)["rows"][0]["cells"][i];
  CHECK(shown == expected);
  REQUIRE(eventually([&] {
    return s.get(k_dig + "/status?status=ready&output=summary").parsed().value("readyStatus", "") == "Ready";
  }));
  // Per cluster the columns come a page at a time too.
  json first = s.get("/dashboard/matrix?dig=" + dig + "&by=cluster&limit=2").parsed();
  CHECK(first["total"] == 3);
  CHECK(first["columns"] == json{{{"name", "edge+edge1"}, {"clusters", 1}}, {{"name", "edge+edge2"}, {"clusters", 1}}});
  CHECK(s.get("/dashboard/matrix?dig=" + dig + "&by=cluster&offset=2").parsed()["columns"].size() == 1);
  json ready = s.get("/dashboard/matrix?dig=" + dig + "&status=ready&by=cluster").parsed();
  CHECK(ready["rows"][0]["cells"].size() == 3);
  CHECK(ready["rows"][0]["cells"][0] == json{{"Ready", 1}});
  // Bad parameters name what was expected.
  Reply bad = s.get("/dashboard/matrix?dig=" + dig + "&by=zone");
  CHECK(bad.status == 400);
  CHECK(bad.body.find("provider, label or cluster") != std::string::npos);
  CHECK(s.get("/dashboard/matrix?dig=projects/quickstart/composite-apps/hello-app/v1/deployment-intent-groups/none").status == 404);
  CHECK(s.call("POST", k_dig + "/terminate", "-H 'Origin: " + s.url + "'").status == 202);
  REQUIRE(eventually([&] { return deployed_status(s) == "Terminated"; }));
}

namespace {

// The objects of logical cloud `lc` on a simulated cluster (tests/logical_cloud/objects.hpp).
std::set<std::string> cloud_objects(Fleet& f, const std::string& cluster, const std::string& lc) {
  return emco::test::logical_cloud_objects(*f.sim, cluster, lc);
}

// The clusters over HTTP: provider edge, each simulated cluster with its kubeconfig.
void create_clusters(Fleet& f, Server& s) {
  REQUIRE(s.post_json("/v2/cluster-providers", {{"metadata", {{"name", "edge"}}}}).status == 201);
  for (const auto& c : f.sim->cluster_names())
    REQUIRE(s.post_file("/v2/cluster-providers/edge/clusters", {{"metadata", {{"name", c}}}}, f.sim->kubeconfig_path(c)).status ==
            201);
}

// A logical cloud's state over HTTP (its status anchor), "" while it has none.
std::string cloud_state(Server& s, const std::string& lc) {
  Reply r = s.get("/v2/projects/p/logical-clouds/" + lc + "/status");
  return r.status == 200 ? r.parsed().value("deployedStatus", "") : "";
}

}  // namespace

TEST_CASE("emco serve: standard and privileged logical clouds over HTTP, with user permissions and quotas",
          "[serve][sim][logical_cloud]") {
  Fleet f;
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
  create_clusters(f, s);
  const auto names = f.sim->cluster_names();
  REQUIRE(s.post_json("/v2/projects", {{"metadata", {{"name", "p"}}}}).status == 201);
  const std::string lcs = "/v2/projects/p/logical-clouds";
  // Standard (level 1): a namespace, a user, a namespaced permission and a
  // quota (dcm's anchors), on the first two clusters.
  REQUIRE(s.post_json(lcs, {{"metadata", {{"name", "tenant"}}},
                            {"spec", {{"level", "1"}, {"namespace", "tenant-ns"}, {"user", {{"userName", "alice"}, {"type", "certificate"}}}}}})
              .status == 201);
  REQUIRE(s.post_json(lcs + "/tenant/user-permissions",
                      {{"metadata", {{"name", "perm-ns"}}},
                       {"spec", {{"namespace", "tenant-ns"}, {"apiGroups", {"", "apps"}}, {"resources", {"configmaps", "deployments"}},
                                 {"verbs", {"get", "list", "create"}}}}})
              .status == 201);
  REQUIRE(s.post_json(lcs + "/tenant/cluster-quotas", {{"metadata", {{"name", "q1"}}}, {"spec", {{"pods", "10"}, {"configmaps", "20"}}}})
              .status == 201);
  for (size_t i = 0; i < 2; ++i)
    REQUIRE(s.post_json(lcs + "/tenant/cluster-references",
                        {{"metadata", {{"name", names[i]}}}, {"spec", {{"clusterProvider", "edge"}, {"cluster", names[i]}}}})
                .status == 201);
  // Privileged: besides its namespace's, a cluster-wide permission (namespace
  // "") and one in kube-system.
  REQUIRE(s.post_json(lcs, {{"metadata", {{"name", "ops"}}},
                            {"spec", {{"level", "1"}, {"namespace", "ops-ns"}, {"user", {{"userName", "bob"}, {"type", "certificate"}}}}}})
              .status == 201);
  REQUIRE(s.post_json(lcs + "/ops/user-permissions",
                      {{"metadata", {{"name", "perm-ns"}}},
                       {"spec", {{"namespace", "ops-ns"}, {"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"get"}}}}})
              .status == 201);
  REQUIRE(s.post_json(lcs + "/ops/user-permissions",
                      {{"metadata", {{"name", "perm-cluster"}}},
                       {"spec", {{"namespace", ""}, {"apiGroups", {""}}, {"resources", {"nodes", "namespaces"}}, {"verbs", {"get", "list"}}}}})
              .status == 201);
  REQUIRE(s.post_json(lcs + "/ops/user-permissions",
                      {{"metadata", {{"name", "perm-kube"}}},
                       {"spec", {{"namespace", "kube-system"}, {"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"get"}}}}})
              .status == 201);
  REQUIRE(s.post_json(lcs + "/ops/cluster-references",
                      {{"metadata", {{"name", names[2]}}}, {"spec", {{"clusterProvider", "edge"}, {"cluster", names[2]}}}})
              .status == 201);

  // Stop with nothing in progress is refused, as on the command line.
  Reply idle_stop = s.call("POST", lcs + "/tenant/stop");
  CHECK(idle_stop.status == 409);
  CHECK(idle_stop.body.find("no deployment in progress") != std::string::npos);
  CHECK(f.run("lc stop p/tenant").code == 5);

  for (const std::string lc : {"tenant", "ops"}) {
    Reply r = s.call("POST", lcs + "/" + lc + "/instantiate");
    INFO(lc << ": " << r.body);
    CHECK(r.status == 202);
  }
  INFO("the server's log:\n" << read_text(s.log));
  REQUIRE(eventually([&] { return cloud_state(s, "tenant") == "Instantiated" && cloud_state(s, "ops") == "Instantiated"; }));
  const std::set<std::string> tenant = {"Namespace /tenant-ns", "CertificateSigningRequest /tenant-tenant-ns-user-csr",
                                        "ResourceQuota tenant-ns/q1", "Role tenant-ns/tenant-role0",
                                        "RoleBinding tenant-ns/tenant-roleBinding0"};
  // Permissions in listing order: perm-cluster (0), perm-kube (1), perm-ns (2).
  const std::set<std::string> ops = {"Namespace /ops-ns", "CertificateSigningRequest /ops-ops-ns-user-csr",
                                     "ClusterRole /ops-clusterRole0", "ClusterRoleBinding /ops-clusterRoleBinding0",
                                     "Role kube-system/ops-role1", "RoleBinding kube-system/ops-roleBinding1",
                                     "Role ops-ns/ops-role2", "RoleBinding ops-ns/ops-roleBinding2"};
  // The cloud's objects land once the server delivered them and the user's credentials were issued.
  REQUIRE(eventually([&] {
    return cloud_objects(f, names[0], "tenant") == tenant && cloud_objects(f, names[1], "tenant") == tenant &&
           cloud_objects(f, names[2], "ops") == ops;
  }));
  CHECK(cloud_objects(f, names[2], "tenant").empty());
  // Once delivered, the server issues the user's credentials on every
  // cluster, as a waited 'emco lc instantiate' does.
  auto issued = [&](const std::string& lc) {
    auto cli = f.run("lc status p/" + lc + " -o json");
    REQUIRE(cli.code == 0);
    const json status = json::parse(cli.out);  // ranged over below: it must outlive the loop
    for (const auto& cl : status["clusters"])
      if (cl["credentials"] != "issued") return false;
    return true;
  };
  REQUIRE(eventually([&] { return issued("tenant") && issued("ops"); }));
  for (const std::string lc : {"tenant", "ops"}) {
    // The status over HTTP is what the command line records and reads.
    auto cli = f.run("lc status p/" + lc + " -o json");
    REQUIRE(cli.code == 0);
    json c = json::parse(cli.out);
    Reply r = s.get(lcs + "/" + lc + "/status");
    REQUIRE(r.status == 200);
    CHECK(r.parsed()["states"] == c["states"]);
    CHECK(c["deployedStatus"] == "Instantiated");
    CHECK(c["clusters"].size() == (lc == "tenant" ? 2u : 1u));
  }
  // Instantiating again is a conflict, as on the command line.
  CHECK(s.call("POST", lcs + "/tenant/instantiate").status == 409);
  CHECK(f.run("lc instantiate p/tenant").code == 5);

  // Update: a third cluster joins the standard cloud.
  REQUIRE(s.post_json(lcs + "/tenant/cluster-references",
                      {{"metadata", {{"name", names[2]}}}, {"spec", {{"clusterProvider", "edge"}, {"cluster", names[2]}}}})
              .status == 201);
  CHECK(s.call("POST", lcs + "/tenant/update").status == 202);
  REQUIRE(eventually([&] { return cloud_objects(f, names[2], "tenant") == tenant; }));
  REQUIRE(eventually([&] { return cloud_state(s, "tenant") == "Instantiated"; }));
  REQUIRE(eventually([&] { return issued("tenant"); }));

  // Terminate: nothing of either cloud is left.
  CHECK(s.call("POST", lcs + "/tenant/terminate").status == 202);
  CHECK(s.call("POST", lcs + "/ops/terminate").status == 202);
  REQUIRE(eventually([&] { return cloud_state(s, "tenant") == "Terminated" && cloud_state(s, "ops") == "Terminated"; }));
  REQUIRE(eventually([&] {
    for (const auto& n : names)
      if (!cloud_objects(f, n, "tenant").empty() || !cloud_objects(f, n, "ops").empty()) return false;
    return true;
  }));
  CHECK(s.call("POST", lcs + "/tenant/terminate").status == 409);
  CHECK(s.stop() == 0);
}

namespace {

// The last state of a DIG's history over HTTP (its status's "states").
std::string last_state(Server& s, const std::string& dig) {
  Reply r = s.get(dig + "/status?status=deployed&output=summary");
  if (r.status != 200) return "";
  const json actions = r.parsed()["states"]["actions"];
  return actions.empty() ? "" : actions.back().value("state", "");
}

// The clusters holding the quickstart's Deployment.
std::set<std::string> holding(Fleet& f) {
  std::set<std::string> out;
  for (const auto& c : f.sim->cluster_names())
    if (!f.sim->list(c, "apps/v1", "Deployment", "default").empty()) out.insert(c);
  return out;
}

}  // namespace

TEST_CASE("emco serve: DIG update, rollback, migrate and stop over HTTP end as on the command line",
          "[serve][sim][lifecycle]") {
  Fleet f;
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
  create_quickstart(f, s);
  const std::set<std::string> all = {"edge1", "edge2", "edge3"};
  INFO("the server's log:\n" << read_text(s.log));
  REQUIRE(s.call("POST", k_dig + "/approve").status == 202);
  REQUIRE(s.call("POST", k_dig + "/instantiate").status == 202);
  REQUIRE(eventually([&] { return holding(f) == all && deployed_status(s) == "Instantiated"; }));
  // The app now goes to edge1 only: PUT its placement, POST update.
  const std::string app_intent = k_dig + "/generic-placement-intents/hello-placement/app-intents/hello-placement";
  write_text(f.dir / "intent.json", json{{"metadata", {{"name", "hello-placement"}}},
                                         {"spec", {{"app", "hello"}, {"intent", {{"allOf", {{{"clusterProvider", "edge"}, {"cluster", "edge1"}}}}}}}}}
                                        .dump());
  REQUIRE(s.call("PUT", app_intent, "-H 'Content-Type: application/json' --data-binary @intent.json").status == 200);
  CHECK(s.call("POST", k_dig + "/update").status == 202);
  REQUIRE(eventually([&] { return holding(f) == std::set<std::string>{"edge1"} && deployed_status(s) == "Instantiated"; }));
  auto history = [&] {
    auto h = f.run("dig history quickstart/hello-app/v1/hello-dig -o json");
    REQUIRE(h.code == 0);
    return json::parse(h.out);
  };
  CHECK(history()["actions"].back()["revision"] == 2);
  // Back to revision 1: every cluster again.
  write_text(f.dir / "rollback.json", json{{"metadata", json::object()}, {"spec", {{"revision", 1}}}}.dump());
  CHECK(s.call("POST", k_dig + "/rollback", "-H 'Content-Type: application/json' --data-binary @rollback.json").status == 202);
  REQUIRE(eventually([&] { return holding(f) == all && deployed_status(s) == "Instantiated"; }));
  CHECK(history()["actions"].back()["revision"] == 3);
  // A revision that does not exist: the CLI's refusal, as 404.
  write_text(f.dir / "rollback9.json", json{{"spec", {{"revision", 9}}}}.dump());
  Reply no_rev = s.call("POST", k_dig + "/rollback", "-H 'Content-Type: application/json' --data-binary @rollback9.json");
  INFO(no_rev.body);
  CHECK(no_rev.status / 100 == 4);
  CHECK(f.run("dig rollback quickstart/hello-app/v1/hello-dig --revision 9").code == (no_rev.status == 404 ? 4 : no_rev.status == 409 ? 5 : 3));

  // Migrate to composite app v2 (the same chart, DIG "next" with the same
  // release name), made over HTTP and approved.
  const std::string ca2 = "/v2/projects/quickstart/composite-apps/hello-app/v2";
  const std::string next = ca2 + "/deployment-intent-groups/next";
  REQUIRE(s.post_json("/v2/projects/quickstart/composite-apps",
                      {{"metadata", {{"name", "hello-app"}}}, {"spec", {{"compositeAppVersion", "v2"}}}})
              .status == 201);
  REQUIRE(s.post_file(ca2 + "/apps", {{"metadata", {{"name", "hello"}}}}, f.dir / "hello.tgz").status == 201);
  REQUIRE(s.post_json(ca2 + "/composite-profiles", {{"metadata", {{"name", "hello-profile"}}}}).status == 201);
  REQUIRE(s.post_file(ca2 + "/composite-profiles/hello-profile/profiles",
                      {{"metadata", {{"name", "hello-profile"}}}, {"spec", {{"app", "hello"}}}}, f.dir / "profile.tgz")
              .status == 201);
  REQUIRE(s.post_json(ca2 + "/deployment-intent-groups",
                      {{"metadata", {{"name", "next"}}},
                       {"spec", {{"compositeProfile", "hello-profile"}, {"version", "r1"}, {"logicalCloud", "admin"}}}})
              .status == 201);
  REQUIRE(s.post_json(next + "/intents",
                      {{"metadata", {{"name", "intent"}}}, {"spec", {{"intent", {{"genericPlacementIntent", "hello-placement"}}}}}})
              .status == 201);
  REQUIRE(s.post_json(next + "/generic-placement-intents", {{"metadata", {{"name", "hello-placement"}}}}).status == 201);
  REQUIRE(s.post_json(next + "/generic-placement-intents/hello-placement/app-intents",
                      {{"metadata", {{"name", "hello-placement"}}},
                       {"spec", {{"app", "hello"}, {"intent", {{"allOf", {{{"clusterProvider", "edge"}, {"clusterLabel", "edge-cluster"}}}}}}}}})
              .status == 201);
  write_text(f.dir / "migrate.json",
             json{{"metadata", {{"description", "to v2"}}}, {"spec", {{"targetCompositeAppVersion", "v2"}, {"targetDeploymentIntentGroup", "next"}}}}
                 .dump());
  // Not approved yet: the CLI's conflict.
  Reply early = s.call("POST", k_dig + "/migrate", "-H 'Content-Type: application/json' --data-binary @migrate.json");
  CHECK(early.status == 409);
  CHECK(early.body.find("the target must be Approved") != std::string::npos);
  REQUIRE(s.call("POST", next + "/approve").status == 202);
  CHECK(s.call("POST", k_dig + "/migrate", "-H 'Content-Type: application/json' --data-binary @migrate.json").status == 202);
  REQUIRE(eventually([&] {
    Reply r = s.get(next + "/status?status=deployed&output=summary");
    return r.status == 200 && r.parsed().value("deployedStatus", "") == "Instantiated" &&
           r.parsed()["deployedCounts"].value("Applied", 0) == 9;
  }));
  CHECK(holding(f) == all);
  CHECK(last_state(s, k_dig) == "Updated");  // the source is retired, as 'emco dig migrate' leaves it
  auto next_history = f.run("dig history quickstart/hello-app/v2/next -o json");
  REQUIRE(next_history.code == 0);
  const json next_actions = json::parse(next_history.out)["actions"];
  REQUIRE(next_actions.size() >= 2);
  CHECK(next_actions[next_actions.size() - 2].value("migratedFrom", "") == "v1/hello-dig");

  // Stop: terminate, then instantiate again while edge3 refuses connections
  // (its resources retry), and stop it.
  CHECK(s.call("POST", next + "/terminate").status == 202);
  REQUIRE(eventually([&] { return holding(f).empty() && last_state(s, next) == "Terminated"; }));
  emco::sim::Fault refuse;
  refuse.refuse = true;
  f.sim->set_fault("edge3", refuse);
  CHECK(s.call("POST", next + "/instantiate").status == 202);
  REQUIRE(eventually([&] { return holding(f) == std::set<std::string>{"edge1", "edge2"}; }));
  Reply stop = s.call("POST", next + "/stop");
  INFO(stop.body);
  CHECK(stop.status == 202);
  REQUIRE(eventually([&] { return last_state(s, next) == "InstantiateStopped"; }));
  // The CLI reads the same history, and nothing is left queued for the stopped context.
  auto stopped = f.run("dig history quickstart/hello-app/v2/next -o json");
  CHECK(json::parse(stopped.out)["actions"].back()["state"] == "InstantiateStopped");
  REQUIRE(eventually([&] { return json::parse(f.run("status -o json").out)["queued"].empty(); }, 100));
  f.sim->set_fault("edge3", {});
  CHECK(s.call("POST", next + "/terminate").status == 202);
  REQUIRE(eventually([&] { return holding(f).empty() && last_state(s, next) == "Terminated"; }));
  CHECK(s.stop() == 0);
}

TEST_CASE("emco serve: each cluster's last check is kept in the workspace and shown by its GET, over HTTP and on "
          "the command line",
          "[serve][sim][cluster_check]") {
  Fleet f;
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
  create_clusters(f, s);
  const std::string clusters = "/v2/cluster-providers/edge/clusters";
  CHECK_FALSE(s.get(clusters + "/edge1").parsed().contains("status"));  // never checked
  emco::sim::Fault refuse;
  refuse.refuse = true;
  f.sim->set_fault("edge3", refuse);
  auto checked = f.run("cluster check");
  INFO(checked.out);
  CHECK(checked.code == 1);  // edge3 fails
  const json up = s.get(clusters + "/edge1").parsed();
  REQUIRE(up.contains("status"));
  const json last = up["status"]["lastCheck"];
  CHECK(last["reachable"] == true);
  CHECK(last["time"].get<std::string>().size() >= 20);
  CHECK_FALSE(last["serverVersion"].get<std::string>().empty());
  CHECK_FALSE(last.contains("error"));
  const json down = s.get(clusters + "/edge3").parsed()["status"]["lastCheck"];
  CHECK(down["reachable"] == false);
  CHECK(down["error"].get<std::string>().rfind("reachable: ", 0) == 0);
  CHECK_FALSE(down.contains("serverVersion"));
  // The command line shows the same; the list and clm's withLabels query carry it too.
  auto cli = f.run("cluster get edge/edge3 -o json");
  REQUIRE(cli.code == 0);
  CHECK(json::parse(cli.out) == s.get(clusters + "/edge3").parsed());
  auto yaml = f.run("cluster get edge/edge3 -o yaml");
  CHECK(yaml.out.find("lastCheck:") != std::string::npos);
  CHECK(s.get(clusters).parsed()[2]["status"]["lastCheck"]["reachable"] == false);
  CHECK(s.get(clusters + "?withLabels=true").parsed()[0]["status"]["lastCheck"]["reachable"] == true);
  // The next check replaces it: edge3 answers again; edge2, not checked, keeps its own.
  const json edge2 = s.get(clusters + "/edge2").parsed()["status"]["lastCheck"];
  f.sim->set_fault("edge3", {});
  CHECK(f.run("cluster check edge/edge3").code == 0);
  CHECK(s.get(clusters + "/edge3").parsed()["status"]["lastCheck"]["reachable"] == true);
  CHECK(s.get(clusters + "/edge2").parsed()["status"]["lastCheck"] == edge2);
  // A cluster deleted and made again starts unchecked.
  CHECK(s.call("DELETE", clusters + "/edge2").status == 204);
  REQUIRE(s.post_file(clusters, {{"metadata", {{"name", "edge2"}}}}, f.sim->kubeconfig_path("edge2")).status == 201);
  CHECK_FALSE(s.get(clusters + "/edge2").parsed().contains("status"));
  CHECK(s.stop() == 0);
}

TEST_CASE("emco serve: a POSTed instantiate of examples/traffic gets its service-discovery child from the delivery "
          "thread, and a POSTed terminate takes it",
          "[serve][sim][dtc]") {
  // The example's clusters, project and apps stored from its files (on the
  // run's backend); the lifecycle then goes over HTTP only.
  auto o = emco::test::edge_clusters(3);
  o.nodes = 1;
  o.preinstall = {"istio"};
  emco::test::ExampleFleet f("traffic", "serve-dtc", o, "EMCO_SDS_POLL_MS=100");
  f.use_sim_clusters();
  f.init_and_apply({"01-clusters.yaml", "02-project.yaml", "03-app.yaml"}, emco::test::fresh_store());
  Server s(f.dir, f.emco, "--listen 127.0.0.1:0");
  INFO("the server's log:\n" << read_text(s.log));
  const std::string dig = "/v2/projects/traffic/composite-apps/web-shop/v1/deployment-intent-groups/web-shop-dig";
  REQUIRE(s.call("POST", dig + "/approve").status == 202);
  REQUIRE(s.call("POST", dig + "/instantiate").status == 202);
  // The client's cluster reaches the server through the child's Service and Endpoints.
  json status;
  REQUIRE(eventually([&] {
    Reply r = s.get(dig + "/status?status=deployed");
    status = r.parsed();
    return r.status == 200 && status.contains("nested") && status["nested"][0].value("status", "") == "Instantiated";
  }));
  REQUIRE(status["ChildContextIDs"].size() == 1);
  CHECK_FALSE(status.contains("childContextsPending"));
  CHECK(f.sim->get("edge2", "v1", "Endpoints", "default", "http-service").is_object());
  CHECK(f.sim->get("edge2", "v1", "Service", "default", "http-service").is_object());
  const std::string child = status["ChildContextIDs"][0];
  Reply own = s.get(dig + "/status?status=deployed&instance=" + child);
  REQUIRE(own.status == 200);
  CHECK(own.parsed()["apps"][0]["name"] == "service-discovery");
  // The CLI reads the same.
  auto cli = f.run("dig status traffic/web-shop/v1/web-shop-dig -o json --status deployed");
  REQUIRE(cli.code == 0);
  CHECK(json::parse(cli.out)["ChildContextIDs"] == status["ChildContextIDs"]);

  REQUIRE(s.call("POST", dig + "/terminate").status == 202);
  REQUIRE(eventually([&] {
    return f.sim->get("edge2", "v1", "Endpoints", "default", "http-service").is_null() &&
           deployed_status_of(s, dig) == "Terminated";
  }));
  Reply child_status = s.get(dig + "/status?status=deployed&instance=" + child);
  REQUIRE(child_status.status == 200);
  CHECK(child_status.parsed()["deployedStatus"] == "Terminated");
  CHECK(s.stop() == 0);
}
