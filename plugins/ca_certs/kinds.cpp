// The kinds of ca-certs and their lifecycle, registered with the runtime.

#include "plugins/ca_certs/ca_certs.hpp"
#include "plugins/ca_certs/plugin.hpp"

namespace emco::plugins::ca_certs {

using namespace emco::resource;

namespace {

// A function, not a namespace-scope vector built at every process's start.
std::vector<std::string> operations() {
  return {"enrollment/instantiate",   "enrollment/terminate",   "enrollment/update",
          "distribution/instantiate", "distribution/terminate", "distribution/update"};
}

Schema ca_cert_spec() {
  Schema names_list = array(str());
  return obj({
      opt("certificate", obj({opt("commonName", str())})),
      opt("csrInfo",
          obj({opt("keySize", integer()), opt("version", integer()), opt("dnsNames", names_list),
               opt("emailAddresses", names_list), opt("keyUsages", names_list),
               opt("algorithm", obj({opt("publicKeyAlgorithm", str()), opt("signatureAlgorithm", str())})),
               opt("subject", obj({opt("locale", obj({opt("country", names_list), opt("locality", names_list),
                                                      opt("postalCode", names_list), opt("province", names_list),
                                                      opt("streetAddress", names_list)})),
                                   opt("names", obj({opt("commonNamePrefix", str())})),
                                   opt("organization", obj({opt("names", names_list), opt("units", names_list)}))}))})),
      opt("duration", str()),
      opt("isCA", boolean()),
      opt("issuerRef", obj({opt("name", str()), opt("kind", str()), opt("group", str()), opt("version", str())})),
      opt("issuingCluster", obj({opt("cluster", str()), opt("clusterProvider", str())})),
  });
}

Schema cluster_group_spec() {
  return obj({req("clusterProvider", name_str()), opt("scope", one_of({"name", "label"}, true)), opt("cluster", str()),
              opt("label", str())});
}

}  // namespace

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "caCertCp",
                   .parent = "clusterProvider",
                   .elements = {"caCert"},
                   .collection = "ca-certs",
                   .service = "ca-certs",
                   .display = "provider CA certificate",
                   .spec = ca_cert_spec(),
                   .lifecycle = true,
                   .operations = operations()});
  kinds.push_back({.id = "caCertClusterGroupCp",
                   .parent = "caCertCp",
                   .elements = {"caCertClusterGroup"},
                   .collection = "clusters",
                   .service = "ca-certs",
                   .display = "CA certificate cluster group",
                   .spec = cluster_group_spec()});
  kinds.push_back({.id = "caCertLc",
                   .parent = "project",
                   .elements = {"caCertLc"},
                   .collection = "ca-certs",
                   .service = "ca-certs",
                   .display = "logical cloud CA certificate",
                   .spec = ca_cert_spec(),
                   .lifecycle = true,
                   .operations = operations()});
  kinds.push_back({.id = "caCertLogicalCloud",
                   .parent = "caCertLc",
                   .elements = {"caCertLogicalCloud"},
                   .collection = "logical-clouds",
                   .service = "ca-certs",
                   .display = "CA certificate logical cloud",
                   .spec = obj({req("logicalCloud", name_str())})});
  kinds.push_back({.id = "caCertClusterGroupLc",
                   .parent = "caCertLogicalCloud",
                   .elements = {"caCertClusterGroupLc"},
                   .collection = "clusters",
                   .service = "ca-certs",
                   .display = "CA certificate cluster group",
                   .spec = cluster_group_spec()});
  runtime.plugins.push_back(
      {.name = "ca-certs",
       .summary = "CA certificate enrollment and distribution",
       .services = {"ca-certs"},
       .runs = true});
  install_lifecycle(runtime);
}

}  // namespace emco::plugins::ca_certs
