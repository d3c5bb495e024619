// aesmux-info: what aesmux would do on this machine, and where its work went.
//
//   aesmux-info                 the paths this build has, provider, kernel
//                               tier, CPU features and whether the afalg
//                               path serves each family, as loaded by
//                               OpenSSL with the current configuration
//                               (OPENSSL_CONF, AESMUX_*)
//   aesmux-info --stats PREFIX  sums the statistics files PREFIX.<pid>
//                               written by processes that ran aesmux
#include <dirent.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "kernels/tiers.h"

namespace {

std::string Param(OSSL_PROVIDER *provider, const char *key) {
  const char *value = nullptr;
  OSSL_PARAM params[] = {
      OSSL_PARAM_utf8_ptr(key, const_cast<char **>(&value), 0),
      OSSL_PARAM_END};
  if (!OSSL_PROVIDER_get_params(provider, params) || value == nullptr) {
    return "?";
  }
  return value;
}

// The paths this build has, and why any is missing.
std::string PathsBuilt() {
  if (aesmux::kernels::kTiers.empty()) {
    return "afalg fallback (no simd or mb: " + aesmux::kernels::WhyNoTiers() +
           ")";
  }
  return "simd mb afalg fallback";
}

int ShowProvider() {
  std::cout << "architecture: " << aesmux::kernels::TargetProcessor() << "\n"
            << "paths:        " << PathsBuilt() << "\n"
            << "CPU features: "
            << aesmux::kernels::DescribeCpuFeatures(
                   aesmux::kernels::DetectCpuFeatures())
            << "\n";
  // Loads aesmux as configured (openssl.cnf may already have loaded it).
  OSSL_PROVIDER *provider = OSSL_PROVIDER_load(nullptr, "aesmux");
  if (provider == nullptr) {
    std::cerr << "aesmux-info: OpenSSL could not load aesmux "
                 "(set OPENSSL_MODULES or use an openssl.cnf that names "
                 "it):\n";
    ERR_print_errors_fp(stderr);
    return 1;
  }
  std::cout << "provider:     " << Param(provider, "name") << " "
            << Param(provider, "version") << "\n"
            << "kernel tier:  " << Param(provider, "tier") << " ("
            << Param(provider, "tier-reason") << ")\n"
            << "tiers built:  ";
  if (aesmux::kernels::kTiers.empty()) std::cout << "none";
  for (const auto &tier : aesmux::kernels::kTiers) {
    const bool usable = aesmux::kernels::Supported(
        tier, aesmux::kernels::DetectCpuFeatures());
    std::cout << tier.name << (usable ? "" : " (unsupported here)") << " ";
  }
  std::cout << "\n";
  for (const char *family : {"ecb", "cbc", "ctr", "xts", "gcm"}) {
    const std::string key = std::string("afalg.") + family;
    std::cout << "afalg " << family << ":    " << Param(provider, key.c_str())
              << "\n";
  }
  OSSL_PROVIDER_unload(provider);
  return 0;
}

// Sums "<algorithm> <path> <requests> <bytes>" lines of PREFIX.* files.
int SumStats(const std::string &prefix) {
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
  const std::string stem = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  DIR *d = opendir(dir.c_str());
  if (d == nullptr) {
    std::perror(dir.c_str());
    return 1;
  }
  std::map<std::string, std::pair<unsigned long long, unsigned long long>> sum;
  std::map<std::string, int> notes;  // "afalg cbc: …" → processes
  int files = 0;
  while (dirent *entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.rfind(stem + ".", 0) != 0 || name.ends_with(".tmp")) continue;
    std::ifstream in(dir + "/" + name);
    std::string line;
    ++files;
    while (std::getline(in, line)) {
      if (line.starts_with("# ")) {
        ++notes[line.substr(2)];
        continue;
      }
      std::istringstream fields(line);
      std::string alg, path;
      unsigned long long requests = 0, bytes = 0;
      if (!(fields >> alg >> path >> requests >> bytes)) continue;
      auto &slot = sum[alg + " " + path];
      slot.first += requests;
      slot.second += bytes;
    }
  }
  closedir(d);
  std::printf("%d process(es)\n%-14s %-24s %12s %16s\n", files, "algorithm",
              "path", "requests", "bytes");
  for (const auto &[key, counter] : sum) {
    if (counter.first == 0) continue;
    const size_t space = key.find(' ');
    std::printf("%-14s %-24s %12llu %16llu\n", key.substr(0, space).c_str(),
                key.substr(space + 1).c_str(), counter.first, counter.second);
  }
  for (const auto &[note, processes] : notes) {
    std::printf("%s (%d process%s)\n", note.c_str(), processes,
                processes == 1 ? "" : "es");
  }
  return files > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "--stats") == 0) return SumStats(argv[2]);
  if (argc == 1) return ShowProvider();
  std::cerr << "usage: aesmux-info [--stats PREFIX]\n";
  return 2;
}
