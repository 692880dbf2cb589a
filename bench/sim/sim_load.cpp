// Load generator for the simulator benchmark: server-side applies (and
// optionally GETs) spread over every cluster of a running simulator, from a
// few threads that each keep one HTTPS connection alive.
//   sim_load DIR OBJECTS_PER_CLUSTER THREADS [get]
// Prints one JSON line: requests, errors, seconds, requests_per_second.

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string field(const std::string& text, const std::string& key) {
  auto pos = text.find(key + ": ");
  if (pos == std::string::npos) return {};
  auto end = text.find('\n', pos);
  return text.substr(pos + key.size() + 2, end - pos - key.size() - 2);
}

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

struct Cluster {
  std::string url;
  std::string auth;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sim_load DIR OBJECTS_PER_CLUSTER THREADS [get]\n");
    return 64;
  }
  std::string dir = argv[1];
  int objects = std::atoi(argv[2]);
  int threads = std::atoi(argv[3]);
  bool get = argc > 4 && std::string(argv[4]) == "get";
  auto info = nlohmann::json::parse(read_file(dir + "/sim.json"));
  int count = info["clusters"];
  size_t width = std::to_string(count).size();
  std::vector<Cluster> clusters;
  for (int i = 1; i <= count; ++i) {
    std::string n = std::to_string(i);
    std::string name = "cluster-" + std::string(width - n.size(), '0') + n;
    std::string kc = read_file(dir + "/kubeconfigs/" + name + ".yaml");
    clusters.push_back({field(kc, "server"), "Authorization: Bearer " + field(kc, "token")});
  }
  curl_global_init(CURL_GLOBAL_ALL);
  std::atomic<long> requests{0}, errors{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      CURL* curl = curl_easy_init();
      curl_easy_setopt(curl, CURLOPT_CAINFO, (dir + "/ca.crt").c_str());
      curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
      curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
      for (size_t c = static_cast<size_t>(t); c < clusters.size(); c += static_cast<size_t>(threads)) {
        curl_slist* headers = curl_slist_append(nullptr, clusters[c].auth.c_str());
        headers = curl_slist_append(headers, "Content-Type: application/apply-patch+yaml");
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        for (int o = 0; o < objects; ++o) {
          std::string name = "bench-" + std::to_string(o);
          std::string url = clusters[c].url + "/api/v1/namespaces/default/configmaps/" + name;
          std::string body;
          if (get) {
            curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
            curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
            curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, nullptr);
          } else {
            url += "?fieldManager=bench";
            body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                   R"(","labels":{"app":"bench"}},"data":{"key":"value-)" + std::to_string(o) + R"("}})";
            curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
            curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PATCH");
            curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
            curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
          }
          long code = 0;
          if (curl_easy_perform(curl) == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
          ++requests;
          if (code < 200 || code >= 300) ++errors;
        }
        curl_slist_free_all(headers);
      }
      curl_easy_cleanup(curl);
    });
  for (auto& th : pool) th.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"requests\":%ld,\"errors\":%ld,\"seconds\":%.3f,\"requests_per_second\":%.0f}\n", requests.load(),
              errors.load(), seconds, static_cast<double>(requests.load()) / seconds);
  curl_global_cleanup();
  return errors.load() ? 1 : 0;
}
