// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/support/random_message.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "tests/support/bytes.h"
#include "tests/support/child.h"

namespace aesmux::test {
namespace {

constexpr const char *kAlgorithms[] = {
    "AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "AES-128-CBC",
    "AES-192-CBC", "AES-256-CBC", "AES-128-CTR", "AES-192-CTR",
    "AES-256-CTR", "AES-128-XTS", "AES-256-XTS", "AES-128-GCM",
    "AES-192-GCM", "AES-256-GCM"};

enum class Mode { kEcb, kCbc, kCtr, kXts, kGcm };

Mode ModeOf(std::string_view name) {
  if (name.ends_with("ECB")) return Mode::kEcb;
  if (name.ends_with("CBC")) return Mode::kCbc;
  if (name.ends_with("CTR")) return Mode::kCtr;
  if (name.ends_with("XTS")) return Mode::kXts;
  return Mode::kGcm;
}

struct Message {
  Mode mode;
  Bytes key, iv, aad, plain;
  std::vector<size_t> updates;  // sizes; the last takes the rest
  bool pad = false;
  bool in_place = false;
};

Message MakeMessage(Mode mode, const EVP_CIPHER *cipher, std::mt19937_64 &rng,
                    size_t max_len) {
  Message m;
  m.mode = mode;
  m.key = RandomBytes(rng, EVP_CIPHER_get_key_length(cipher));
  if (mode == Mode::kXts) {
    // Equal halves are refused when encrypting.
    m.key[0] = static_cast<uint8_t>(m.key[m.key.size() / 2] ^ 1);
  }
  m.iv = RandomBytes(rng, mode == Mode::kEcb ? 0 : mode == Mode::kGcm ? 12 : 16);
  if (mode == Mode::kGcm) m.aad = RandomBytes(rng, rng() % 40);
  size_t len = rng() % 4 == 0 ? rng() % (max_len + 1)
                              : rng() % (std::min<size_t>(max_len, 2048) + 1);
  const bool block_mode = mode == Mode::kEcb || mode == Mode::kCbc;
  m.pad = block_mode && rng() % 2 == 0;
  if (block_mode && !m.pad) len &= ~size_t{15};
  if (mode == Mode::kXts) len = std::max<size_t>(len, 16);
  m.plain = RandomBytes(rng, len);
  // Updates of random sizes (block multiples for ECB and CBC, so that an
  // update's output starts where its input does and may be the same
  // buffer); XTS takes a data unit in one update.
  size_t left = len;
  while (mode != Mode::kXts && left > 0 && m.updates.size() < 6 &&
         rng() % 3 != 0) {
    size_t piece = rng() % (left + 1);
    if (block_mode) piece &= ~size_t{15};
    m.updates.push_back(piece);
    left -= piece;
  }
  m.updates.push_back(left);
  m.in_place = rng() % 2 == 0;
  return m;
}

// Runs `in` through `cipher`; the tag is written (encrypting GCM) or
// checked (decrypting GCM). Returns "" or what failed.
std::string Crypt(const EVP_CIPHER *cipher, const Message &m, bool encrypt,
                  const Bytes &in, Bytes *out, Bytes *tag) {
  CipherCtxPtr ctx = NewCipherCtx();
  if (ctx == nullptr ||
      !EVP_CipherInit_ex2(ctx.get(), cipher, m.key.data(),
                          m.iv.empty() ? nullptr : m.iv.data(), encrypt,
                          nullptr)) {
    return "init failed";
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), m.pad);
  int len = 0;
  if (m.mode == Mode::kGcm) {
    if (!encrypt && !EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG,
                                         16, tag->data())) {
      return "setting the tag failed";
    }
    if (!m.aad.empty() &&
        !EVP_CipherUpdate(ctx.get(), nullptr, &len, m.aad.data(),
                          static_cast<int>(m.aad.size()))) {
      return "AAD failed";
    }
  }
  Bytes buffer(in.size() + 32);
  Bytes separate;
  const uint8_t *source = in.data();
  if (m.in_place) {
    std::copy(in.begin(), in.end(), buffer.begin());
    source = buffer.data();
  }
  size_t consumed = 0, produced = 0;
  for (size_t i = 0; i < m.updates.size(); ++i) {
    // The last update takes the rest (a padded ciphertext is longer than
    // the plaintext the sizes were drawn for).
    const size_t update =
        i + 1 < m.updates.size() ? m.updates[i] : in.size() - consumed;
    if (!EVP_CipherUpdate(ctx.get(), buffer.data() + produced, &len,
                          source + consumed, static_cast<int>(update))) {
      return "update of " + std::to_string(update) + " failed";
    }
    consumed += update;
    produced += static_cast<size_t>(len);
  }
  if (!EVP_CipherFinal_ex(ctx.get(), buffer.data() + produced, &len)) {
    return "final failed";
  }
  produced += static_cast<size_t>(len);
  if (m.mode == Mode::kGcm && encrypt) {
    tag->resize(16);
    if (!EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                             tag->data())) {
      return "getting the tag failed";
    }
  }
  buffer.resize(produced);
  *out = std::move(buffer);
  return "";
}

std::string Describe(const char *name, const Message &m) {
  std::string text = std::string(name) + ", " +
                     std::to_string(m.plain.size()) + " bytes in updates";
  for (size_t update : m.updates) text += " " + std::to_string(update);
  if (m.pad) text += ", padded";
  if (m.in_place) text += ", in place";
  return text;
}

}  // namespace

CipherSet::CipherSet(const ProviderEnv &env) {
  for (const char *name : kAlgorithms) {
    pairs_.push_back({name, env.Aesmux(name), env.Default(name)});
  }
}

bool CipherSet::complete() const {
  return std::all_of(pairs_.begin(), pairs_.end(), [](const Pair &pair) {
    return pair.aesmux != nullptr && pair.reference != nullptr;
  });
}

std::string CheckRandomMessage(const CipherSet &ciphers, std::mt19937_64 &rng,
                               size_t max_len) {
  const CipherSet::Pair &pair = ciphers.pairs()[rng() % ciphers.pairs().size()];
  const Message m =
      MakeMessage(ModeOf(pair.name), pair.reference.get(), rng, max_len);
  Bytes ours, theirs, our_tag, their_tag, back;
  std::string error = Crypt(pair.aesmux.get(), m, true, m.plain, &ours,
                            &our_tag);
  if (error.empty()) {
    error = Crypt(pair.reference.get(), m, true, m.plain, &theirs, &their_tag);
  }
  if (error.empty() && (ours != theirs || our_tag != their_tag)) {
    error = "ciphertext or tag differs from the default provider's";
  }
  if (error.empty()) error = Crypt(pair.aesmux.get(), m, false, ours, &back,
                                   &our_tag);
  if (error.empty() && back != m.plain) error = "decryption differs";
  return error.empty() ? "" : Describe(pair.name, m) + ": " + error;
}

std::chrono::milliseconds StressDuration(std::chrono::milliseconds ci) {
  if (const char *text = std::getenv("AESMUX_TEST_STRESS_SECONDS")) {
    return std::chrono::milliseconds(
        static_cast<int64_t>(std::strtod(text, nullptr) * 1000));
  }
  return ci;
}

Checkers::Checkers(const CipherSet &ciphers, int threads, uint64_t seed)
    : parking_(threads) {
  for (int t = 0; t < threads; ++t) {
    pool_.emplace_back([this, &ciphers, seed, t] {
      std::mt19937_64 rng(seed + t);
      while (!stop_.load()) {
        parking_.Pause();
        std::string failure = CheckRandomMessage(ciphers, rng, 20000);
        ++messages_;
        if (!failure.empty()) {
          std::lock_guard lock(mutex_);
          if (failure_.empty()) failure_ = failure;
        }
      }
      parking_.Leave();
    });
  }
}

std::string Checkers::Stop() {
  stop_ = true;
  for (std::thread &thread : pool_) {
    if (thread.joinable()) thread.join();
  }
  std::lock_guard lock(mutex_);
  return failure_;
}

int StressInChild(const CipherSet &ciphers, int threads, uint64_t seed,
                  int depth, std::chrono::milliseconds timeout) {
  Checkers checkers(ciphers, ThreadsInAChild(threads), seed);
  std::mt19937_64 rng(~seed);
  std::string failure;
  auto check_for = [&](std::chrono::milliseconds duration) {
    const auto end = std::chrono::steady_clock::now() + duration;
    while (failure.empty() && std::chrono::steady_clock::now() < end) {
      failure = CheckRandomMessage(ciphers, rng, 20000);
    }
  };
  check_for(std::chrono::milliseconds(100));
  std::string grandchild;
  if (depth > 0) {
    grandchild = checkers.Fork(
        [&] {
          return StressInChild(ciphers, threads, seed * 31, depth - 1,
                               timeout);
        },
        timeout);
  }
  check_for(std::chrono::milliseconds(100));
  if (const std::string other = checkers.Stop(); failure.empty()) {
    failure = other;
  }
  if (!failure.empty()) {
    std::fprintf(stderr, "in a child: %s\n", failure.c_str());
    return 1;
  }
  if (!grandchild.empty()) {
    std::fprintf(stderr, "its child: %s\n", grandchild.c_str());
    return 2;
  }
  return 0;
}

}  // namespace aesmux::test
