// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#define OPENSSL_SUPPRESS_DEPRECATED  // EVP_CIPHER_CTX_iv_noconst() is driven
#include "tests/fuzz/differential.h"

#include <openssl/async.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/prov_ssl.h>
#include <openssl/proverr.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/model.h"
#include "tests/fuzz/params.h"
#include "tests/fuzz/report.h"
#include "tests/support/provider_env.h"

extern char **environ;

namespace aesmux::fuzz {
namespace {

using test::ProviderEnv;

constexpr int kAesmux = 0;
constexpr int kDefault = 1;
constexpr const char *kSideName[2] = {"aesmux", "default"};

using core::Family;
// A context's family: none while it has no cipher.
using MaybeFamily = std::optional<Family>;

struct CipherSpec {
  std::string name;
  std::string alias;  // another name the default provider registers
};

// Every cipher of core::kAlgs, in its order (the inputs' cipher numbers),
// with one more name to fetch it by: its first alias, else its OID, else
// its name in lower case.
const std::vector<CipherSpec> &Ciphers() {
  static const std::vector<CipherSpec> ciphers = [] {
    std::vector<CipherSpec> list;
    for (const core::AlgInfo &info : core::kAlgs) {
      std::string alias(info.aliases.substr(0, info.aliases.find(':')));
      if (alias.empty()) alias = info.oid;
      if (alias.empty()) {
        for (char c : info.name) alias += char(std::tolower(c));
      }
      list.push_back({std::string(info.name), alias});
    }
    return list;
  }();
  return ciphers;
}
constexpr size_t kNumCiphers = core::kNumAlgs;

// The "thresholds" configuration: each family's fallback_max_len (and CBC's
// mb_max_len), different per family so that a mix-up shows. Lengths are
// drawn at these values and one above.
constexpr std::array<size_t, core::kNumFamilies> kFallbackMaxLen = {
    32, 48, 20, 40, 64};  // by core::Family
constexpr size_t kMbMaxLen = 80;

size_t FallbackMaxLen(Family family) {
  return kFallbackMaxLen[static_cast<size_t>(family)];
}

// ---------------------------------------------------------------------------
// Router configurations and their library contexts.

}  // namespace

const std::vector<RouterConfig> &RouterConfigs() {
  static const std::vector<RouterConfig> configs = [] {
    const std::string off = "afalg = off";
    std::vector<RouterConfig> list = {
        {"auto", {off}},
        {"vaes_avx512", {off, "kernels = vaes_avx512"}},
        {"vaes_avx2", {off, "kernels = vaes_avx2"}},
        {"aesni", {off, "kernels = aesni"}},
        {"none", {off, "kernels = none"}},
        {"mb_off", {off, "cbc.mb_max_len = 0"}},
    };
    RouterConfig thresholds{"thresholds", {off}};
    for (const core::FamilyInfo &family : core::kFamilies) {
      thresholds.settings.push_back(
          std::string(family.name) + ".fallback_max_len = " +
          std::to_string(FallbackMaxLen(family.family)));
    }
    thresholds.settings.push_back("cbc.mb_max_len = " +
                                  std::to_string(kMbMaxLen));
    list.push_back(thresholds);
    return list;
  }();
  return configs;
}

namespace {

// One library context per configuration, made on first use and kept: aesmux
// and the default provider side by side, with every cipher fetched from each.
struct Env {
  ~Env() {
    for (auto &pair : ciphers) {
      for (EVP_CIPHER *cipher : pair) EVP_CIPHER_free(cipher);
    }
  }
  std::unique_ptr<ProviderEnv> env;
  std::array<std::array<EVP_CIPHER *, 2>, kNumCiphers> ciphers{};
};

void ClearAesmuxEnvironment() {
  // Environment variables override openssl.cnf: keep only the module path.
  std::vector<std::string> names;
  for (char **var = environ; *var != nullptr; ++var) {
    std::string_view entry(*var);
    if (entry.rfind("AESMUX_", 0) != 0) continue;
    std::string name(entry.substr(0, entry.find('=')));
    if (name != "AESMUX_TEST_MODULE" && name.rfind("AESMUX_FUZZ", 0) != 0) {
      names.push_back(name);
    }
  }
  for (const std::string &name : names) unsetenv(name.c_str());
}

Env *GetEnv(size_t index) {
  // OpenSSL registers its clean-up at exit when it is first initialised:
  // before the contexts below exist, so that they are freed before it runs.
  [[maybe_unused]] static const bool initialised =
      OPENSSL_init_crypto(0, nullptr);
  static std::vector<std::unique_ptr<Env>> envs(RouterConfigs().size());
  static std::vector<bool> tried(RouterConfigs().size());
  if (!tried[index]) {
    tried[index] = true;
    ClearAesmuxEnvironment();
    auto env = std::make_unique<Env>();
    env->env = std::make_unique<ProviderEnv>(RouterConfigs()[index].settings);
    if (!env->env->loaded()) {
      // A tier this CPU lacks: aesmux refuses to load.
      std::fprintf(stderr, "aesmux does not load with configuration %s: %s\n",
                   RouterConfigs()[index].name.c_str(),
                   env->env->error().c_str());
      return nullptr;
    }
    for (size_t c = 0; c < kNumCiphers; ++c) {
      env->ciphers[c][kAesmux] = env->env->Aesmux(Ciphers()[c].name).release();
      env->ciphers[c][kDefault] =
          env->env->Default(Ciphers()[c].name).release();
      if (env->ciphers[c][kAesmux] == nullptr ||
          env->ciphers[c][kDefault] == nullptr) {
        std::fprintf(stderr, "cannot fetch %s\n", Ciphers()[c].name.c_str());
        std::abort();
      }
    }
    ERR_clear_error();
    envs[index] = std::move(env);
  }
  return envs[index].get();
}

// A pair of contexts, one per provider, and the model of the default
// provider's state.
struct Pair {
  EVP_CIPHER_CTX *ctx[2] = {nullptr, nullptr};
  // Each side's buffer of the last update: a CTR TLS MAC points into it.
  std::vector<uint8_t> kept[2];
  uint64_t kept_generation = 0;
  // The default provider's last output (input for the next decryption).
  std::vector<uint8_t> last_out;
  std::vector<uint8_t> last_key;
  Model model;

  bool live() const { return ctx[kDefault] != nullptr; }
  bool has_cipher() const {
    return live() && EVP_CIPHER_CTX_get0_cipher(ctx[kDefault]) != nullptr;
  }
  MaybeFamily family() const {
    if (!has_cipher()) return std::nullopt;
    const auto mode = unsigned(EVP_CIPHER_CTX_get_mode(ctx[kDefault]));
    for (const core::FamilyInfo &info : core::kFamilies) {
      if (info.mode == mode) return info.family;
    }
    return std::nullopt;
  }
  // The direction EVP routes by (EVP_EncryptUpdate, EVP_CipherFinal_ex).
  bool evp_encrypting() const {
    return has_cipher() && EVP_CIPHER_CTX_is_encrypting(ctx[kDefault]);
  }
  // The direction the provider works in (Model::provider_enc).
  bool encrypting() const {
    return model.provider_enc >= 0 ? model.provider_enc == 1
                                   : evp_encrypting();
  }
  void Free() {
    for (int side = 0; side < 2; ++side) {
      EVP_CIPHER_CTX_free(ctx[side]);
      ctx[side] = nullptr;
      kept[side].clear();
    }
    last_out.clear();
    model = Model{};
  }
};

constexpr size_t kSlots = 4;
// Bounds the work one input can ask for, so that each input runs quickly.
constexpr size_t kMaxBytesPerInput = 1 << 20;
constexpr size_t kMaxOpsPerInput = 400;

class Harness {
 public:
  Harness(Env *env, FuzzInput &in, bool params_mode)
      : env_(env), in_(in), params_mode_(params_mode) {}
  ~Harness() {
    for (Pair &pair : pairs_) pair.Free();
    ERR_clear_error();
  }

  void Run() {
    for (size_t ops = 0; !in_.empty() && ops < kMaxOpsPerInput &&
                         bytes_ < kMaxBytesPerInput;
         ++ops) {
      const uint8_t op = in_.Byte();
      const size_t slot = in_.Pick(kSlots);
      SetTraceSlot(int(slot));
      Pair &pair = pairs_[slot];
      if (params_mode_) {
        RunParamsOp(op, pair);
      } else {
        RunSequenceOp(op, pair);
      }
      if (pair.live()) CompareState(pair);
    }
  }

 private:
  // --- the operations ----------------------------------------------------

  void RunSequenceOp(uint8_t op, Pair &pair) {
    switch (op % 32) {
      case 0: case 1: case 2: case 3: case 4: case 5:
        return Init(pair);
      case 6: case 7: case 8: case 9: case 10: case 11: case 12:
        return Update(pair);
      case 13: case 14: case 15:
        return Cipher(pair);
      case 16: case 17: case 18:
        return Final(pair);
      case 19: case 20:
        return SetParams(pair, 1 + in_.Pick(2), true);
      case 21: case 22:
        return GetParams(pair, 1 + in_.Pick(2), true);
      case 23:
        return SetPadding(pair);
      case 24:
        return SetNum(pair);
      case 25:
        return SetKeyLength(pair);
      case 26:
        return WriteIvThroughPointer(pair);
      case 27: case 28:
        return Copy(pairs_[in_.Pick(kSlots)], pair);
      case 29:
        return in_.Bit() ? Reset(pair) : AsyncUpdates();
      case 30:
        return FreePair(pair);
      default:
        return SetParams(pair, 1, true);
    }
  }

  void RunParamsOp(uint8_t op, Pair &pair) {
    switch (op % 16) {
      case 0: case 1: case 2:
        return Init(pair);
      case 3: case 4:
        return Update(pair);
      case 5:
        return Final(pair);
      case 6:
        return Cipher(pair);
      case 7: case 8: case 9: case 10:
        return SetParams(pair, 1 + in_.Pick(8), false);
      case 11: case 12: case 13:
        return GetParams(pair, 1 + in_.Pick(8), false);
      case 14:
        return AlgorithmParams(pair);
      default:
        return Copy(pairs_[in_.Pick(kSlots)], pair);
    }
  }

  void EnsureCtx(Pair &pair) {
    if (pair.live()) return;
    for (int side = 0; side < 2; ++side) pair.ctx[side] = EVP_CIPHER_CTX_new();
    if (pair.ctx[kAesmux] == nullptr || pair.ctx[kDefault] == nullptr) {
      std::abort();
    }
  }

  // Key bytes for an init: none, two fixed keys, the pair's previous key,
  // bytes of the input, or (XTS) a key whose halves are equal.
  bool DrawKey(Pair &pair, size_t key_len, std::vector<uint8_t> *key) {
    const size_t choice = in_.Pick(8);
    if (choice == 0 || choice == 1) return false;
    key->resize(key_len);
    switch (choice) {
      case 2:
        for (size_t i = 0; i < key_len; ++i) (*key)[i] = uint8_t(i + 1);
        break;
      case 3:
        for (size_t i = 0; i < key_len; ++i) (*key)[i] = uint8_t(0xf0 ^ i * 7);
        break;
      case 4:
        if (pair.last_key.size() == key_len) {
          *key = pair.last_key;
          break;
        }
        [[fallthrough]];
      case 5: case 6:
        in_.Bytes(key->data(), key_len);
        break;
      default:
        in_.Bytes(key->data(), key_len / 2);
        std::memcpy(key->data() + key_len / 2, key->data(), key_len / 2);
        break;
    }
    return true;
  }

  void Init(Pair &pair) {
    EnsureCtx(pair);
    // The cipher: none (re-init), the pair's own, any of the 14 by its
    // name, or by an alias fetched now.
    const size_t cipher_choice = in_.Pick(4);
    int cipher_index = -1;
    bool by_alias = false;
    if (cipher_choice >= 2 || !pair.has_cipher()) {
      cipher_index = static_cast<int>(in_.Pick(kNumCiphers));
      by_alias = cipher_choice == 3;
    } else if (cipher_choice == 1) {
      const EVP_CIPHER *current = EVP_CIPHER_CTX_get0_cipher(pair.ctx[kDefault]);
      for (size_t c = 0; c < kNumCiphers; ++c) {
        if (EVP_CIPHER_is_a(current, Ciphers()[c].name.c_str())) {
          cipher_index = int(c);
        }
      }
    }
    EVP_CIPHER *fetched[2] = {nullptr, nullptr};
    const EVP_CIPHER *cipher[2] = {nullptr, nullptr};
    if (cipher_index >= 0) {
      for (int side = 0; side < 2; ++side) {
        if (by_alias) {
          fetched[side] = EVP_CIPHER_fetch(
              env_->env->libctx(), Ciphers()[cipher_index].alias.c_str(),
              side == kAesmux ? "provider=aesmux" : "provider=default");
          if (fetched[side] == nullptr) {
            Fail("cannot fetch " + Ciphers()[cipher_index].alias +
                 " from " + kSideName[side]);
          }
          cipher[side] = fetched[side];
        } else {
          cipher[side] = env_->ciphers[cipher_index][side];
        }
      }
    }
    const int api = static_cast<int>(in_.Pick(9));
    const int enc_choice = static_cast<int>(in_.Pick(3)) - 1;  // -1, 0, 1

    // Key and IV lengths as EVP will pass them: the new cipher's, or the
    // context's (GCM's IV length may have been changed).
    size_t key_len, iv_len;
    if (cipher[kDefault] != nullptr) {
      key_len = EVP_CIPHER_get_key_length(cipher[kDefault]);
      iv_len = EVP_CIPHER_get_iv_length(cipher[kDefault]);
    } else if (pair.has_cipher()) {
      key_len = EVP_CIPHER_CTX_get_key_length(pair.ctx[kDefault]);
      // EVP reads each side's IV length from its own context: they differ
      // after a call only aesmux was given (DefaultHazard), and the buffer
      // must hold the longer.
      iv_len = static_cast<size_t>(
          std::max({0, EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault]),
                    EVP_CIPHER_CTX_get_iv_length(pair.ctx[kAesmux])}));
    } else {
      key_len = 16;
      iv_len = 16;
    }
    std::vector<uint8_t> key;
    const bool with_key = DrawKey(pair, key_len, &key);
    const bool with_iv = in_.Pick(3) != 0;
    std::vector<ParamSpec> init_params;
    if ((api == 1 || api == 4 || api == 5) && in_.Pick(3) == 0) {
      init_params.push_back(DrawParam(in_, true, in_.Bit()));
      // The keys whose values can make the default provider corrupt
      // memory (DefaultHazard) are set with SetParams, which keeps them
      // from it; an init would take them before the harness knows the
      // context's new state (CTR's, for num).
      const std::string &key = init_params.back().key;
      unsigned int num;
      if (key == OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED ||
          key == OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV ||
          (key == OSSL_CIPHER_PARAM_NUM &&
           ReadUint(ParamArray(init_params).get(), &num) && num >= 16)) {
        init_params.clear();
      }
    }
    ParamArray params0(init_params), params1(init_params);
    ParamArray *params[2] = {&params0, &params1};
    // EVP sets an init's ivlen before it passes the IV (GCM: 1..128).
    size_t init_iv_len;
    if (!init_params.empty() &&
        ReadSize(Find(params0.get(), OSSL_CIPHER_PARAM_IVLEN), &init_iv_len) &&
        init_iv_len <= 128) {
      iv_len = std::max(iv_len, init_iv_len);
    }
    std::vector<uint8_t> iv;
    if (with_iv) {
      iv.resize(std::max<size_t>(iv_len, 1));
      in_.Bytes(iv.data(), iv.size());
    }

    const size_t old_iv_len =
        pair.has_cipher() ? EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault])
                          : 0;
    const bool old_provider_enc = pair.encrypting();
    {
      char line[200];
      std::snprintf(line, sizeof(line),
                    "init api %d cipher %s%s enc %d key %s iv %s params%s", api,
                    cipher_index >= 0 ? Ciphers()[cipher_index].name.c_str()
                                      : "NULL",
                    by_alias ? " (alias)" : "", enc_choice,
                    with_key ? Hex(key.data(), key.size()).c_str() : "NULL",
                    with_iv ? Hex(iv.data(), iv.size()).c_str() : "NULL",
                    DescribeParams(init_params).c_str());
      Note(line);
    }
    int ret[2];
    ErrorCodes errors[2];
    for (int side = 0; side < 2; ++side) {
      EVP_CIPHER_CTX *ctx = pair.ctx[side];
      const uint8_t *k = with_key ? key.data() : nullptr;
      const uint8_t *v = with_iv ? iv.data() : nullptr;
      const OSSL_PARAM *p = init_params.empty() ? nullptr : params[side]->get();
      const int enc = enc_choice;
      switch (api) {
        case 0:
          ret[side] = EVP_CipherInit_ex(ctx, cipher[side], nullptr, k, v, enc);
          break;
        case 1:
          ret[side] = EVP_CipherInit_ex2(ctx, cipher[side], k, v, enc, p);
          break;
        case 2:
          ret[side] = EVP_EncryptInit_ex(ctx, cipher[side], nullptr, k, v);
          break;
        case 3:
          ret[side] = EVP_DecryptInit_ex(ctx, cipher[side], nullptr, k, v);
          break;
        case 4:
          ret[side] = EVP_EncryptInit_ex2(ctx, cipher[side], k, v, p);
          break;
        case 5:
          ret[side] = EVP_DecryptInit_ex2(ctx, cipher[side], k, v, p);
          break;
        case 6:
          ret[side] = EVP_CipherInit(ctx, cipher[side], k, v, enc);
          break;
        case 7:
          ret[side] = EVP_EncryptInit(ctx, cipher[side], k, v);
          break;
        default:
          ret[side] = EVP_DecryptInit(ctx, cipher[side], k, v);
          break;
      }
      errors[side] = TakeErrorCodes();
    }
    for (EVP_CIPHER *f : fetched) EVP_CIPHER_free(f);

    // Which parts of the init the default provider saw. EVP_CipherInit and
    // friends reset the context when given a cipher; a new algorithm
    // context starts from scratch.
    Model &m = pair.model;
    const bool new_context = cipher_index >= 0 && pair.has_cipher();
    if (new_context) {
      m = Model{};
      pair.last_out.clear();
    }
    const MaybeFamily family = pair.family();
    // EVP raises errors of its own only when it stops before the
    // provider's init (no cipher, a key or IV length parameter refused).
    const bool reached =
        pair.has_cipher() &&
        std::none_of(errors[kDefault].begin(), errors[kDefault].end(),
                     [](const auto &e) { return e.first == ERR_LIB_EVP; });
    const bool ok = ret[kDefault] == 1;
    if (with_key) pair.last_key = key;

    // The outcome must agree, except where the model says the states had
    // already parted.
    const bool comparable = m.Comparable();
    if (comparable && !init_params.empty() &&
        AcceptedNumDifference(pair, *params[kAesmux], ret, errors)) {
      m.num_diverged = true;
    } else if (comparable) {
      ExpectEqual(ret[kAesmux], ret[kDefault], "init returns");
      ExpectSameErrors(errors[kAesmux], errors[kDefault], "init");
    }

    if (!reached) {
      // EVP took the direction; the provider kept its own, or (given a
      // cipher) has a new algorithm context that no init reached.
      if (pair.has_cipher()) {
        const bool provider_enc = cipher_index < 0 && old_provider_enc;
        m.provider_enc =
            provider_enc == pair.evp_encrypting() ? -1 : int(provider_enc);
      }
      return;
    }
    m.provider_enc = -1;
    m.held = 0;
    const bool enc_now = pair.encrypting();
    if (!init_params.empty() && !ok && !new_context) m.unknown = true;
    switch (*family) {  // reached: the context has a cipher
      case Family::kEcb:
      case Family::kCbc:
      case Family::kXts:
        if (with_key && (ok || family != Family::kXts)) {
          m.key_enc = enc_now;
          m.schedule_diverged = false;
        }
        break;
      case Family::kGcm: {
        // EVP sets an ivlen parameter first, then the provider takes IV,
        // key and the parameters.
        size_t new_iv_len;
        if (!new_context && !init_params.empty() &&
            ReadSize(Find(params0.get(), OSSL_CIPHER_PARAM_IVLEN),
                     &new_iv_len)) {
          ModelGcmIvLen(m, old_iv_len, new_iv_len);
        }
        if (with_iv) {
          m.GcmNewIv(Model::GcmIv::kBuffered);
          m.gcm_random_iv = false;
        }
        if (with_key) m.GcmKey(with_iv);
        break;
      }
      default:
        break;
    }
    // The provider applies an init's parameters after its key and IV.
    if (!init_params.empty()) {
      const size_t iv_len_now = EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault]);
      ModelParamsSet(pair, *params[kDefault], ok, iv_len_now);
    }
    if (with_iv) m.iv_set = true;
    if (ok && ret[kAesmux] == 1) {
      // Every init resets num, the held bytes and the CBC chaining value
      // (to the IV given or, once there was one, the original IV).
      // A different num has moved the CTR counter: only an IV resets it.
      if (with_iv) m.num_diverged = false;
      if (family != Family::kCbc || m.iv_set) m.block_diverged = false;
    }
    if (!init_params.empty() && ret[kAesmux] != ret[kDefault] &&
        AcceptedNumDifference(pair, *params[kAesmux], ret, errors)) {
      m.num_diverged = true;
    }
  }

  // Input bytes for a data operation: the input's, or the default
  // provider's last output (so that decryption sees real ciphertext, and
  // TLS records their own layout).
  std::vector<uint8_t> DrawData(Pair &pair, MaybeFamily family) {
    const size_t source = in_.Pick(4);
    size_t len;
    if (source == 3 && !pair.last_out.empty()) {
      return pair.last_out;
    }
    len = DrawLength(family);
    std::vector<uint8_t> data(len);
    if (source == 2 && !pair.last_out.empty()) {
      for (size_t i = 0; i < len; ++i) {
        data[i] = pair.last_out[i % pair.last_out.size()];
      }
    } else {
      in_.Bytes(data.data(), len);
    }
    return data;
  }

  size_t DrawLength(MaybeFamily family) {
    const uint8_t code = in_.Byte();
    if (code < 64) return code;
    if (code < 96) return 16 * size_t(code - 64);
    if (code < 112) {
      // At and around the thresholds of the "thresholds" configuration.
      const size_t max = family ? FallbackMaxLen(*family) : 32;
      constexpr int kOffsets[] = {0, 1, -1, 2};
      const size_t t = (code & 4) ? kMbMaxLen : max;
      return t + kOffsets[code & 3];
    }
    if (code < 250) return in_.U16() % 2048;
    if (code < 254) return in_.U16() % 16384;
    return 60000 + in_.U16() % 12000;  // beyond 64K: afalg and mb bounds
  }

  // Runs one data call per provider with identical buffers and compares
  // everything it returned and wrote.
  enum class Call { kUpdate, kEncryptUpdate, kDecryptUpdate, kCipher };

  void Update(Pair &pair) {
    if (!pair.live()) EnsureCtx(pair);
    const MaybeFamily family = pair.family();
    const Call call = static_cast<Call>(in_.Pick(3));
    // 0: out of place; 1: in place; 2: AAD (GCM; out null); 3: no input.
    size_t shape = in_.Pick(4);
    if (shape == 2 && family != Family::kGcm) shape = 0;
    std::vector<uint8_t> data = DrawData(pair, family);
    if (shape == 3) data.clear();
    RunData(pair, call, shape, data);
  }

  void Cipher(Pair &pair) {
    if (!pair.has_cipher()) return;  // EVP_Cipher needs a cipher
    const MaybeFamily family = pair.family();
    // 0: out of place; 1: in place; 2: AAD (GCM); 3: finish (GCM: in null)
    // or an empty call.
    size_t shape = in_.Pick(4);
    if (shape == 2 && family != Family::kGcm) shape = 0;
    std::vector<uint8_t> data = DrawData(pair, family);
    if (shape == 3) data.clear();
    RunData(pair, Call::kCipher, shape, data);
  }

  void RunData(Pair &pair, Call call, size_t shape,
               const std::vector<uint8_t> &data) {
    Model &m = pair.model;
    const MaybeFamily family = pair.family();
    const bool enc = pair.encrypting();
    const size_t len = data.size();
    bytes_ += len;
    static const char *kCallName[] = {"CipherUpdate", "EncryptUpdate",
                                      "DecryptUpdate", "EVP_Cipher"};
    static const char *kShapeName[] = {"out-of-place", "in-place", "aad",
                                       "no-input"};
    Note(std::string(kCallName[int(call)]) + " " + kShapeName[shape] +
         " len " + std::to_string(len) + " data " +
         Hex(data.data(), std::min<size_t>(len, 32)));

    const bool reaches = pair.has_cipher() &&
                         (call == Call::kUpdate || call == Call::kCipher ||
                          (call == Call::kEncryptUpdate) ==
                              pair.evp_encrypting());
    const bool tls_block =
        (family == Family::kEcb || family == Family::kCbc) &&
        m.tls_version != 0 && call != Call::kCipher;
    // Default provider hazard: a TLS 1.1+ CBC record shorter than its
    // explicit IV makes it read before the buffer (its length underflows).
    // aesmux must refuse it; the default provider is not asked.
    const bool hazard = tls_block && !enc && reaches && shape == 1 && len == 0 &&
                        HasExplicitIv(m.tls_version);
    // ECB, CBC in place with bytes held: the default provider writes the
    // held block's output over input it has not read yet (its results
    // depend on how far its assembly reads ahead); aesmux gives what out of
    // place gives (docs/differences.md; ContractTest.InPlaceUpdatesAfterAPartialBlock-
    // MatchOutOfPlace). Not compared, until the next init.
    const bool block = family == Family::kEcb || family == Family::kCbc;
    const bool pad = block && Padding(pair);
    const bool overwrites_input = block && !tls_block && reaches &&
                                  call != Call::kCipher && shape == 1 &&
                                  m.held != 0 && len > 16 - std::min<size_t>(m.held, 16);
    // A data call with the key schedule of the other direction.
    if (reaches && m.key_enc >= 0 && m.key_enc != int(enc) &&
        (family == Family::kEcb || family == Family::kCbc ||
         family == Family::kXts)) {
      m.schedule_diverged = true;
      m.block_diverged = family == Family::kCbc;  // and the chaining value
    }
    // GCM: does this call start a message on a random IV?
    const bool iv_unset = family == Family::kGcm && enc && reaches &&
                          GcmIvUnset(pair);
    const size_t iv_len_before =
        family == Family::kGcm ? EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault])
                               : 0;
    const bool tls_gcm_record = family == Family::kGcm && m.tls_aad_pending;
    // Default provider hazard: a TLS 1.2 GCM record (in place, long enough
    // for explicit IV and tag: the only one it takes that far) on an IV
    // shorter than its 8-byte explicit part makes it write in front of its
    // IV (the counter tlsivgen advances, or the explicit IV it copies in).
    // aesmux must refuse it; the default provider is not asked.
    const bool gcm_hazard = tls_gcm_record && reaches && iv_len_before < 8 &&
                            shape == 1 && len >= 8 + 16;

    constexpr size_t kSlack = 32;
    constexpr uint8_t kFill = 0xa5;
    std::vector<uint8_t> in_buf[2], out_buf[2];
    int ret[2] = {0, 0};
    int outl[2] = {-1, -1};
    ErrorCodes errors[2];
    for (int side = 0; side < 2; ++side) {
      if (side == kDefault && (hazard || gcm_hazard)) break;
      in_buf[side] = data;
      // A zero tail: the default provider's EVP_Cipher on a partial CBC
      // block reads a whole block.
      in_buf[side].resize(len + kSlack, 0);
      uint8_t *out;
      const uint8_t *input = shape == 3 ? nullptr : in_buf[side].data();
      if (shape == 1) {
        out = in_buf[side].data();
      } else if (shape == 2 || (shape == 3 && call == Call::kCipher &&
                                family == Family::kGcm)) {
        out = nullptr;
      } else {
        out_buf[side].assign(len + kSlack, kFill);
        out = out_buf[side].data();
      }
      EVP_CIPHER_CTX *ctx = pair.ctx[side];
      switch (call) {
        case Call::kUpdate:
          ret[side] = EVP_CipherUpdate(ctx, out, &outl[side], input, int(len));
          break;
        case Call::kEncryptUpdate:
          ret[side] = EVP_EncryptUpdate(ctx, out, &outl[side], input, int(len));
          break;
        case Call::kDecryptUpdate:
          ret[side] = EVP_DecryptUpdate(ctx, out, &outl[side], input, int(len));
          break;
        case Call::kCipher:
          ret[side] = EVP_Cipher(ctx, out, input, unsigned(len));
          break;
      }
      errors[side] = TakeErrorCodes();
    }
    if (hazard) {
      Note("  (default provider not asked: TLS record shorter than its IV)");
      if (ret[kAesmux] > 0) Fail("aesmux accepted a TLS CBC record of 0 bytes");
      // aesmux's refused record let go of the last record's MAC (as the
      // default provider's would, before it read out of bounds); the
      // default provider, not asked, still holds it.
      m.unknown = true;
      return;
    }
    if (gcm_hazard) {
      Note("  (default provider not asked: TLS GCM record, IV under 8 bytes)");
      if (m.tls_aad_unsure) {
        Note("  (aesmux not judged: the TLS AAD may not be pending)");
      } else if (ret[kAesmux] > 0) {
        Fail("aesmux ran a TLS GCM record on a short IV");
      }
      // aesmux's record call used up the record's AAD (as any TLS record
      // call does); the default provider, not asked, still has it, so the
      // two are not compared again until an init with a cipher.
      m.GcmCalled(Model::GcmCall::kData, enc, /*ok=*/false, iv_len_before);
      m.unknown = true;
      return;
    }

    // No input finishes a GCM message: through EVP_Cipher, and through an
    // update with a length (an empty one stops before the state machine).
    const bool gcm_finish = family == Family::kGcm && reaches &&
                            !tls_gcm_record && shape == 3 &&
                            (call == Call::kCipher || len != 0);
    const bool compare = gcm_finish
                             ? m.GcmFinalComparable(enc, ret[kAesmux] >= 0)
                             : m.Comparable();
    const bool data_visible =
        compare && !(family == Family::kGcm && m.gcm_random_iv);
    if (compare) {
      ExpectEqual(ret[kAesmux], ret[kDefault], "data call returns");
      if (call != Call::kCipher) {
        ExpectEqual(outl[kAesmux], outl[kDefault], "output length");
      }
      ExpectSameErrors(errors[kAesmux], errors[kDefault], "data call");
    }
    // Compare every byte of the buffers written, not only the output.
    std::vector<uint8_t> *written[2] = {
        shape == 1 ? &in_buf[0] : &out_buf[0],
        shape == 1 ? &in_buf[1] : &out_buf[1]};
    // EVP_Cipher returns the output length, or -1 on failure.
    const bool ok = call == Call::kCipher ? ret[kDefault] >= 0
                                          : ret[kDefault] == 1;
    const bool random_iv_now = family == Family::kGcm && iv_unset && ok;
    if (call == Call::kCipher && family == Family::kCbc && !enc &&
        len % 16 != 0 && reaches) {
      // OpenSSL's AES-NI CBC decryption through EVP_Cipher of a ciphertext
      // ending in a partial block writes 16 - n bytes of the n-byte tail's
      // decryption, and for some lengths (209..223 bytes, ...) gets whole
      // blocks and the chaining value wrong. aesmux decrypts as if the tail
      // were zero-extended and writes its n bytes (docs/differences.md; ContractTest.
      // EvpCipherPartialCbcBlockMatchesTheDefaultProvider checks the
      // bytes). Here: nothing written past the length, and no comparison of
      // outputs or chaining values until the next init.
      const uint8_t beyond = shape == 1 ? 0 : kFill;
      for (size_t i = len; i < written[0]->size(); ++i) {
        if ((*written[0])[i] != beyond) {
          Fail("aesmux wrote past a partial CBC block's length");
        }
      }
      if (ret[kDefault] >= 0) m.block_diverged = true;
    } else if (overwrites_input) {
      if (ok) m.block_diverged = true;
    } else if (data_visible && !random_iv_now &&
               !(tls_gcm_record && enc && m.gcm_random_iv)) {
      ExpectEqual(written[0]->size(), written[1]->size(), "buffer size");
      if (!written[0]->empty()) {
        ExpectSameBytes(written[0]->data(), written[1]->data(),
                        written[0]->size(), "output buffer");
      }
    }

    // Keep the buffers: a CTR TLS MAC points into them.
    for (int side = 0; side < 2; ++side) {
      pair.kept[side] = std::move(*written[side]);
    }
    ++pair.kept_generation;
    const int produced = call == Call::kCipher
                             ? (ret[kDefault] > 0 ? ret[kDefault] : 0)
                             : (ret[kDefault] == 1 ? outl[kDefault] : 0);
    if (ret[kDefault] > 0 && produced > 0 && !pair.kept[kDefault].empty()) {
      pair.last_out.assign(pair.kept[kDefault].begin(),
                           pair.kept[kDefault].begin() + produced);
    }

    if (!reaches) return;
    // What the call did to the state the model follows.
    if (block && !tls_block && call != Call::kCipher && ok) {
      const size_t total = m.held + len;
      m.held = !enc && pad && total != 0 && total % 16 == 0 ? 16 : total % 16;
    }
    // An empty update stops before the GCM state machine.
    if (family == Family::kGcm && (call == Call::kCipher || len != 0)) {
      using GcmCall = Model::GcmCall;
      m.GcmCalled(gcm_finish || (call == Call::kCipher && shape == 3)
                      ? GcmCall::kFinish
                  : shape == 2 ? GcmCall::kAad
                               : GcmCall::kData,
                  enc, ok, iv_len_before, len);
      if (random_iv_now) m.gcm_random_iv = true;
    }
    if (tls_block && shape == 1 && ret[kDefault] == 1) {
      // In-place TLS records: the MAC the default provider now holds.
      if (!enc && m.tls_mac_size > 0) {
        m.mac_allocated = true;
        m.mac_held = m.tls_mac_size;
        m.mac_random = !TlsPaddingGood(
            m.tls_version, pair.kept[kDefault].data(), len, m.tls_mac_size);
      } else {
        m.mac_allocated = false;
        m.mac_held = 0;
      }
    } else if (tls_block && !enc && m.tls_mac_size > 0 && shape == 1) {
      // A failed record may still have left an allocated MAC behind.
      m.mac_allocated = true;
      m.mac_held = 0;
    }
    if (family == Family::kCtr && m.tls_version != 0 && !enc &&
        call != Call::kCipher && ret[kDefault] == 1 && len > 0 &&
        m.tls_mac_size > 0) {
      m.mac_held = m.tls_mac_size;
      m.mac_random = false;
      m.mac_generation = pair.kept_generation;
    }
  }

  // The default provider's padding setting.
  static bool Padding(Pair &pair) {
    unsigned int pad = 1;
    OSSL_PARAM p[] = {OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING, &pad),
                      OSSL_PARAM_construct_end()};
    EVP_CIPHER_CTX_get_params(pair.ctx[kDefault], p);
    ERR_clear_error();
    return pad != 0;
  }

  // GCM: the default provider has no IV (so encrypting draws one).
  static bool GcmIvUnset(Pair &pair) {
    uint8_t iv[128];
    OSSL_PARAM p[] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_IV,
                                                        iv, sizeof(iv)),
                      OSSL_PARAM_construct_end()};
    const bool unset = !EVP_CIPHER_CTX_get_params(pair.ctx[kDefault], p);
    ERR_clear_error();
    return unset;
  }

  void Final(Pair &pair) {
    if (!pair.live()) return;
    const int api = static_cast<int>(in_.Pick(4));
    Note("final api " + std::to_string(api));
    Model &m = pair.model;
    const MaybeFamily family = pair.family();
    const bool enc = pair.encrypting();
    const bool iv_unset = family == Family::kGcm && enc && GcmIvUnset(pair);
    const size_t iv_len_before =
        family == Family::kGcm ? EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault])
                               : 0;
    if (m.key_enc >= 0 && m.key_enc != int(enc) &&
        (family == Family::kEcb || family == Family::kCbc ||
         family == Family::kXts)) {
      m.schedule_diverged = true;
      m.block_diverged = family == Family::kCbc;  // and the chaining value
    }
    std::vector<uint8_t> out[2];
    int ret[2], outl[2] = {-1, -1};
    ErrorCodes errors[2];
    for (int side = 0; side < 2; ++side) {
      out[side].assign(32, 0xa5);
      EVP_CIPHER_CTX *ctx = pair.ctx[side];
      switch (api) {
        case 0:
          ret[side] = EVP_CipherFinal_ex(ctx, out[side].data(), &outl[side]);
          break;
        case 1:
          ret[side] = EVP_EncryptFinal_ex(ctx, out[side].data(), &outl[side]);
          break;
        case 2:
          ret[side] = EVP_DecryptFinal_ex(ctx, out[side].data(), &outl[side]);
          break;
        default:
          ret[side] = EVP_CipherFinal(ctx, out[side].data(), &outl[side]);
          break;
      }
      errors[side] = TakeErrorCodes();
    }
    const bool reaches = pair.has_cipher() &&
                         (api == 0 || api == 3 ||
                          (api == 1) == pair.evp_encrypting());
    const bool gcm_final = family == Family::kGcm && reaches &&
                           !m.tls_aad_pending;
    if (gcm_final ? m.GcmFinalComparable(enc, ret[kAesmux] == 1)
                  : m.Comparable()) {
      ExpectEqual(ret[kAesmux], ret[kDefault], "final returns");
      ExpectEqual(outl[kAesmux], outl[kDefault], "final output length");
      ExpectSameErrors(errors[kAesmux], errors[kDefault], "final");
      ExpectSameBytes(out[0].data(), out[1].data(), 32, "final output");
    }
    if (ret[kDefault] == 1 && outl[kDefault] > 0) {
      pair.last_out.assign(out[kDefault].begin(),
                           out[kDefault].begin() + outl[kDefault]);
    }
    if ((family == Family::kEcb || family == Family::kCbc) && reaches &&
        ret[kDefault] == 1) {
      m.held = 0;
    }
    if (family == Family::kGcm && reaches) {
      // (With a TLS AAD pending, a failed TLS record.)
      m.GcmCalled(Model::GcmCall::kFinish, enc, ret[kDefault] == 1,
                  iv_len_before);
      if (iv_unset && ret[kDefault] == 1) m.gcm_random_iv = true;
    }
  }

  // What one call returned on each provider, and the errors it left.
  struct Outcome {
    int ret[2] = {0, 0};
    ErrorCodes errors[2];

    void ExpectSame(const char *what) const {
      ExpectEqual(ret[kAesmux], ret[kDefault],
                  (std::string(what) + " returns").c_str());
      ExpectSameErrors(errors[kAesmux], errors[kDefault], what);
    }
  };

  // `call(side)` for aesmux, then (unless `aesmux_only`) the default
  // provider.
  template <typename Call>
  static Outcome OnBoth(Call call, bool aesmux_only = false) {
    Outcome outcome;
    for (int side = 0; side < (aesmux_only ? 1 : 2); ++side) {
      outcome.ret[side] = call(side);
      outcome.errors[side] = TakeErrorCodes();
    }
    return outcome;
  }

  // --- parameters --------------------------------------------------------

  // Follows what a set (or an init's parameters) did to the default
  // provider's state, in the order its set_ctx_params reads them.
  // GCM: a changed IV length finishes an IV set or drawn before.
  static void ModelGcmIvLen(Model &m, size_t old_len, size_t new_len) {
    if (new_len == 0 || new_len > 128 || new_len == old_len) return;
    if (m.gcm_iv != Model::GcmIv::kUninitialised) {
      m.GcmNewIv(Model::GcmIv::kFinished);
    }
  }

  // `iv_len` is the IV length before the set.
  void ModelParamsSet(Pair &pair, const ParamArray &params, bool ok,
                      size_t iv_len) {
    Model &m = pair.model;
    const OSSL_PARAM *p = &params.at(0);
    const MaybeFamily family = pair.family();
    if (!family) return;
    switch (*family) {
      case Family::kEcb:
      case Family::kCbc:
      case Family::kCtr: {
        unsigned int value;
        size_t size;
        const OSSL_PARAM *q;
        if ((q = Find(p, OSSL_CIPHER_PARAM_PADDING)) && !ReadUint(q, &value)) {
          return;
        }
        if ((q = Find(p, OSSL_CIPHER_PARAM_USE_BITS)) && !ReadUint(q, &value)) {
          return;
        }
        if ((q = Find(p, OSSL_CIPHER_PARAM_TLS_VERSION))) {
          if (!ReadUint(q, &value)) return;
          m.tls_version = value;
        }
        if ((q = Find(p, OSSL_CIPHER_PARAM_TLS_MAC_SIZE))) {
          if (!ReadSize(q, &size)) return;
          m.tls_mac_size = size;
        }
        break;
      }
      case Family::kGcm: {
        // tag, ivlen, tlsaad, tlsivfixed, tlsivinv, in this order.
        size_t applied = 0;
        const OSSL_PARAM *q;
        if (Find(p, OSSL_CIPHER_PARAM_AEAD_TAG)) {
          ++applied;
          if (ok) {
            m.gcm_tag_len = Model::GcmTagLen::kSet;
            m.gcm_tag_differs = false;
          }
        }
        size_t new_iv_len;
        if ((q = Find(p, OSSL_CIPHER_PARAM_IVLEN))) {
          ++applied;
          if (ok && ReadSize(q, &new_iv_len)) {
            ModelGcmIvLen(m, iv_len, new_iv_len);
          }
        }
        if ((q = Find(p, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD))) {
          ++applied;
          // The AAD is kept (and TLS mode armed) before its length field
          // is checked.
          if (q->data_type == OSSL_PARAM_OCTET_STRING &&
              q->data_size == EVP_AEAD_TLS1_AAD_LEN) {
            const bool may_have_stopped = !ok && applied > 1;
            m.tls_aad_unsure =
                may_have_stopped && (!m.tls_aad_pending || m.tls_aad_unsure);
            m.tls_aad_pending = true;
          }
        }
        if ((q = Find(p, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED))) ++applied;
        if (q != nullptr && ok) {
          m.GcmNewIv(Model::GcmIv::kBuffered);
          // The whole IV (size -1), or its fixed part and, encrypting, a
          // random invocation field; decrypting keeps the rest.
          if (q->data_size == SIZE_MAX) {
            m.gcm_random_iv = false;
          } else if (pair.encrypting()) {
            m.gcm_random_iv = true;
          }
        }
        if (Find(p, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV)) {
          ++applied;
          if (ok) m.GcmNewIv(Model::GcmIv::kCopied);
        }
        if (!ok && applied > 1) {
          m.unknown = true;
          // A later parameter may have failed after tlsivfixed set a new
          // IV. The model takes the new IV: it then sees an interrupted
          // message (which aesmux must refuse to finish) only where one
          // is certain.
          if (Find(p, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED)) {
            m.GcmNewIv(Model::GcmIv::kBuffered);
          }
        }
        break;
      }
      default:
        break;
    }
  }

  // Known memory errors of the default provider that a parameter array
  // would trigger. Such arrays go to aesmux only, which must refuse them.
  const char *DefaultHazard(Pair &pair, const ParamArray &params) {
    const OSSL_PARAM *p = &params.at(0);
    const MaybeFamily family = pair.family();
    unsigned int num;
    if (family == Family::kCtr &&
        ReadUint(Find(p, OSSL_CIPHER_PARAM_NUM), &num) && num >= 16) {
      // OpenSSL 3.0.19 and older index their 16-byte keystream block
      // with num.
      return "num beyond the keystream block";
    }
    if (family == Family::kGcm) {
      size_t iv_len = EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault]);
      // It applies an IV length before the TLS parameters, or refuses it
      // (up to 128 bytes) and stops there.
      if (const OSSL_PARAM *ivlen = Find(p, OSSL_CIPHER_PARAM_IVLEN)) {
        size_t new_len;
        if (!ReadSize(ivlen, &new_len) || new_len == 0 || new_len > 128) {
          return nullptr;
        }
        iv_len = new_len;
      }
      const OSSL_PARAM *q = Find(p, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV);
      if (q != nullptr && q->data != nullptr &&
          q->data_type == OSSL_PARAM_OCTET_STRING && q->data_size > iv_len) {
        // It copies the explicit IV to iv + ivlen - size.
        return "tlsivinv longer than the IV";
      }
      q = Find(p, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED);
      if (q != nullptr && q->data_type == OSSL_PARAM_OCTET_STRING &&
          q->data_size != SIZE_MAX && q->data_size > iv_len) {
        // ivlen - len underflows: it takes the fixed part (copying past its
        // IV buffer beyond 128 bytes) and, encrypting, asks for (size_t)-n
        // random bytes after it.
        return "tlsivfixed longer than the IV";
      }
    }
    return nullptr;
  }

  void SetParams(Pair &pair, size_t count, bool natural) {
    if (!pair.live()) return;
    std::vector<ParamSpec> specs;
    for (size_t i = 0; i < count; ++i) {
      specs.push_back(DrawParam(in_, true, natural && in_.Pick(4) != 0));
    }
    Note("set params" + DescribeParams(specs));
    ParamArray arrays[2] = {ParamArray(specs), ParamArray(specs)};
    const size_t iv_len_before =
        pair.has_cipher() ? EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault])
                          : 0;
    const char *hazard = DefaultHazard(pair, arrays[kAesmux]);
    const Outcome o = OnBoth(
        [&](int side) {
          return EVP_CIPHER_CTX_set_params(pair.ctx[side], arrays[side].get());
        },
        hazard != nullptr);
    const int *ret = o.ret;
    const ErrorCodes *errors = o.errors;
    Model &m = pair.model;
    if (hazard != nullptr) {
      Note(std::string("  (default provider not asked: ") + hazard + ")");
      if (ret[kAesmux] != 0) {
        Fail(std::string("aesmux accepted ") + hazard);
      }
      // aesmux refused, possibly after applying the parameters before it.
      m.unknown = true;
      return;
    }
    if (m.Comparable() && ret[kAesmux] != ret[kDefault] &&
        AcceptedNumDifference(pair, arrays[kAesmux], ret, errors)) {
      m.num_diverged = true;
    } else if (m.Comparable()) {
      o.ExpectSame("set params");
    }
    ModelParamsSet(pair, arrays[kDefault], ret[kDefault] == 1, iv_len_before);
  }

  // num, where the installed default provider's version decides
  // (docs/differences.md): aesmux takes 0..15 in every mode. For CTR,
  // OpenSSL 3.0.20+ refuses every value but 0 (it compares num with the
  // block size, 1 for a stream mode), while aesmux takes the offsets into
  // the keystream block, as 3.0.19 did. For ECB and CBC, which do not use
  // num, 3.0.19 takes any value, while aesmux refuses 16 and more, as 3.0.20+
  // do.
  bool AcceptedNumDifference(Pair &pair, const ParamArray &params,
                             const int ret[2], const ErrorCodes errors[2]) {
    const ErrorCodes refused{{ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER}};
    unsigned int num;
    if (!ReadUint(Find(&params.at(0), OSSL_CIPHER_PARAM_NUM), &num)) {
      return false;
    }
    const MaybeFamily family = pair.family();
    if (family == Family::kCtr) {
      return ret[kAesmux] == 1 && ret[kDefault] == 0 && num >= 1 && num < 16 &&
             errors[kAesmux].empty() && errors[kDefault] == refused;
    }
    return (family == Family::kEcb || family == Family::kCbc) &&
           ret[kAesmux] == 0 && ret[kDefault] == 1 && num >= 16 &&
           errors[kAesmux] == refused && errors[kDefault].empty();
  }

  void GetParams(Pair &pair, size_t count, bool natural) {
    if (!pair.live()) return;
    std::vector<ParamSpec> specs;
    for (size_t i = 0; i < count; ++i) {
      specs.push_back(DrawParam(in_, false, natural && in_.Pick(4) != 0));
    }
    Note("get params" + DescribeParams(specs));
    ParamArray arrays[2] = {ParamArray(specs), ParamArray(specs)};
    const MaybeFamily family = pair.family();
    // tlsivgen starts a message on the IV (and advances it).
    const OSSL_PARAM *gen =
        Find(&arrays[kDefault].at(0), OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN);
    // Default provider hazard: tlsivgen on an IV shorter than its 8-byte
    // counter increments the bytes in front of the IV. aesmux must refuse.
    const bool hazard =
        family == Family::kGcm && gen != nullptr &&
        EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault]) < 8;
    const Outcome o = OnBoth(
        [&](int side) {
          return EVP_CIPHER_CTX_get_params(pair.ctx[side], arrays[side].get());
        },
        hazard);
    const int *ret = o.ret;
    Model &m = pair.model;
    if (hazard) {
      Note("  (default provider not asked: tlsivgen, IV under 8 bytes)");
      if (ret[kAesmux] != 0) Fail("aesmux ran tlsivgen on a short IV");
      return;
    }
    if (family == Family::kGcm && gen != nullptr && ret[kDefault] == 1) {
      m.GcmNewIv(Model::GcmIv::kCopied);
    }
    if (!m.Comparable() &&
        !(gen != nullptr && family == Family::kGcm && !m.unknown)) {
      return;
    }
    if (family == Family::kGcm && m.gcm_tag_differs &&
        Find(&arrays[kDefault].at(0), OSSL_CIPHER_PARAM_AEAD_TAG) != nullptr) {
      return;  // aesmux may have no tag where the default provider has one
    }
    o.ExpectSame("get params");
    for (size_t i = 0; i < specs.size(); ++i) {
      CompareGot(pair, specs[i], arrays, i);
    }
  }

  // One parameter as each provider answered it.
  void CompareGot(Pair &pair, const ParamSpec &spec, ParamArray arrays[2],
                  size_t i) {
    const Model &m = pair.model;
    const MaybeFamily family = pair.family();
    const OSSL_PARAM &ours = arrays[kAesmux].at(i);
    const OSSL_PARAM &theirs = arrays[kDefault].at(i);
    const std::string what = "parameter " + spec.key;
    const bool random = family == Family::kGcm && m.gcm_random_iv;
    const bool iv_like = spec.key == OSSL_CIPHER_PARAM_IV ||
                         spec.key == OSSL_CIPHER_PARAM_UPDATED_IV ||
                         spec.key == OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN;
    const bool tag = spec.key == OSSL_CIPHER_PARAM_AEAD_TAG;
    if (spec.key == OSSL_CIPHER_PARAM_TLS_MAC) {
      return CompareTlsMac(pair, spec, arrays, i);
    }
    ExpectEqual(ours.return_size, theirs.return_size,
                (what + " return_size").c_str());
    if ((random && (iv_like || tag)) || (tag && m.gcm_tag_differs)) return;
    if (spec.type == OSSL_PARAM_OCTET_PTR || spec.type == OSSL_PARAM_UTF8_PTR) {
      void *p0 = arrays[kAesmux].pointer(i);
      void *p1 = arrays[kDefault].pointer(i);
      const bool changed0 = p0 != pointer_before(arrays[kAesmux], i);
      const bool changed1 = p1 != pointer_before(arrays[kDefault], i);
      ExpectSame(changed0 == changed1, what + ": one provider set a pointer");
      if (!changed0 || spec.null_data) return;
      ExpectSame((p0 == nullptr) == (p1 == nullptr),
                 what + ": null pointer from one provider only");
      if (p0 != nullptr && iv_like && ours.return_size <= 128) {
        ExpectSameBytes(static_cast<uint8_t *>(p0), static_cast<uint8_t *>(p1),
                        ours.return_size, (what + " pointee").c_str());
      }
      return;
    }
    const std::vector<uint8_t> &b0 = arrays[kAesmux].storage(i);
    const std::vector<uint8_t> &b1 = arrays[kDefault].storage(i);
    if (!b0.empty() && !spec.null_data) {
      ExpectSameBytes(b0.data(), b1.data(), b0.size(), what.c_str());
    }
  }

  static void *pointer_before(const ParamArray &array, size_t i) {
    const std::vector<uint8_t> &storage = array.storage(i);
    return storage.empty() ? nullptr
                           : const_cast<uint8_t *>(storage.data());
  }

  // tls-mac: a pointer to the MAC of the last decrypted record. The
  // default provider points into its own allocation (CBC) or into the
  // caller's output buffer (CTR); the length is always tls-mac-size.
  void CompareTlsMac(Pair &pair, const ParamSpec &spec, ParamArray arrays[2],
                     size_t i) {
    const Model &m = pair.model;
    const MaybeFamily family = pair.family();
    const OSSL_PARAM &ours = arrays[kAesmux].at(i);
    const OSSL_PARAM &theirs = arrays[kDefault].at(i);
    ExpectEqual(ours.return_size, theirs.return_size, "tls-mac return_size");
    if (spec.type != OSSL_PARAM_OCTET_PTR || spec.null_data) return;
    const uint8_t *p0 = static_cast<uint8_t *>(arrays[kAesmux].pointer(i));
    const uint8_t *p1 = static_cast<uint8_t *>(arrays[kDefault].pointer(i));
    const size_t size = ours.return_size;
    const bool block = family == Family::kEcb || family == Family::kCbc;
    if (block && m.tls_mac_size > 64) {
      // aesmux never hands out more than its 64-byte MAC (the default
      // provider hands out its smaller allocation with the larger size).
      // Only the array's first tls-mac is answered; the others keep the
      // pointer they had.
      const bool set = p0 != pointer_before(arrays[kAesmux], i);
      ExpectSame(!set || p0 == nullptr,
                 "aesmux offered a TLS MAC beyond 64 bytes");
      return;
    }
    ExpectSame((p0 == nullptr) == (p1 == nullptr),
               "tls-mac: null pointer from one provider only");
    if (p0 == nullptr || m.mac_held == 0) return;
    const size_t n = std::min(size, m.mac_held);
    if (family == Family::kCtr) {
      // Both point into their caller's buffer, at the same offset, if it
      // is still the last one.
      const std::vector<uint8_t> &k0 = pair.kept[kAesmux];
      const std::vector<uint8_t> &k1 = pair.kept[kDefault];
      const bool in0 = !k0.empty() && p0 >= k0.data() &&
                       p0 + n <= k0.data() + k0.size();
      const bool in1 = !k1.empty() && p1 >= k1.data() &&
                       p1 + n <= k1.data() + k1.size();
      ExpectSame(in0 == in1, "tls-mac: pointers into different buffers");
      if (!in0 || m.mac_generation != pair.kept_generation) return;
      ExpectEqual(size_t(p0 - k0.data()), size_t(p1 - k1.data()),
                  "tls-mac offset");
    }
    if (!m.mac_random) ExpectSameBytes(p0, p1, n, "tls-mac");
  }

  void SetPadding(Pair &pair) {
    if (!pair.live()) return;
    const int pad = in_.Pick(3) == 0 ? 1 : 0;
    Note("set_padding " + std::to_string(pad));
    OnBoth([&](int side) {
      return EVP_CIPHER_CTX_set_padding(pair.ctx[side], pad);
    }).ExpectSame("set_padding");
  }

  void SetNum(Pair &pair) {
    if (!pair.has_cipher()) return;
    const int num = in_.Pick(4) == 0 ? int(in_.U32()) : int(in_.Pick(20));
    Note("set_num " + std::to_string(num));
    std::vector<ParamSpec> specs(1);
    specs[0].key = OSSL_CIPHER_PARAM_NUM;
    specs[0].type = OSSL_PARAM_UNSIGNED_INTEGER;
    specs[0].data_size = sizeof(unsigned int);
    specs[0].contents.resize(sizeof(unsigned int));
    std::memcpy(specs[0].contents.data(), &num, sizeof(num));
    ParamArray probe(specs);
    const bool hazard = DefaultHazard(pair, probe) != nullptr;
    const Outcome o = OnBoth(
        [&](int side) { return EVP_CIPHER_CTX_set_num(pair.ctx[side], num); },
        hazard);
    const int *ret = o.ret;
    if (hazard) {
      Note("  (default provider not asked: num beyond the keystream block)");
      if (ret[kAesmux] != 0) Fail("aesmux accepted num >= 16 for CTR");
      pair.model.unknown = true;
      return;
    }
    if (!pair.model.Comparable()) return;
    if (AcceptedNumDifference(pair, probe, ret, o.errors)) {
      pair.model.num_diverged = true;
      return;
    }
    o.ExpectSame("set_num");
  }

  void SetKeyLength(Pair &pair) {
    if (!pair.has_cipher()) return;
    constexpr int kLengths[] = {16, 24, 32, 64, 0, 17, 48};
    const int len = kLengths[in_.Pick(std::size(kLengths))];
    Note("set_key_length " + std::to_string(len));
    OnBoth([&](int side) {
      return EVP_CIPHER_CTX_set_key_length(pair.ctx[side], len);
    }).ExpectSame("set_key_length");
  }

  // OpenSSH's compatibility code writes the IV through
  // EVP_CIPHER_CTX_iv_noconst(): the pointer must be the running IV.
  void WriteIvThroughPointer(Pair &pair) {
    if (!pair.has_cipher()) return;
    const MaybeFamily family = pair.family();
    if (family == Family::kEcb) return;
    uint8_t *iv[2];
    for (int side = 0; side < 2; ++side) {
      iv[side] = EVP_CIPHER_CTX_iv_noconst(pair.ctx[side]);
    }
    ErrorCodes errors[2] = {TakeErrorCodes(), {}};
    Note("write iv through EVP_CIPHER_CTX_iv_noconst");
    if (!pair.model.Comparable()) return;
    ExpectSame((iv[0] == nullptr) == (iv[1] == nullptr),
               "EVP_CIPHER_CTX_iv_noconst: null from one provider only");
    if (iv[0] == nullptr) return;
    const size_t len = EVP_CIPHER_CTX_get_iv_length(pair.ctx[kDefault]);
    if (len == 0 || len > 16) return;  // the EVP context's IV is 16 bytes
    uint8_t bytes[16];
    in_.Bytes(bytes, len);
    std::memcpy(iv[0], bytes, len);
    std::memcpy(iv[1], bytes, len);
  }

  void Copy(Pair &dst, Pair &src) {
    if (!src.has_cipher()) return;
    if (src.model.mac_allocated) {
      // The default provider's dupctx shares its allocated TLS MAC: both
      // copies would free it.
      Note("copy skipped: the default provider would free its TLS MAC twice");
      return;
    }
    if (src.family() == Family::kXts && src.model.key_enc < 0) {
      // The default provider's copy of an XTS context without a key looks
      // keyed, and calls a null function on its first data unit.
      Note("copy skipped: the default provider's copy of a keyless XTS context");
      return;
    }
    Note("copy to slot " +
         std::to_string(&dst - pairs_.data()));
    if (&dst == &src) {
      // Copy into a fresh context and make that the pair.
      Pair fresh;
      EnsureCtx(fresh);
      CopyInto(fresh, src);
      src.Free();
      src = fresh;
      return;
    }
    EnsureCtx(dst);
    CopyInto(dst, src);
  }

  void CopyInto(Pair &dst, const Pair &src) {
    const Outcome o = OnBoth([&](int side) {
      return EVP_CIPHER_CTX_copy(dst.ctx[side], src.ctx[side]);
    });
    o.ExpectSame("copy");
    if (o.ret[kDefault] != 1) {
      // A failed copy leaves a context EVP cannot use.
      dst.Free();
      return;
    }
    dst.model = src.model;
    dst.last_out = src.last_out;
    dst.last_key = src.last_key;
    for (int side = 0; side < 2; ++side) dst.kept[side] = src.kept[side];
    // The copies' CTR MACs point into the source's buffers.
    dst.model.mac_held = src.model.mac_held;
  }

  // One update on each of the contexts in ASYNC jobs, resumed round-robin,
  // as `openssl speed -async_jobs` and async servers run them: aesmux
  // batches CBC encryptions of several jobs into multi-buffer lanes. The
  // default provider runs the same updates one after the other. Only
  // contexts in a state the harness follows without its models (no TLS
  // mode, no GCM, nothing diverged) take part.
  void AsyncUpdates() {
    struct Job {
      Pair *pair;
      std::vector<uint8_t> in, out[2];
      int ret[2] = {0, 0};
      int outl[2] = {-1, -1};
      bool pad;
      ASYNC_JOB *job = nullptr;
      ASYNC_WAIT_CTX *wait = nullptr;
      bool done = false;
    };
    std::vector<Job> jobs;
    for (Pair &pair : pairs_) {
      const MaybeFamily family = pair.family();
      const Model &m = pair.model;
      if (!pair.has_cipher() || family == Family::kGcm || !m.Comparable() ||
          m.tls_version != 0 ||
          (m.key_enc >= 0 && m.key_enc != int(pair.encrypting()))) {
        continue;
      }
      Job job;
      job.pair = &pair;
      job.in = DrawData(pair, family);
      job.pad = family != Family::kEcb && family != Family::kCbc
                    ? false
                    : Padding(pair);
      for (int side = 0; side < 2; ++side) {
        job.out[side].assign(job.in.size() + 32, 0xa5);
      }
      bytes_ += job.in.size();
      jobs.push_back(std::move(job));
    }
    if (jobs.empty() || !ASYNC_is_capable()) return;
    Note("async updates on " + std::to_string(jobs.size()) + " contexts");
    ASYNC_init_thread(jobs.size(), jobs.size());
    ErrorCodes errors[2];
    // aesmux, in jobs.
    auto run = [](void *arg) -> int {
      Job &job = **static_cast<Job **>(arg);
      job.ret[kAesmux] = EVP_CipherUpdate(
          job.pair->ctx[kAesmux], job.out[kAesmux].data(), &job.outl[kAesmux],
          job.in.data(), int(job.in.size()));
      return 1;
    };
    size_t running = jobs.size();
    for (Job &job : jobs) job.wait = ASYNC_WAIT_CTX_new();
    for (int round = 0; running != 0 && round < 100000; ++round) {
      for (Job &job : jobs) {
        if (job.done) continue;
        int ret = 0;
        Job *arg = &job;
        const int status = ASYNC_start_job(&job.job, job.wait, &ret, run,
                                           &arg, sizeof(arg));
        if (status == ASYNC_ERR || status == ASYNC_NO_JOBS) {
          Fail("ASYNC_start_job failed");
        }
        if (status == ASYNC_FINISH) {
          job.done = true;
          --running;
        }
      }
    }
    if (running != 0) Fail("ASYNC jobs never finished");
    errors[kAesmux] = TakeErrorCodes();
    for (Job &job : jobs) {
      ASYNC_WAIT_CTX_free(job.wait);
      job.ret[kDefault] = EVP_CipherUpdate(
          job.pair->ctx[kDefault], job.out[kDefault].data(),
          &job.outl[kDefault], job.in.data(), int(job.in.size()));
    }
    errors[kDefault] = TakeErrorCodes();
    ASYNC_cleanup_thread();
    std::sort(errors[0].begin(), errors[0].end());
    std::sort(errors[1].begin(), errors[1].end());
    ExpectSameErrors(errors[kAesmux], errors[kDefault], "async updates");
    for (Job &job : jobs) {
      ExpectEqual(job.ret[kAesmux], job.ret[kDefault], "async update returns");
      ExpectEqual(job.outl[kAesmux], job.outl[kDefault],
                  "async update output length");
      ExpectSameBytes(job.out[kAesmux].data(), job.out[kDefault].data(),
                      job.out[kAesmux].size(), "async update output");
      Pair &pair = *job.pair;
      Model &m = pair.model;
      const MaybeFamily family = pair.family();
      if (job.ret[kDefault] == 1 &&
          (family == Family::kEcb || family == Family::kCbc)) {
        const size_t total = m.held + job.in.size();
        m.held = !pair.encrypting() && job.pad && total != 0 && total % 16 == 0
                     ? 16
                     : total % 16;
      }
      if (job.ret[kDefault] == 1 && job.outl[kDefault] > 0) {
        pair.last_out.assign(job.out[kDefault].begin(),
                             job.out[kDefault].begin() + job.outl[kDefault]);
      }
      for (int side = 0; side < 2; ++side) {
        pair.kept[side] = std::move(job.out[side]);
      }
      ++pair.kept_generation;
      CompareState(pair);
    }
  }

  void Reset(Pair &pair) {
    if (!pair.live()) return;
    Note("reset");
    for (int side = 0; side < 2; ++side) EVP_CIPHER_CTX_reset(pair.ctx[side]);
    ERR_clear_error();
    pair.model = Model{};
    pair.last_out.clear();
  }

  void FreePair(Pair &pair) {
    Note("free");
    pair.Free();
  }

  // get_params of the algorithm (EVP_CIPHER_get_params) and the lists of
  // gettable and settable parameters, which must name the same keys.
  void AlgorithmParams(Pair &pair) {
    const size_t c = in_.Pick(kNumCiphers);
    std::vector<ParamSpec> specs;
    const size_t count = 1 + in_.Pick(6);
    for (size_t i = 0; i < count; ++i) {
      ParamSpec spec = DrawParam(in_, false, in_.Bit());
      constexpr const char *kKeys[] = {
          OSSL_CIPHER_PARAM_MODE,       OSSL_CIPHER_PARAM_KEYLEN,
          OSSL_CIPHER_PARAM_IVLEN,      OSSL_CIPHER_PARAM_BLOCK_SIZE,
          OSSL_CIPHER_PARAM_AEAD,       OSSL_CIPHER_PARAM_CUSTOM_IV,
          OSSL_CIPHER_PARAM_CTS,        OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK,
          OSSL_CIPHER_PARAM_HAS_RAND_KEY};
      if (in_.Bit()) spec.key = kKeys[in_.Pick(std::size(kKeys))];
      specs.push_back(spec);
    }
    Note("algorithm params " + Ciphers()[c].name +
         DescribeParams(specs));
    ParamArray arrays[2] = {ParamArray(specs), ParamArray(specs)};
    int ret[2];
    ErrorCodes errors[2];
    for (int side = 0; side < 2; ++side) {
      ret[side] = EVP_CIPHER_get_params(env_->ciphers[c][side],
                                        arrays[side].get());
      errors[side] = TakeErrorCodes();
    }
    ExpectEqual(ret[kAesmux], ret[kDefault], "algorithm get_params returns");
    ExpectSameErrors(errors[kAesmux], errors[kDefault], "algorithm params");
    for (size_t i = 0; i < specs.size(); ++i) {
      const OSSL_PARAM &a = arrays[kAesmux].at(i);
      const OSSL_PARAM &b = arrays[kDefault].at(i);
      ExpectEqual(a.return_size, b.return_size, "algorithm param return_size");
      const auto &s0 = arrays[kAesmux].storage(i);
      const auto &s1 = arrays[kDefault].storage(i);
      if (!s0.empty() && !specs[i].null_data &&
          specs[i].type != OSSL_PARAM_OCTET_PTR &&
          specs[i].type != OSSL_PARAM_UTF8_PTR) {
        ExpectSameBytes(s0.data(), s1.data(), s0.size(), "algorithm param");
      }
    }
    // The parameter lists, by key and type.
    if (!pair.has_cipher()) return;
    const OSSL_PARAM *lists[2][2];
    for (int side = 0; side < 2; ++side) {
      lists[side][0] = EVP_CIPHER_CTX_gettable_params(pair.ctx[side]);
      lists[side][1] = EVP_CIPHER_CTX_settable_params(pair.ctx[side]);
    }
    for (int which = 0; which < 2; ++which) {
      std::vector<std::pair<std::string, unsigned int>> keys[2];
      for (int side = 0; side < 2; ++side) {
        for (const OSSL_PARAM *p = lists[side][which];
             p != nullptr && p->key != nullptr; ++p) {
          keys[side].emplace_back(p->key, p->data_type);
        }
        std::sort(keys[side].begin(), keys[side].end());
      }
      ExpectSame(keys[0] == keys[1],
                 which == 0 ? "gettable parameters differ"
                            : "settable parameters differ");
    }
    ERR_clear_error();
  }

  // --- state after every operation ----------------------------------------

  void CompareState(Pair &pair) {
    if (!pair.has_cipher() || !pair.model.Comparable()) {
      ERR_clear_error();
      return;
    }
    const Model &m = pair.model;
    const MaybeFamily family = pair.family();
    struct Snapshot {
      int num, iv_len, key_len, tag_len, block_size;
      int iv_ok[2];
      size_t iv_size[2];
      uint8_t iv[2][128];
      unsigned int pad;
      int pad_ok;
      ErrorCodes errors;
    } s[2];
    for (int side = 0; side < 2; ++side) {
      EVP_CIPHER_CTX *ctx = pair.ctx[side];
      Snapshot &snap = s[side];
      snap.num = EVP_CIPHER_CTX_get_num(ctx);
      snap.iv_len = EVP_CIPHER_CTX_get_iv_length(ctx);
      snap.key_len = EVP_CIPHER_CTX_get_key_length(ctx);
      snap.tag_len = EVP_CIPHER_CTX_get_tag_length(ctx);
      snap.block_size = EVP_CIPHER_CTX_get_block_size(ctx);
      const char *keys[2] = {OSSL_CIPHER_PARAM_IV, OSSL_CIPHER_PARAM_UPDATED_IV};
      for (int k = 0; k < 2; ++k) {
        std::memset(snap.iv[k], 0, sizeof(snap.iv[k]));
        OSSL_PARAM p[] = {OSSL_PARAM_construct_octet_string(
                              keys[k], snap.iv[k], sizeof(snap.iv[k])),
                          OSSL_PARAM_construct_end()};
        snap.iv_ok[k] = EVP_CIPHER_CTX_get_params(ctx, p);
        snap.iv_size[k] = p[0].return_size;
      }
      snap.pad = 7;
      OSSL_PARAM p[] = {OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING,
                                                  &snap.pad),
                        OSSL_PARAM_construct_end()};
      snap.pad_ok = EVP_CIPHER_CTX_get_params(ctx, p);
      snap.errors = TakeErrorCodes();
    }
    ExpectEqual(s[0].num, s[1].num, "num");
    ExpectEqual(s[0].iv_len, s[1].iv_len, "IV length");
    ExpectEqual(s[0].key_len, s[1].key_len, "key length");
    ExpectEqual(s[0].tag_len, s[1].tag_len, "tag length");
    ExpectEqual(s[0].block_size, s[1].block_size, "block size");
    ExpectEqual(s[0].pad_ok, s[1].pad_ok, "get padding returns");
    ExpectEqual(s[0].pad, s[1].pad, "padding");
    ExpectSameErrors(s[0].errors, s[1].errors, "state queries");
    const bool random = family == Family::kGcm && m.gcm_random_iv;
    for (int k = 0; k < 2; ++k) {
      const char *what = k == 0 ? "iv" : "updated-iv";
      ExpectEqual(s[0].iv_ok[k], s[1].iv_ok[k], what);
      ExpectEqual(s[0].iv_size[k], s[1].iv_size[k], what);
      if (!random && s[0].iv_ok[k]) {
        ExpectSameBytes(s[0].iv[k], s[1].iv[k], sizeof(s[0].iv[k]), what);
      }
    }
  }

  Env *env_;
  FuzzInput &in_;
  bool params_mode_;
  std::array<Pair, kSlots> pairs_;
  size_t bytes_ = 0;
};

void RunHarness(const uint8_t *data, size_t size, bool params_mode) {
  if (size == 0) return;
  FuzzInput in(data, size);
  const size_t config = in.Pick(RouterConfigs().size());
  Env *env = GetEnv(config);
  if (env == nullptr) return;
  StartTrace();
  Note("configuration " + RouterConfigs()[config].name);
  ERR_clear_error();
  {
    Harness harness(env, in, params_mode);
    harness.Run();
  }
  if (Tracing()) {
    // Where aesmux's requests went (paths, multi-buffer batches), so far
    // in this process.
    std::fprintf(stderr, "aesmux statistics:\n%s\n",
                 env->env->ProviderParam("stats").c_str());
  }
}

}  // namespace

void RunSequence(const uint8_t *data, size_t size) {
  RunHarness(data, size, false);
}

void RunParams(const uint8_t *data, size_t size) {
  RunHarness(data, size, true);
}

}  // namespace aesmux::fuzz
