// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// startup_bench: what loading aesmux costs a process that makes one small
// request. Not a test.
//
// Each run starts a process that loads OpenSSL's configuration, makes one
// small request and exits; the time is from spawn (posix_spawn) to reaped
// exit, and the child's own CPU time (user and system, from wait4: less
// disturbed by other work on a shared machine). The sides alternate run by
// run:
//
//   default       this program again: one AES-128-GCM record (IV, 13 bytes
//                 of AAD, --bytes of payload, tag) through EVP, with an
//                 openssl.cnf that activates the default provider only
//   conf          the same, with an openssl.cnf that activates the default
//                 provider and aesmux and prefers aesmux
//                 (openssl.cnf.example), as a system-wide set-up
//   explicit      the same without openssl.cnf; the program calls
//                 OSSL_PROVIDER_load for "default" and for aesmux, and
//                 fetches from aesmux
//   enc-default   `openssl enc -aes-128-ctr` on --bytes (a C program, which
//   enc-conf      unlike this one has not loaded libstdc++ yet), with the
//                 two configurations above
//
// Each side's medians are shown with their differences from its baseline
// (default, or enc-default). The children check that the request was
// served by the provider the side names, and fail otherwise.
//
//   startup_bench [--runs 40] [--bytes 1024] [--module PATH]
//                 [--openssl /usr/bin/openssl]
#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/support/bench_util.h"
#include "tests/support/provider_env.h"

extern char **environ;

namespace aesmux::test {

const char kBenchName[] = "startup_bench";

namespace {

constexpr std::array<const char *, 5> kSides = {
    "default", "conf", "explicit", "enc-default", "enc-conf"};
// The configuration file of each side.
constexpr std::array<const char *, 5> kConfigs = {"default", "conf", "empty",
                                                  "default", "conf"};

// The child: one record on the provider the configuration prefers.
int Child(const std::string &side, const std::string &module, int bytes) {
  if (side == "explicit") {
    // Loaded by name from its directory, so that it is named "aesmux".
    const std::string dir = module.substr(0, module.rfind('/'));
    if (OSSL_PROVIDER_load(nullptr, "default") == nullptr ||
        !OSSL_PROVIDER_set_default_search_path(nullptr, dir.c_str()) ||
        OSSL_PROVIDER_load(nullptr, "aesmux") == nullptr) {
      return 2;
    }
  }
  EVP_CIPHER *cipher = EVP_CIPHER_fetch(
      nullptr, "AES-128-GCM",
      side == "explicit" ? "provider=aesmux" : nullptr);
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  const unsigned char key[16] = {1}, iv[12] = {2}, aad[13] = {3};
  std::vector<unsigned char> in(static_cast<size_t>(bytes), 0x5a),
      out(in.size() + 16);
  unsigned char tag[16];
  int len = 0, final_len = 0;
  const bool ok =
      cipher != nullptr && ctx != nullptr &&
      EVP_EncryptInit_ex2(ctx, cipher, key, iv, nullptr) == 1 &&
      EVP_EncryptUpdate(ctx, nullptr, &len, aad, sizeof(aad)) == 1 &&
      EVP_EncryptUpdate(ctx, out.data(), &len, in.data(), bytes) == 1 &&
      EVP_EncryptFinal_ex(ctx, out.data() + len, &final_len) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1;
  // The record must have come from the side's provider.
  const char *served =
      ok ? OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(cipher)) : "";
  const bool right = std::strcmp(served, side == "default" ? "default"
                                                           : "aesmux") == 0;
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(cipher);
  return ok && right ? 0 : 3;
}

std::string WriteConfig(const std::string &dir, const std::string &side,
                        const std::string &module) {
  const std::string path = dir + "/" + side + ".cnf";
  std::ofstream cnf(path);
  if (side == "empty") return path;
  // config_diagnostics: a provider that fails to load fails the process.
  cnf << "config_diagnostics = 1\nopenssl_conf = openssl_init\n\n"
         "[openssl_init]\n"
         "providers = provider_sect\n";
  if (side == "conf") cnf << "alg_section = evp_properties\n";
  cnf << "\n[provider_sect]\ndefault = default_sect\n";
  if (side == "conf") cnf << "aesmux = aesmux_sect\n";
  cnf << "\n[default_sect]\nactivate = 1\n";
  if (side == "conf") {
    cnf << "\n[aesmux_sect]\nmodule = " << module
        << "\nactivate = 1\n\n[evp_properties]\n"
           "default_properties = ?provider=aesmux\n";
  }
  cnf.close();
  if (!cnf) Die("cannot write " + path);
  return path;
}

struct Times {
  double wall;  // from spawn to reaped exit
  double cpu;   // the child's user and system time
};

// One child's times.
Times RunChild(const std::string &self, const std::string &openssl,
                const std::string &input, const std::string &side,
                const std::string &config, const std::string &module,
                int bytes) {
  std::vector<std::string> env_strings;
  for (char **e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "OPENSSL_CONF=", 13) != 0) env_strings.push_back(*e);
  }
  // "explicit" runs with an empty configuration file.
  env_strings.push_back("OPENSSL_CONF=" + config);
  std::vector<char *> envp;
  for (std::string &s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args;
  std::string program = self;
  if (side.rfind("enc-", 0) == 0) {
    // The input file holds --bytes; the output goes to /dev/null.
    program = openssl;
    args = {openssl, "enc", "-e", "-aes-128-ctr", "-K",
            "000102030405060708090a0b0c0d0e0f", "-iv",
            "000102030405060708090a0b0c0d0e0f", "-in", input, "-out",
            "/dev/null"};
  } else {
    args = {self,   "--child", side,   "--module",
            module, "--bytes", std::to_string(bytes)};
  }
  std::vector<char *> argv;
  for (std::string &s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(),
                  envp.data()) != 0) {
    Die("posix_spawn failed");
  }
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) Die("wait4 failed");
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  auto seconds_of = [](const timeval &t) { return t.tv_sec + t.tv_usec / 1e6; };
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die("the " + side + " child failed (status " + std::to_string(status) +
        ")");
  }
  return {wall, seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime)};
}

}  // namespace

int Main(int argc, char **argv) {
  int runs = 40;
  int bytes = 1024;
  std::string module = ModulePath();
  std::string child;
  std::string openssl = "/usr/bin/openssl";
  ArgReader args(argc, argv);
  while (args.Next()) {
    if (args.arg() == "--runs") {
      runs = args.Int(1);
    } else if (args.arg() == "--bytes") {
      bytes = args.Int(0);
    } else if (args.arg() == "--module") {
      module = args.Value();
    } else if (args.arg() == "--openssl") {
      openssl = args.Value();
    } else if (args.arg() == "--child") {
      child = args.Value();
    } else {
      Die("usage: startup_bench [--runs N] [--bytes N] [--module PATH] "
          "[--openssl PATH]");
    }
  }
  if (!child.empty()) return Child(child, module, bytes);

  char dir_template[] = "/tmp/startup_bench.XXXXXX";
  if (mkdtemp(dir_template) == nullptr) Die("mkdtemp failed");
  const std::string dir = dir_template;
  std::array<std::string, kSides.size()> configs;
  for (size_t s = 0; s < kSides.size(); ++s) {
    configs[s] = WriteConfig(dir, kConfigs[s], module);
  }
  const std::string input = dir + "/input";
  {
    std::ofstream in(input, std::ios::binary);
    in << std::string(static_cast<size_t>(bytes), 'a');
    in.close();
    if (!in) Die("cannot write " + input);
  }
  const std::string self = "/proc/self/exe";
  char resolved[4096];
  const ssize_t n = readlink(self.c_str(), resolved, sizeof(resolved) - 1);
  if (n <= 0) Die("cannot resolve /proc/self/exe");
  resolved[n] = '\0';

  std::array<std::vector<double>, kSides.size()> wall, cpu;
  for (int r = 0; r < runs; ++r) {
    for (size_t i = 0; i < kSides.size(); ++i) {
      // Alternate the order too, so no side always follows another.
      const size_t s = (r % 2 == 0) ? i : kSides.size() - 1 - i;
      const Times t = RunChild(resolved, openssl, input, kSides[s],
                               configs[s], module, bytes);
      wall[s].push_back(t.wall);
      cpu[s].push_back(t.cpu);
    }
  }
  for (const char *name : {"default.cnf", "conf.cnf", "empty.cnf", "input"}) {
    std::remove((dir + "/" + name).c_str());
  }
  rmdir(dir.c_str());

  std::printf("# %s; %d bytes per process, medians of %d alternating "
              "runs\n",
              CpuModelName().c_str(), bytes, runs);
  std::printf("| side | CPU ms | vs baseline | wall ms | vs baseline |\n"
              "|---|---:|---:|---:|---:|\n");
  for (size_t s = 0; s < kSides.size(); ++s) {
    const size_t base = s < 3 ? 0 : 3;
    const double c = Median(cpu[s]) * 1e3, w = Median(wall[s]) * 1e3;
    std::printf("| %s | %.2f | %+.2f | %.2f | %+.2f |\n", kSides[s], c,
                c - Median(cpu[base]) * 1e3, w, w - Median(wall[base]) * 1e3);
  }
  return 0;
}

}  // namespace aesmux::test

int main(int argc, char **argv) { return aesmux::test::Main(argc, argv); }
