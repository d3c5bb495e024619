// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Wycheproof's AES test vectors (tests/vectors/wycheproof/) and one run of
// a test case through EVP, shared by the provider suite
// (wycheproof_test.cc) and the ENGINE suite (engine_wycheproof_test.cc).
//
// A case runs the way a program drives the cipher: GCM sets the IV length,
// then key and IV, the AAD, the data, the tag (decryption) before final,
// and reads the tag after final (encryption); CBC pads with PKCS#7; XTS
// takes both key halves as one key and the tweak as the IV. The run records
// where it stopped, so that two implementations can be compared stage by
// stage, return value by return value.
#ifndef AESMUX_TESTS_PROVIDER_WYCHEPROOF_CASES_H_
#define AESMUX_TESTS_PROVIDER_WYCHEPROOF_CASES_H_

#include <openssl/evp.h>
#include <openssl/types.h>  // ENGINE

#include <cstddef>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tests/support/bytes.h"

namespace aesmux::test {

enum class WycheproofMode { kGcm, kCbcPkcs5, kXts };

struct WycheproofCase {
  int tc_id = 0;
  std::string comment;
  std::set<std::string> flags;
  bool valid = false;  // "valid"; false: "invalid" ("acceptable" is refused)
  std::string cipher;  // EVP name, e.g. "AES-128-GCM", "AES-256-XTS"
  Bytes key, iv, aad, msg, ct, tag;
};

struct WycheproofFile {
  std::string path;
  WycheproofMode mode;
  size_t number_of_tests = 0;  // as the file states
  std::vector<WycheproofCase> cases;
};

// A file of tests/vectors/wycheproof/ and the cases of it that cannot run,
// each kind documented at its definition: the suites check that exactly
// that many are left out.
struct WycheproofVectors {
  const char *name;
  WycheproofMode mode;
  size_t not_offered;  // cases whose cipher OpenSSL does not offer
};
extern const WycheproofVectors kWycheproofGcm, kWycheproofCbc, kWycheproofXts;

// Reads and checks one file: it holds numberOfTests cases, every case has
// the fields its mode needs, in hex, its result is "valid" or "invalid",
// and its flags are ones the suites know (so that a new kind of case in a
// new version of the file fails the suites instead of passing untested).
// Null with `error` if not.
std::optional<WycheproofFile> LoadWycheproof(const WycheproofVectors &vectors,
                                             std::string *error);

// How one run of a case ended. `failed` names the stage that failed
// ("INIT", "SET_IVLEN", "KEY_IV", "AAD", "UPDATE", "SET_TAG", "FINAL",
// "GET_TAG"; empty: none), `ret` is that call's return value, `library`
// and `reason` those of the last error it left on the queue (0 and empty:
// none; the reason as OpenSSL's text, which the EVP and PROV libraries
// share where their numbers differ). `out` is what the run produced up to
// then, `tag` the tag read after a GCM encryption.
struct WycheproofOutcome {
  std::string failed;
  int ret = 1;
  int library = 0;
  std::string reason;
  Bytes out;
  Bytes tag;

  bool operator==(const WycheproofOutcome &) const = default;
};
void PrintTo(const WycheproofOutcome &outcome, std::ostream *os);

// Runs `c` through `cipher` (with `engine`, which may be null), encrypting
// msg or decrypting ct. OpenSSL's error queue is left empty.
WycheproofOutcome RunWycheproofCase(const EVP_CIPHER *cipher, ENGINE *engine,
                                    WycheproofMode mode,
                                    const WycheproofCase &c, bool encrypt);

// GoogleTest expectations on one direction of a case: `tested` (aesmux's
// run, named `who`) equals `reference` (the default provider's), the
// default provider stops where the .cc documents it does (per flag: where
// it answers as Wycheproof does and where it differs), and both completed
// runs give Wycheproof's output and tag.
void ExpectWycheproofRun(WycheproofMode mode, const WycheproofCase &c,
                         bool encrypt, const WycheproofOutcome &tested,
                         const WycheproofOutcome &reference, const char *who);

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PROVIDER_WYCHEPROOF_CASES_H_
