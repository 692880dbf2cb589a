// ca-certs: golden objects of enrollment and distribution, bad intents at
// plan time, and both variants end to end on the in-process simulator, whose
// cert-manager CA issuer signs the requests with a root the test makes; the
// Secrets distributed to the edge clusters verify against that root with
// OpenSSL's X509_verify_cert.

#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/store/credentials.hpp"
#include "core/store/store.hpp"
#include "core/util/base64.hpp"
#include "plugins/builtin.hpp"
#include "plugins/ca_certs/ca_certs.hpp"
#include "sim/sim.hpp"

using namespace emco;
using namespace emco::plugins::ca_certs;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext: {anchor: " + anchor + "}\n" + body + "\n";
}

// ---- OpenSSL helpers of the test: a root CA and chain verification ----

struct Root {
  std::string cert, key;
};

Root make_root() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* c = X509_new();
  X509_set_version(c, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c), 1);
  X509_gmtime_adj(X509_getm_notBefore(c), -60);
  X509_gmtime_adj(X509_getm_notAfter(c), 86400L * 365);
  X509_NAME* n = X509_get_subject_name(c);
  X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("test-root-ca"), -1, -1, 0);
  X509_set_issuer_name(c, n);
  X509_set_pubkey(c, key);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, c, c, nullptr, nullptr, 0);
  for (auto [nid, v] : {std::pair{NID_basic_constraints, "critical,CA:TRUE"}, {NID_key_usage, "critical,keyCertSign,cRLSign"},
                        {NID_subject_key_identifier, "hash"}}) {
    X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, &ctx, nid, v);
    X509_add_ext(c, e, -1);
    X509_EXTENSION_free(e);
  }
  REQUIRE(X509_sign(c, key, EVP_sha256()) > 0);
  Root r;
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(b, c);
  char* d = nullptr;
  long len = BIO_get_mem_data(b, &d);
  r.cert.assign(d, static_cast<size_t>(len));
  BIO_free(b);
  b = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
  len = BIO_get_mem_data(b, &d);
  r.key.assign(d, static_cast<size_t>(len));
  BIO_free(b);
  X509_free(c);
  EVP_PKEY_free(key);
  return r;
}

std::vector<X509*> read_certs(const std::string& pem) {
  std::vector<X509*> out;
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* x = PEM_read_bio_X509(b, nullptr, nullptr, nullptr)) out.push_back(x);
  BIO_free(b);
  return out;
}

// Verifies the first certificate of `chain_pem` against `root_pem` with the
// rest of the chain as intermediates; "" when it verifies, else why not.
std::string verify_chain(const std::string& chain_pem, const std::string& root_pem) {
  auto chain = read_certs(chain_pem);
  auto roots = read_certs(root_pem);
  if (chain.empty() || roots.size() != 1) return "no certificates";
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, roots[0]);
  STACK_OF(X509)* untrusted = sk_X509_new_null();
  for (size_t i = 1; i < chain.size(); ++i) sk_X509_push(untrusted, chain[i]);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, chain[0], untrusted);
  int ok = X509_verify_cert(ctx);
  std::string why = ok == 1 ? "" : X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
  X509_STORE_CTX_free(ctx);
  sk_X509_free(untrusted);
  X509_STORE_free(store);
  for (auto* x : chain) X509_free(x);
  for (auto* x : roots) X509_free(x);
  return why;
}

bool key_matches(const std::string& cert_pem, const std::string& key_pem) {
  auto certs = read_certs(cert_pem);
  BIO* b = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  bool ok = !certs.empty() && key && X509_check_private_key(certs[0], key) == 1;
  EVP_PKEY_free(key);
  for (auto* x : certs) X509_free(x);
  return ok;
}

bool is_ca(const std::string& cert_pem) {
  auto certs = read_certs(cert_pem);
  bool ca = !certs.empty() && X509_check_ca(certs[0]) == 1;
  for (auto* x : certs) X509_free(x);
  return ca;
}

// ---- golden files ----

std::string render(const appcontext::AppContext& ctx) {
  std::ostringstream o;
  o << "owner " << ctx.owner.kind << " " << ctx.owner.key.str() << "\n";
  for (const auto& [k, v] : ctx.meta) o << "meta " << k << ": " << v << "\n";
  for (const auto& app : ctx.apps) {
    o << "app " << app.name << "\n";
    for (const auto& c : app.clusters) {
      o << "  cluster " << c.name << "\n";
      for (const auto& r : c.resources) o << "    " << r.name << "\n" << json::parse(r.text()).dump(2) << "\n";
    }
  }
  return o.str();
}

void check_golden(const std::string& name, const std::string& actual) {
  fs::path p = fs::path(EMCO_SOURCE_DIR) / "tests" / "ca_certs" / "golden" / name;
  const char* update = std::getenv("EMCO_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
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

Intent sample_intent(bool logical_cloud) {
  plugins::builtin_runtime();  // installs the plugins' kinds
  Intent in;
  in.logical_cloud = logical_cloud;
  CaCert& c = in.cert;
  static const resource::Kind& cp = resource::kind("caCertCp");
  static const resource::Kind& lc = resource::kind("caCertLc");
  c.kind = logical_cloud ? &lc : &cp;
  c.key = logical_cloud ? resource::Key::parse("project=proj/caCertLc=cert1")
                        : resource::Key::parse("clusterProvider=edge/caCert=cert1");
  c.name = "cert1";
  c.issuing_cluster = "issuers+issuer1";
  c.issuer_name = "root-issuer";
  c.issuer_kind = "ClusterIssuer";
  c.issuer_group = "cert-manager.io";
  c.is_ca = true;
  c.duration = "8760h0m0s";
  in.clusters = {{"edge", "cluster1", {}}, {"edge", "cluster2", {}}};
  if (logical_cloud) in.clusters = {{"edge", "cluster1", {"ns-a", "ns-b"}}, {"edge", "cluster2", {"ns-a"}}};
  return in;
}

}  // namespace

TEST_CASE("enrollment and distribution objects are upstream's", "[ca_certs][golden]") {
  for (bool lc : {false, true}) {
    Intent in = sample_intent(lc);
    std::map<std::string, std::string> csrs = {{"edge+cluster1", "CSR-1\n"}, {"edge+cluster2", "CSR-2\n"}};
    auto e = enrollment_context(in, "100", csrs, "2026-01-01T00:00:00Z");
    REQUIRE(e.apps.size() == 1);
    CHECK(e.apps[0].clusters.size() == 1);
    CHECK(e.apps[0].clusters[0].name == "issuers+issuer1");
    check_golden(lc ? "enrollment-lc.txt" : "enrollment-cp.txt", render(e));

    std::map<std::string, Issued> issued = {{"edge+cluster1", {"CERT-1\n", "ROOT\n", "KEY-1\n"}},
                                            {"edge+cluster2", {"CERT-2\n", "ROOT\n", "KEY-2\n"}}};
    auto d = distribution_context(in, "200", issued, "2026-01-01T00:00:00Z");
    REQUIRE(d.apps.size() == 1);
    CHECK(d.apps[0].clusters.size() == 2);
    check_golden(lc ? "distribution-lc.txt" : "distribution-cp.txt", render(d));
  }
}

TEST_CASE("a signed CertificateRequest is read as cert-manager writes it", "[ca_certs]") {
  std::string problem;
  json cr = {{"status",
              {{"conditions", {{{"type", "Approved"}, {"status", "True"}}, {{"type", "Ready"}, {"status", "True"}}}},
               {"certificate", base64_encode("CERT")},
               {"ca", base64_encode("CA")}}}};
  auto is = issued_by(cr, problem);
  REQUIRE(is);
  CHECK(is->certificate == "CERT");
  CHECK(is->ca == "CA");
  json pending = {{"status", {{"conditions", {{{"type", "Ready"}, {"status", "False"}, {"reason", "Pending"}}}}}}};
  CHECK_FALSE(issued_by(pending, problem));
  CHECK(problem.empty());
  json denied = {{"status", {{"conditions", {{{"type", "Denied"}, {"status", "True"}, {"message", "no"}}}}}}};
  CHECK_FALSE(issued_by(denied, problem));
  CHECK(problem == "Denied: no");
}

TEST_CASE("keys and requests are made with OpenSSL and carry the subject", "[ca_certs]") {
  Intent in = sample_intent(false);
  in.cert.organization = {"Acme"};
  in.cert.dns_names = {"edge.example.com"};
  std::string key = generate_key(2048);
  CHECK(key.find("-----BEGIN RSA PRIVATE KEY-----") == 0);
  std::string csr = make_csr(in.cert, common_name(in.cert, in.clusters[0]), key);
  CHECK(csr.find("-----BEGIN CERTIFICATE REQUEST-----") == 0);
  BIO* b = BIO_new_mem_buf(csr.data(), static_cast<int>(csr.size()));
  X509_REQ* req = PEM_read_bio_X509_REQ(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  REQUIRE(req);
  char cn[256] = {0};
  X509_NAME_get_text_by_NID(X509_REQ_get_subject_name(req), NID_commonName, cn, sizeof cn);
  CHECK(std::string(cn) == "cert1-edge-cluster1-ca");
  EVP_PKEY* pub = X509_REQ_get_pubkey(req);
  CHECK(X509_REQ_verify(req, pub) == 1);
  EVP_PKEY_free(pub);
  X509_REQ_free(req);
}

namespace {

// A workspace with an issuing cluster and two edge clusters on the simulator
// (cert-manager, Istio and KNCC preinstalled), the issuing cluster holding a
// root CA Secret and a ClusterIssuer using it.
struct World {
  sim::Simulator sim;
  fs::path dir;
  store::Workspace ws;
  std::unique_ptr<store::Store> st;
  std::vector<std::string> names;
  Root root = make_root();

  static sim::SimOptions sim_options() {
    sim::SimOptions o;
    o.clusters = 3;
    o.ready_delay_ms = 0;
    o.finalize_delay_ms = 0;
    o.preinstall = {"cert-manager", "istio", "kncc"};
    return o;
  }

  explicit World(bool with_issuer = true) : sim(sim_options()) {
    sim.start();
    names = sim.cluster_names();
    dir = fs::temp_directory_path() / ("emco-cacerts-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    fs::create_directories(dir);
    bool created = false;
    ws = store::init_workspace(dir, created);
    st = store::Store::open(ws);
    std::string y = doc("cluster-providers", "metadata: {name: issuers}") + doc("cluster-providers", "metadata: {name: edge}");
    y += doc("cluster-providers/issuers/clusters", "metadata: {name: " + names[0] + "}\nfile: " + sim.kubeconfig_path(names[0]));
    for (size_t i = 1; i < names.size(); ++i)
      y += doc("cluster-providers/edge/clusters", "metadata: {name: " + names[i] + "}\nfile: " + sim.kubeconfig_path(names[i]));
    apply(y);
    if (with_issuer) install_issuer();
  }
  // The root's Secret and the ClusterIssuer using it, on the issuing cluster.
  void install_issuer() {
    auto target = lifecycle::live_targets(*st, &plugins::builtin_runtime())("issuers+" + names[0], "default");
    target->apply(json{{"apiVersion", "v1"},
                       {"kind", "Secret"},
                       {"metadata", {{"name", "root-ca"}, {"namespace", "cert-manager"}}},
                       {"type", "kubernetes.io/tls"},
                       {"data", {{"tls.crt", base64_encode(root.cert)}, {"tls.key", base64_encode(root.key)}}}}
                      .dump(),
                  false);
    target->apply(json{{"apiVersion", "cert-manager.io/v1"},
                       {"kind", "ClusterIssuer"},
                       {"metadata", {{"name", "root-issuer"}}},
                       {"spec", {{"ca", {{"secretName", "root-ca"}}}}}}
                      .dump(),
                  false);
  }
  ~World() {
    st.reset();
    sim.stop();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  manifest::BatchResult batch(manifest::Verb verb, const std::string& text) {
    manifest::ReadOptions ro;
    manifest::BatchOptions bo;
    bo.runtime = &plugins::builtin_runtime();
    return manifest::run_batch(*st, verb, {manifest::parse_text(text, "test.yaml", dir.string(), ro)}, bo);
  }
  void apply(const std::string& text) { batch(manifest::Verb::apply, text); }

  std::string cert_spec(const std::string& issuer_cluster) const {
    return "spec:\n  isCA: true\n  duration: 8760h\n  issuerRef: {name: root-issuer, kind: ClusterIssuer, group: cert-manager.io}\n"
           "  issuingCluster: {clusterProvider: issuers, cluster: " + issuer_cluster + "}\n"
           "  csrInfo: {keySize: 2048, subject: {organization: {names: [Acme]}}}";
  }

  lifecycle::OperationOptions options() const {
    lifecycle::OperationOptions o;
    o.runtime = &plugins::builtin_runtime();
    o.timeout = 60s;
    o.engine.backoff_initial = 20ms;
    o.engine.backoff_max = 200ms;
    o.engine.poll = 50ms;
    return o;
  }
  lifecycle::OperationResult op(const char* kind, const std::string& key, const std::string& name) {
    return lifecycle::run(*st, resource::kind(kind), resource::Key::parse(key), name, json::object(), system_clock(),
                          options());
  }
};

std::string data_of(const json& secret, const char* key) {
  return base64_decode(secret["data"].value(key, ""), {.lenient = true}).value_or("");
}

}  // namespace

TEST_CASE("cluster-provider certificates: enrollment, distribution, terminate on the simulator", "[ca_certs][sim]") {
  World w;
  const std::string key = "clusterProvider=edge/caCert=cert1";
  w.apply(doc("cluster-providers/edge/ca-certs", "metadata: {name: cert1}\n" + w.cert_spec(w.names[0])) +
          doc("cluster-providers/edge/ca-certs/cert1/clusters",
              "metadata: {name: group1}\nspec: {clusterProvider: edge, scope: name, cluster: " + w.names[1] + "}") +
          doc("cluster-providers/edge/ca-certs/cert1/clusters",
              "metadata: {name: group2}\nspec: {clusterProvider: edge, scope: name, cluster: " + w.names[2] + "}"));

  // Distribution needs an enrollment first.
  CHECK_THROWS_WITH(w.op("caCertCp", key, "distribution/instantiate"), Catch::Contains("enrollment is not instantiated"));

  auto e = w.op("caCertCp", key, "enrollment/instantiate");
  INFO(e.status << " " << (e.failures.empty() ? "" : e.failures.front()));
  REQUIRE(e.delivery == lifecycle::Delivery::done);
  auto requests = w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest");
  REQUIRE(requests.size() == 2);
  for (const auto& cr : requests) {
    CHECK(cr["metadata"]["name"].get<std::string>().rfind(e.context + "-cert1-edge-", 0) == 0);
    CHECK(cr["spec"]["duration"] == "8760h0m0s");
    CHECK(cr["status"].contains("certificate"));
  }
  // The keys are in the workspace, one per request, never in the operation's output.
  CHECK(store::credential_names(*w.st, resource::Key::parse(key).str()).size() == 2);
  CHECK(e.message.find("PRIVATE KEY") == std::string::npos);
  // A second instantiate is refused.
  CHECK_THROWS_WITH(w.op("caCertCp", key, "enrollment/instantiate"), Catch::Contains("already instantiated"));

  auto d = w.op("caCertCp", key, "distribution/instantiate");
  INFO(d.status << " " << (d.failures.empty() ? "" : d.failures.front()));
  REQUIRE(d.delivery == lifecycle::Delivery::done);
  for (size_t i = 1; i < 3; ++i) {
    const std::string base = d.context + "-cert1-edge-" + w.names[i];
    json secret = w.sim.get(w.names[i], "v1", "Secret", "cert-manager", base + "-ca");
    REQUIRE(secret.is_object());
    const std::string chain = data_of(secret, "tls.crt");
    CHECK(verify_chain(chain, w.root.cert) == "");
    CHECK(is_ca(chain));
    CHECK(key_matches(chain, data_of(secret, "tls.key")));
    json issuer = w.sim.get(w.names[i], "cert-manager.io/v1", "ClusterIssuer", "", base + "-issuer");
    REQUIRE(issuer.is_object());
    CHECK(issuer["spec"]["ca"]["secretName"] == base + "-ca");
    json kncc = w.sim.get(w.names[i], "kncc.k8sappconfig.com.gitlab.com/v1alpha1", "ConfigCtrl", "istio-system", base + "-kncc");
    REQUIRE(kncc.is_object());
    REQUIRE(kncc["spec"]["patch"].size() == 2);
    CHECK(kncc["spec"]["patch"][1]["value"] == base + "-issuer");
  }
  // Both phases' status through the anchors, in upstream's CaCertStatus
  // shape (emcoctl get -f of a status anchor; ready is the default query).
  auto got = w.batch(manifest::Verb::get, doc("cluster-providers/edge/ca-certs/cert1/enrollment/status", "") +
                                              "---\nversion: emco/v2\nresourceContext:\n  anchor: cluster-providers/edge/ca-certs/cert1/distribution/status?status=deployed\n");
  REQUIRE(got.items.size() == 2);
  json es = json::parse(got.items[0].object), ds = json::parse(got.items[1].object);
  CHECK(got.items[0].outcome == "found");
  CHECK(got.items[1].anchor == "cluster-providers/edge/ca-certs/cert1/distribution/status?status=deployed");
  CHECK(es["clusterProvider"] == "edge");
  CHECK(!es.contains("name"));
  CHECK(!es.contains("apps"));
  CHECK(es["states"]["actions"].back()["state"] == "Instantiated");
  CHECK(es["states"]["actions"].back()["instance"] == e.context);
  CHECK(es["deployedStatus"] == "Instantiated");
  CHECK(es["readyStatus"] == "Ready");
  CHECK(es["readyCounts"] == json{{"Ready", 2}});
  REQUIRE(es["clusters"].size() == 1);  // the issuing cluster holds both requests
  CHECK(es["clusters"][0]["cluster"] == w.names[0]);
  CHECK(es["clusters"][0]["resources"].size() == 2);
  CHECK(ds["states"]["actions"].back()["instance"] == d.context);
  CHECK(ds["deployedCounts"] == json{{"Applied", 6}});  // Secret, ClusterIssuer, ConfigCtrl on two clusters
  CHECK(!ds.contains("readyCounts"));
  CHECK(ds["clusters"].size() == 2);
  // Unknown status anchors and queries fail naming them.
  CHECK_THROWS_WITH(lifecycle::anchor_status(*w.st, plugins::builtin_runtime(),
                                             resource::parse_anchor("cluster-providers/edge/ca-certs/cert1/status")),
                    Catch::Contains("'status' is not a status of a provider CA certificate"));
  CHECK_THROWS_WITH(w.batch(manifest::Verb::get, "---\nversion: emco/v2\nresourceContext:\n  anchor: cluster-providers/edge/ca-certs/cert1/enrollment/status?status=x\n"),
                    Catch::Contains("test.yaml"));

  // Deleting the certificate is refused while what it delivered is on clusters.
  const std::string cert_doc = doc("cluster-providers/edge/ca-certs", "metadata: {name: cert1}");
  CHECK_THROWS_WITH(w.batch(manifest::Verb::remove, cert_doc), Catch::Contains("is Instantiated"));
  CHECK(w.op("caCertCp", key, "distribution/terminate").delivery == lifecycle::Delivery::done);
  for (size_t i = 1; i < 3; ++i) {
    CHECK(w.sim.list(w.names[i], "v1", "Secret", "cert-manager").empty());
    CHECK(w.sim.list(w.names[i], "cert-manager.io/v1", "ClusterIssuer").empty());
  }
  CHECK(w.op("caCertCp", key, "enrollment/terminate").delivery == lifecycle::Delivery::done);
  CHECK(w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest").empty());
  CHECK(store::credential_names(*w.st, resource::Key::parse(key).str()).empty());
  // Terminated: the certificate and its contexts can go.
  // (delete takes documents last to first, as emcoctl does)
  w.batch(manifest::Verb::remove, cert_doc +
                                      doc("cluster-providers/edge/ca-certs/cert1/clusters", "metadata: {name: group1}") +
                                      doc("cluster-providers/edge/ca-certs/cert1/clusters", "metadata: {name: group2}"));
  CHECK(appcontext::list(*w.st, resource::Key::parse(key)).empty());
}

TEST_CASE("logical-cloud certificates: ProxyConfigs per cloud namespace, update, terminate", "[ca_certs][sim]") {
  World w;
  const std::string key = "project=proj/caCertLc=cert1";
  // Two clouds: blue references both edge clusters, green only the second.
  std::string y = doc("projects", "metadata: {name: proj}");
  for (const auto& [cloud, ns] : {std::pair{"blue", "ns-blue"}, {"green", "ns-green"}})
    y += doc("projects/proj/logical-clouds",
             std::string("metadata: {name: ") + cloud + "}\nspec: {level: \"1\", namespace: " + ns + ", user: {userName: u}}");
  for (size_t i = 1; i < 3; ++i)
    y += doc("projects/proj/logical-clouds/blue/cluster-references",
             "metadata: {name: " + w.names[i] + "}\nspec: {clusterProvider: edge, cluster: " + w.names[i] + "}");
  y += doc("projects/proj/logical-clouds/green/cluster-references",
           "metadata: {name: " + w.names[2] + "}\nspec: {clusterProvider: edge, cluster: " + w.names[2] + "}");
  y += doc("projects/proj/ca-certs", "metadata: {name: cert1}\n" + w.cert_spec(w.names[0]));
  for (const char* cloud : {"blue", "green"}) {
    y += doc("projects/proj/ca-certs/cert1/logical-clouds",
             std::string("metadata: {name: ") + cloud + "-lc}\nspec: {logicalCloud: " + cloud + "}");
    // A label-scoped group: every edge cluster labelled mesh.
    y += doc(std::string("projects/proj/ca-certs/cert1/logical-clouds/") + cloud + "-lc/clusters",
             "metadata: {name: meshed}\nspec: {clusterProvider: edge, scope: label, label: mesh}");
  }
  for (size_t i = 1; i < 3; ++i)
    y += doc("cluster-providers/edge/clusters/" + w.names[i] + "/labels", "clusterLabel: mesh");
  w.apply(y);
  // The clouds' namespaces exist on the edge clusters (the clouds' own instantiate makes them).
  for (size_t i = 1; i < 3; ++i) {
    auto t = lifecycle::live_targets(*w.st, &plugins::builtin_runtime())("edge+" + w.names[i], "default");
    for (const char* ns : {"ns-blue", "ns-green"})
      t->apply(json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}.dump(), false);
  }

  auto e = w.op("caCertLc", key, "enrollment/instantiate");
  REQUIRE(e.delivery == lifecycle::Delivery::done);
  // One request per edge cluster, however many clouds share it.
  CHECK(w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest").size() == 2);
  auto d = w.op("caCertLc", key, "distribution/instantiate");
  INFO(d.status << " " << (d.failures.empty() ? "" : d.failures.front()));
  REQUIRE(d.delivery == lifecycle::Delivery::done);
  auto proxy_configs = [&](size_t i) {
    std::set<std::string> out;
    for (const auto& pc : w.sim.list(w.names[i], "networking.istio.io/v1beta1", "ProxyConfig"))
      out.insert(pc["metadata"].value("namespace", "") + "/" + pc["metadata"].value("name", ""));
    return out;
  };
  const std::string b1 = d.context + "-cert1-edge-" + w.names[1], b2 = d.context + "-cert1-edge-" + w.names[2];
  CHECK(proxy_configs(1) == std::set<std::string>{"ns-blue/" + b1 + "-ns-blue-pc"});
  CHECK(proxy_configs(2) == std::set<std::string>{"ns-blue/" + b2 + "-ns-blue-pc", "ns-green/" + b2 + "-ns-green-pc"});
  json kncc = w.sim.get(w.names[2], "kncc.k8sappconfig.com.gitlab.com/v1alpha1", "ConfigCtrl", "istio-system", b2 + "-kncc");
  REQUIRE(kncc.is_object());
  CHECK(kncc["spec"]["patch"].size() == 1);  // the signer comes from the ProxyConfigs
  json ds = lifecycle::anchor_status(*w.st, plugins::builtin_runtime(),
                                     resource::parse_anchor("projects/proj/ca-certs/cert1/distribution/status?status=deployed"));
  CHECK(ds["project"] == "proj");
  CHECK(ds["deployedStatus"] == "Instantiated");
  CHECK(ds["clusters"].size() == 2);
  CHECK(verify_chain(data_of(w.sim.get(w.names[2], "v1", "Secret", "cert-manager", b2 + "-ca"), "tls.crt"), w.root.cert) == "");

  // Distribution update: a new context replaces the objects on the clusters.
  auto u = w.op("caCertLc", key, "distribution/update");
  REQUIRE(u.delivery == lifecycle::Delivery::done);
  CHECK(u.context != d.context);
  CHECK(w.sim.get(w.names[1], "v1", "Secret", "cert-manager", b1 + "-ca").is_null());
  CHECK(w.sim.get(w.names[1], "v1", "Secret", "cert-manager", u.context + "-cert1-edge-" + w.names[1] + "-ca").is_object());

  // Enrollment update: new keys and requests, the old ones go once signed.
  auto eu = w.op("caCertLc", key, "enrollment/update");
  REQUIRE(eu.delivery == lifecycle::Delivery::done);
  auto requests = w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest");
  REQUIRE(requests.size() == 2);
  for (const auto& cr : requests) CHECK(cr["metadata"]["name"].get<std::string>().rfind(eu.context + "-", 0) == 0);
  auto names = store::credential_names(*w.st, resource::Key::parse(key).str());
  REQUIRE(names.size() == 2);
  for (const auto& n : names) CHECK(n.rfind(eu.context + "-", 0) == 0);

  CHECK(w.op("caCertLc", key, "distribution/terminate").delivery == lifecycle::Delivery::done);
  CHECK(w.op("caCertLc", key, "enrollment/terminate").delivery == lifecycle::Delivery::done);
  for (size_t i = 1; i < 3; ++i) CHECK(proxy_configs(i).empty());
  CHECK(w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest").empty());
}

TEST_CASE("bad certificate intents fail at plan time naming the document", "[ca_certs][sim]") {
  World w;
  const std::string key = "clusterProvider=edge/caCert=cert1";
  w.apply(doc("cluster-providers/edge/ca-certs", "metadata: {name: cert1}\n" + w.cert_spec("nowhere")) +
          doc("cluster-providers/edge/ca-certs/cert1/clusters",
              "metadata: {name: group1}\nspec: {clusterProvider: edge, scope: name, cluster: " + w.names[1] + "}"));
  CHECK_THROWS_WITH(w.op("caCertCp", key, "enrollment/instantiate"),
                    Catch::Contains("provider CA certificate 'edge/cert1'") &&
                        Catch::Contains("spec.issuingCluster names cluster 'issuers+nowhere', which is not registered"));
  // Nothing was made.
  CHECK(appcontext::list(*w.st, resource::Key::parse(key)).empty());
  CHECK(w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest").empty());

  w.apply(doc("cluster-providers/edge/ca-certs", "metadata: {name: cert1}\n" + w.cert_spec(w.names[0])) +
          doc("cluster-providers/edge/ca-certs/cert1/clusters",
              "metadata: {name: group2}\nspec: {clusterProvider: edge, scope: name, cluster: ghost}"));
  CHECK_THROWS_WITH(w.op("caCertCp", key, "enrollment/instantiate"),
                    Catch::Contains("CA certificate cluster group 'edge/cert1/group2'") &&
                        Catch::Contains("cluster 'edge+ghost' is not registered"));
  CHECK(appcontext::list(*w.st, resource::Key::parse(key)).empty());

  // Through a batch file: the error carries the file and line of the operation document.
  try {
    w.apply(doc("cluster-providers/edge/ca-certs/cert1/enrollment/instantiate", ""));
    FAIL("no error");
  } catch (const Error& err) {
    CHECK(std::string(err.what()).find("test.yaml:") != std::string::npos);
    CHECK(std::string(err.what()).find("group2") != std::string::npos);
  }
}

TEST_CASE("an enrollment left queued is persisted and resumed like any context", "[ca_certs][sim]") {
  World w;
  const std::string key = "clusterProvider=edge/caCert=cert1";
  w.apply(doc("cluster-providers/edge/ca-certs", "metadata: {name: cert1}\n" + w.cert_spec(w.names[0])) +
          doc("cluster-providers/edge/ca-certs/cert1/clusters",
              "metadata: {name: group1}\nspec: {clusterProvider: edge, scope: name, cluster: " + w.names[1] + "}"));
  auto o = w.options();
  o.wait = false;  // as --no-wait, or a process killed after the plan was stored
  auto e = lifecycle::run(*w.st, resource::kind("caCertCp"), resource::Key::parse(key), "enrollment/instantiate",
                          json::object(), system_clock(), o);
  CHECK(e.delivery == lifecycle::Delivery::pending);
  CHECK(w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest").empty());
  CHECK(appcontext::header(*w.st, e.context).status != appcontext::status::instantiated);
  // `emco sync` (lifecycle::resume) delivers the stored context.
  auto resumed = lifecycle::resume(*w.st, w.options());
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].context == e.context);
  CHECK(resumed[0].delivery == lifecycle::Delivery::done);
  CHECK(w.sim.list(w.names[0], "cert-manager.io/v1", "CertificateRequest").size() == 1);
  auto d = w.op("caCertCp", key, "distribution/instantiate");
  REQUIRE(d.delivery == lifecycle::Delivery::done);
  CHECK(w.sim.list(w.names[1], "v1", "Secret", "cert-manager").size() == 1);
}

TEST_CASE("enrollment waits for the issuer, and requests made before it exists are signed once it does", "[ca_certs][sim]") {
  World w(false);
  const std::string key = "clusterProvider=edge/caCert=cert1";
  w.apply(doc("cluster-providers/edge/ca-certs", "metadata: {name: cert1}\n" + w.cert_spec(w.names[0])) +
          doc("cluster-providers/edge/ca-certs/cert1/clusters",
              "metadata: {name: group1}\nspec: {clusterProvider: edge, scope: name, cluster: " + w.names[1] + "}"));
  auto o = w.options();
  // Long enough for the request to be delivered under load (ASan), so the
  // wait that remains is the issuer's signature.
  o.timeout = 4s;
  auto e = lifecycle::run(*w.st, resource::kind("caCertCp"), resource::Key::parse(key), "enrollment/instantiate",
                          json::object(), system_clock(), o);
  CHECK(e.delivery == lifecycle::Delivery::pending);
  CHECK(e.status.find("waiting for issuers+" + w.names[0] + " to sign") != std::string::npos);
  CHECK_THROWS_WITH(w.op("caCertCp", key, "distribution/instantiate"), Catch::Contains("enrollment is not ready"));
  w.install_issuer();
  auto d = w.op("caCertCp", key, "distribution/instantiate");
  REQUIRE(d.delivery == lifecycle::Delivery::done);
  json secret = w.sim.get(w.names[1], "v1", "Secret", "cert-manager", d.context + "-cert1-edge-" + w.names[1] + "-ca");
  CHECK(verify_chain(data_of(secret, "tls.crt"), w.root.cert) == "");
}

TEST_CASE("a CertificateRequest of any shape is read without throwing", "[ca_certs][bad]") {
  std::string problem;
  // Conditions and fields of other JSON types than cert-manager's read as absent.
  for (const char* text : {R"([])", R"({"status":"x"})", R"({"status":{"conditions":{"type":"Ready"}}})",
                           R"({"status":{"conditions":[1,null,"Ready",{"type":["Ready"]}]}})",
                           R"({"status":{"conditions":[{"type":"Ready","status":true}]}})"}) {
    CAPTURE(text);
    CHECK_FALSE(issued_by(json::parse(text), problem));
    CHECK(problem.empty());
  }
  json ready_without_ca = {
      {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}, {"certificate", base64_encode("C")}, {"ca", 5}}}};
  CHECK_FALSE(issued_by(ready_without_ca, problem));
  CHECK(problem == "certificate is generated by an invalid certificate authority (no status.ca)");
  json failed = {{"status", {{"conditions", {{{"type", "Ready"}, {"status", "False"}, {"reason", "Failed"}, {"message", 3}}}}}}};
  CHECK_FALSE(issued_by(failed, problem));
  CHECK(problem == "Failed: ");
}
