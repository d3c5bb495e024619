// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// bounce_copy_bench: what copying a request's output out of its bounce
// buffer (provider/afalg/bounce.h) costs, against AES-128-CBC encryption of
// the same bytes on this CPU (OpenSSL's default provider): the work an
// offload engine takes off the CPU for such a request. Runs anywhere (no
// AF_ALG needed). Not a test.
//
//   bounce_copy_bench [--runs N]    (default 7; the best run of each)
//
// Per request size (4, 16 and 64 KiB): "copy <bytes> warm <ns> cold <ns>
// cbc <ns> warm/cbc <ratio> cold/cbc <ratio>". Warm: the buffer is in the
// cache (a CPU driver just wrote it); cold: flushed from it before each
// copy (a device wrote it by DMA).
#include <openssl/evp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double Ns(Clock::duration duration) {
  return std::chrono::duration<double, std::nano>(duration).count();
}

void Flush(const uint8_t *buffer, size_t len) {
#if defined(__x86_64__)
  for (size_t offset = 0; offset < len; offset += 64) {
    _mm_clflush(buffer + offset);
  }
  _mm_mfence();
#else
  (void)buffer;
  (void)len;
#endif
}

}  // namespace

int main(int argc, char **argv) {
  int runs = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: bounce_copy_bench [--runs N]\n");
      return 2;
    }
  }
  constexpr size_t kMax = 64 * 1024;
  void *mapping = mmap(nullptr, kMax, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) return 1;
  madvise(mapping, kMax, MADV_DONTFORK);
  auto *bounce = static_cast<uint8_t *>(mapping);
  std::memset(bounce, 7, kMax);
  std::vector<uint8_t> in(kMax, 1), out(kMax);
  const uint8_t key[16] = {1}, iv[16] = {2};
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  EVP_CIPHER *cbc =
      EVP_CIPHER_fetch(nullptr, "AES-128-CBC", "provider=default");
  if (ctx == nullptr || cbc == nullptr) return 1;
  for (const size_t len : {size_t{4096}, size_t{16384}, kMax}) {
    double warm = 1e18, cold = 1e18, cipher = 1e18;
    for (int run = 0; run < runs; ++run) {
      constexpr int kCopies = 20000;
      const auto start = Clock::now();
      for (int i = 0; i < kCopies; ++i) {
        bounce[(static_cast<size_t>(i) * 64) % len] = static_cast<uint8_t>(i);
        std::memcpy(out.data(), bounce, len);
        asm volatile("" : : "r"(out.data()) : "memory");
      }
      warm = std::min(warm, Ns(Clock::now() - start) / kCopies);

      constexpr int kColdCopies = 2000;
      double total = 0;
      for (int i = 0; i < kColdCopies; ++i) {
        Flush(bounce, len);
        const auto copy_start = Clock::now();
        std::memcpy(out.data(), bounce, len);
        asm volatile("" : : "r"(out.data()) : "memory");
        total += Ns(Clock::now() - copy_start);
      }
      cold = std::min(cold, total / kColdCopies);

      constexpr int kCiphers = 2000;
      int out_len = 0;
      EVP_EncryptInit_ex2(ctx, cbc, key, iv, nullptr);
      EVP_CIPHER_CTX_set_padding(ctx, 0);
      const auto cipher_start = Clock::now();
      for (int i = 0; i < kCiphers; ++i) {
        EVP_EncryptUpdate(ctx, out.data(), &out_len, in.data(),
                          static_cast<int>(len));
      }
      cipher = std::min(cipher, Ns(Clock::now() - cipher_start) / kCiphers);
    }
    std::printf(
        "copy %zu warm %.0f cold %.0f cbc %.0f warm/cbc %.4f "
        "cold/cbc %.4f\n",
        len, warm, cold, cipher, warm / cipher, cold / cipher);
  }
  EVP_CIPHER_free(cbc);
  EVP_CIPHER_CTX_free(ctx);
  munmap(mapping, kMax);
  return 0;
}
