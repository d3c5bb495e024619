// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// What aesmux reads from the kernel about its crypto implementations:
// /proc/crypto's format, which implementation bind() gets, which drivers
// are CPU software (refused under afalg = auto), and whether a driver is
// still listed (asked by a request that waits long on it).
#include "provider/afalg/kernel_crypto.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "provider/afalg/known_answers.h"
#include "provider/afalg/ring.h"
#include "provider/core/process.h"
#include "tests/support/alloc_hooks.h"

namespace aesmux::afalg {
namespace {

// Shaped like a real /proc/crypto: aesni and generic implementations, a
// template instance, an internal helper and an offload driver.
constexpr const char *kProcCrypto = R"(name         : cbc(aes)
driver       : cbc(aes-generic)
module       : kernel
priority     : 100
refcnt       : 1
selftest     : passed
internal     : no
type         : skcipher
async        : no

name         : __cbc(aes)
driver       : __cbc-aes-aesni
module       : aesni_intel
priority     : 400
selftest     : passed
internal     : yes
type         : skcipher
async        : no

name         : cbc(aes)
driver       : cbc-aes-aesni
module       : aesni_intel
priority     : 400
selftest     : passed
internal     : no
type         : skcipher
async        : yes

name         : cbc(aes)
driver       : cbc-aes-qce
module       : qcrypto
priority     : 300
selftest     : passed
internal     : no
type         : skcipher
async        : yes

name         : gcm(aes)
driver       : gcm_base(ctr(aes-aesni),ghash-generic)
module       : gcm
priority     : 400
selftest     : passed
internal     : no
type         : aead
async        : no
)";

TEST(ParseProcCrypto, ReadsEveryEntryAndField) {
  const std::vector<CryptoAlg> algs = ParseProcCrypto(kProcCrypto);
  ASSERT_EQ(algs.size(), 5u);
  EXPECT_EQ(algs[0].name, "cbc(aes)");
  EXPECT_EQ(algs[0].driver, "cbc(aes-generic)");
  EXPECT_EQ(algs[0].module, "kernel");
  EXPECT_EQ(algs[0].priority, 100);
  EXPECT_EQ(algs[0].type, "skcipher");
  EXPECT_FALSE(algs[0].async);
  EXPECT_TRUE(algs[1].internal);
  EXPECT_TRUE(algs[2].async);
  EXPECT_EQ(algs[4].type, "aead");
}

TEST(BestImplementation, IsTheUsableEntryOfHighestPriority) {
  const std::optional<CryptoAlg> cbc =
      BestImplementation(kProcCrypto, "cbc(aes)", "skcipher");
  ASSERT_TRUE(cbc.has_value());
  EXPECT_EQ(cbc->driver, "cbc-aes-aesni");
  EXPECT_EQ(cbc->priority, 400);
  EXPECT_TRUE(cbc->async);
  const std::optional<CryptoAlg> gcm =
      BestImplementation(kProcCrypto, "gcm(aes)", "aead");
  ASSERT_TRUE(gcm.has_value());
  EXPECT_EQ(gcm->driver, "gcm_base(ctr(aes-aesni),ghash-generic)");
  EXPECT_FALSE(BestImplementation(kProcCrypto, "cbc(aes)", "aead"));
  EXPECT_FALSE(BestImplementation(kProcCrypto, "xts(aes)", "skcipher"));
  // Internal helpers are never chosen, however high their priority.
  EXPECT_FALSE(BestImplementation(kProcCrypto, "__cbc(aes)", "skcipher"));
}

TEST(BestImplementation, FindsTheNameOnAnyLineOfAnEntry) {
  // Entries end at a line of blanks too, and a name need not come first.
  constexpr const char *kReordered =
      "driver : ctr-aes-qce\npriority : 300\nname : ctr(aes)\n"
      "type : skcipher\n  \t\n"
      "name : ctr(aes)\ndriver : ctr(aes-generic)\npriority : 100\n"
      "type : skcipher\n";
  const std::optional<CryptoAlg> ctr =
      BestImplementation(kReordered, "ctr(aes)", "skcipher");
  ASSERT_TRUE(ctr.has_value());
  EXPECT_EQ(ctr->driver, "ctr-aes-qce");
  EXPECT_EQ(ParseProcCrypto(kReordered).size(), 2u);
}

TEST(BestOffloadImplementation, PassesOverCpuSoftwareOfHigherPriority) {
  // What a bind() by driver name should ask for: cbc-aes-qce, though
  // cbc-aes-aesni has the higher priority (a bind by "cbc(aes)" gets it).
  const std::optional<CryptoAlg> cbc =
      BestOffloadImplementation(kProcCrypto, "cbc(aes)", "skcipher");
  ASSERT_TRUE(cbc.has_value());
  EXPECT_EQ(cbc->driver, "cbc-aes-qce");
  EXPECT_EQ(cbc->priority, 300);
  // Only CPU software: none.
  EXPECT_FALSE(BestOffloadImplementation(kProcCrypto, "gcm(aes)", "aead"));
  EXPECT_FALSE(BestOffloadImplementation(kProcCrypto, "xts(aes)", "skcipher"));
}

TEST(BestOffloadImplementation, TakesTheOffloadDriverOfHighestPriority) {
  // virtio-crypto's driver (priority 150) against a second engine's.
  constexpr const char *kTwoEngines =
      "name : cbc(aes)\ndriver : virtio_crypto_aes_cbc\npriority : 150\n"
      "type : skcipher\nasync : yes\n\n"
      "name : cbc(aes)\ndriver : cbc-aes-aesni\npriority : 400\n"
      "type : skcipher\n\n"
      "name : cbc(aes)\ndriver : mv-cbc-aes\npriority : 300\n"
      "type : skcipher\nselftest : failed\n\n"
      "name : cbc(aes)\ndriver : safexcel-cbc-aes\npriority : 200\n"
      "type : skcipher\n";
  const std::optional<CryptoAlg> cbc =
      BestOffloadImplementation(kTwoEngines, "cbc(aes)", "skcipher");
  ASSERT_TRUE(cbc.has_value());
  // mv-cbc-aes failed its self-test: never chosen.
  EXPECT_EQ(cbc->driver, "safexcel-cbc-aes");
  EXPECT_FALSE(IsCpuSoftwareDriver("virtio_crypto_aes_cbc"));
}

// A file holding `text`, removed with this.
class TextFile {
 public:
  explicit TextFile(const std::string &text) {
    const int fd = mkstemp(path_);
    EXPECT_GE(fd, 0);
    if (fd < 0) return;
    EXPECT_EQ(write(fd, text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
    close(fd);
  }
  ~TextFile() { unlink(path_); }
  TextFile(const TextFile &) = delete;
  TextFile &operator=(const TextFile &) = delete;
  const char *path() const { return path_; }

 private:
  char path_[32] = "/tmp/aesmux-proc-crypto-XXXXXX";
};

// ListsDriver's answer, or its -errno as text.
std::string Listing(const TextFile &file, std::string_view driver,
                    std::string_view type, size_t chunk = kListingChunk) {
  bool listed = false;
  const int ret = ListsDriver(file.path(), driver, type, &listed, chunk);
  if (ret != 0) return "error " + std::to_string(ret);
  return listed ? "listed" : "not listed";
}

// An entry shaped like the kernel's, `padding` characters longer: in its
// module line, and in lines of 64 a key it does not know.
std::string Entry(std::string_view name, std::string_view driver,
                  size_t padding = 0) {
  std::string extra;
  for (; padding >= 64; padding -= 64) {
    extra += "unknown      : " + std::string(48, 'x') + "\n";
  }
  return "name         : " + std::string(name) +
         "\ndriver       : " + std::string(driver) +
         "\nmodule       : " + std::string(padding, 'm') +
         "kernel\npriority     : 300\nrefcnt       : 1\n" + extra +
         "selftest     : passed\ninternal     : no\n"
         "type         : skcipher\nasync        : yes\n\n";
}

TEST(ListsDriver, FindsAUsableEntryByItsDriverName) {
  const TextFile file(kProcCrypto);
  EXPECT_EQ(Listing(file, "cbc-aes-qce", "skcipher"), "listed");
  EXPECT_EQ(Listing(file, "cbc-aes-qce", "aead"), "not listed");
  EXPECT_EQ(Listing(file, "cbc-aes-foo", "skcipher"), "not listed");
  EXPECT_EQ(Listing(file, "cbc-aes-qc", "skcipher"), "not listed");
  EXPECT_EQ(Listing(file, "cbc(aes)", "skcipher"), "not listed");  // a name
  EXPECT_EQ(Listing(file, "__cbc-aes-aesni", "skcipher"), "not listed");
  EXPECT_EQ(Listing(file, "gcm_base(ctr(aes-aesni),ghash-generic)", "aead"),
            "listed");  // the last entry, with no blank line after it
  const TextFile failed(
      "name : cbc(aes)\ndriver : mv-cbc-aes\nselftest : failed\n"
      "type : skcipher\n");
  EXPECT_EQ(Listing(failed, "mv-cbc-aes", "skcipher"), "not listed");
  const TextFile unterminated("driver : mv-cbc-aes\ntype : skcipher");
  EXPECT_EQ(Listing(unterminated, "mv-cbc-aes", "skcipher"), "listed");
}

// /proc/crypto is tens of KiB (hundreds of entries); the driver may be
// anywhere, or nowhere.
TEST(ListsDriver, ReadsAListingManyTimesItsBuffer) {
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += Entry("ctr(aes)", "ctr-aes-engine" + std::to_string(i));
  }
  ASSERT_GT(text.size(), 100 * kListingChunk);
  const TextFile absent(text);
  const TextFile last(text + Entry("cbc(aes)", "cbc-aes-qce"));
  const TextFile first(Entry("cbc(aes)", "cbc-aes-qce") + text);
  EXPECT_EQ(Listing(absent, "cbc-aes-qce", "skcipher"), "not listed");
  EXPECT_EQ(Listing(last, "cbc-aes-qce", "skcipher"), "listed");
  EXPECT_EQ(Listing(first, "cbc-aes-qce", "skcipher"), "listed");
  EXPECT_EQ(Listing(absent, "ctr-aes-engine1999", "skcipher"), "listed");
}

// The wanted entry moved across the end of a read a byte at a time, so
// that each of its lines (its driver's, its type's, the blank one that
// ends it) is cut at every place: reads of a few bytes, and reads that
// fill the buffer.
TEST(ListsDriver, FindsTheDriverWhereverAReadEnds) {
  for (const size_t chunk : {size_t{1}, size_t{7}, size_t{64}, kListingChunk}) {
    for (size_t shift = 0; shift <= std::max<size_t>(chunk, 200); ++shift) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + ", shift " +
                   std::to_string(shift));
      const TextFile file(Entry("ctr(aes)", "ctr-aes-qce", shift) +
                          Entry("cbc(aes)", "cbc-aes-qce") +
                          Entry("ecb(aes)", "ecb-aes-qce"));
      EXPECT_EQ(Listing(file, "cbc-aes-qce", "skcipher", chunk), "listed");
      EXPECT_EQ(Listing(file, "cbc-aes-qcf", "skcipher", chunk), "not listed");
      EXPECT_EQ(Listing(file, "cbc-aes-qce", "aead", chunk), "not listed");
    }
  }
}

// The request path asks this when memory may have run out: nothing is
// allocated, so nothing fails, and the answer is the same.
TEST(ListsDriver, AllocatesNothing) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += Entry("ctr(aes)", "ctr-aes-qce");
  const TextFile absent(text);
  const TextFile present(text + Entry("cbc(aes)", "cbc-aes-qce"));
  bool listed_absent = true, listed_present = false;
  test::alloc::FailFrom(1);
  const int ret_absent =
      ListsDriver(absent.path(), "cbc-aes-qce", "skcipher", &listed_absent);
  const int ret_present =
      ListsDriver(present.path(), "cbc-aes-qce", "skcipher", &listed_present);
  const bool failed = test::alloc::InjectedFailure();
  test::alloc::StopFailing();
  EXPECT_FALSE(failed) << "ListsDriver allocated";
  EXPECT_EQ(ret_absent, 0);
  EXPECT_FALSE(listed_absent);
  EXPECT_EQ(ret_present, 0);
  EXPECT_TRUE(listed_present);
}

// No verdict, with the reason: a file that cannot be read, a line longer
// than the buffer (no line of /proc/crypto is).
TEST(ListsDriver, SaysWhyItCannotTell) {
  bool listed = false;
  EXPECT_EQ(
      ListsDriver("/nonexistent/crypto", "cbc-aes-qce", "skcipher", &listed),
      -ENOENT);
  const TextFile long_line("driver : " + std::string(kListingChunk, 'x') +
                           "\n" + Entry("cbc(aes)", "cbc-aes-qce"));
  EXPECT_EQ(Listing(long_line, "cbc-aes-qce", "skcipher"),
            "error " + std::to_string(-EOVERFLOW));
}

// The probe reads /proc/crypto whole, however long, into the string:
// every byte, in order, whatever the reads' sizes; a missing file is its
// -errno.
TEST(ReadWholeFile, ReadsEveryByteOfAFileOfManyReads) {
  std::string text;
  for (int i = 0; text.size() < 100000; ++i) {
    text += Entry("ctr(aes)", "ctr-aes-engine" + std::to_string(i), i % 97);
  }
  for (const std::string &content :
       {std::string(), std::string("x"), std::string(16384, 'y'),
        std::string(16385, 'z'), text}) {
    const TextFile file(content);
    std::string read = "left over";
    EXPECT_EQ(ReadWholeFile(file.path(), &read), 0);
    EXPECT_EQ(read, content) << content.size();
  }
  std::string none = "left over";
  EXPECT_EQ(ReadWholeFile("/nonexistent/proc/crypto", &none), -ENOENT);
}

TEST(IsCpuSoftwareDriver, KnowsTheCpuImplementations) {
  for (const char *driver :
       {"aes-generic", "cbc(aes-generic)", "cbc-aes-aesni", "__cbc-aes-aesni",
        "ctr-aes-aesni-avx", "xts-aes-vaes-avx10_512", "generic-gcm-aesni",
        "gcm_base(ctr(aes-aesni),ghash-generic)",
        "gcm_base(ctr-aes-aesni,ghash-clmulni)", "xts(ecb(aes-generic))",
        "cbc-aes-ce", "ctr-aes-neonbs", "cbc(aes-arm64)", "aes-fixed-time",
        "cryptd(__ctr-aes-aesni)", "ecb-aes-s390", "cbc-aes-p8",
        "xts-aes-zvkned"}) {
    EXPECT_TRUE(IsCpuSoftwareDriver(driver)) << driver;
  }
}

TEST(IsCpuSoftwareDriver, TakesEverythingElseForAnOffloadEngine) {
  for (const char *driver :
       {"cbc-aes-qce", "mv-cbc-aes", "qat_aes_cbc", "cbc-aes-ccp",
        "safexcel-cbc-aes", "gcm-aes-ccp", "cbc(aes-qce)",
        "gcm_base(ctr(aes-generic),ghash-qce)", "", "()"}) {
    EXPECT_FALSE(IsCpuSoftwareDriver(driver)) << driver;
  }
}

// Runs `work` on a thread of its own; false if it has not returned within
// ten seconds (the thread, deadlocked, is left behind).
template <class Work>
bool ReturnsInTime(Work work) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([done, work] {
    work();
    done->store(true);
  }).detach();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done->load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done->load();
}

// The probe runs under InitLock and makes the thread's ring, whose
// per-thread slot makes the process's pthread key under InitLock on first
// use: the thread holding it takes it again (else the probe would wait for
// ever for itself, as afalg = force does at load).
TEST(InitLockTest, ItsHolderTakesItAgain) {
  EXPECT_TRUE(ReturnsInTime([] {
    core::InitLock outer;
    core::InitLock inner;
  }));
  // The first ring of the process, made as the probe makes it.
  EXPECT_TRUE(ReturnsInTime([] {
    core::InitLock lock;
    int error = 0;
    (void)Ring::ForThisThread(&error);  // io_uring may be missing here
  }));
  // And given back by its last holder: another thread takes it.
  EXPECT_TRUE(ReturnsInTime([] { core::InitLock lock; }));
}

// The probe's known answers (known_answers.h), each against the default
// provider: a wrong one would turn a good driver's key size off.
TEST(KnownAnswers, AgreeWithTheDefaultProvider) {
  size_t checked = 0;
  for (const KnownAnswer &answer : kKnownAnswers) {
    const bool xts = answer.family == core::Family::kXts;
    const std::string name =
        "AES-" + std::to_string(answer.key_len * (xts ? 4 : 8)) + "-" +
        std::string(core::FamilyName(answer.family));
    SCOPED_TRACE(name);
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(nullptr, name.c_str(),
                                          "provider=default");
    ASSERT_NE(cipher, nullptr);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t key[64];
    for (size_t i = 0; i < answer.key_len; ++i) key[i] = static_cast<uint8_t>(i);
    const uint8_t iv[16] = {};
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx, cipher, key, iv, nullptr));
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    uint8_t out[32] = {};
    int len = 0, final_len = 0;
    ASSERT_TRUE(EVP_EncryptUpdate(ctx, out, &len, kKnownAnswerInput.data(),
                                  kKnownAnswerInput.size()));
    ASSERT_TRUE(EVP_EncryptFinal_ex(ctx, out + len, &final_len));
    size_t out_len = static_cast<size_t>(len + final_len);
    if (answer.family == core::Family::kGcm) {
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16,
                                      out + out_len));
      out_len += 16;
    }
    std::string hex;
    for (size_t i = 0; i < out_len; ++i) {
      static constexpr char kDigits[] = "0123456789abcdef";
      hex += kDigits[out[i] >> 4];
      hex += kDigits[out[i] & 15];
    }
    EXPECT_EQ(hex, answer.output);
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(cipher);
    ++checked;
  }
  // Every family and key size aesmux serves has one.
  EXPECT_EQ(checked, core::kNumAlgs);
}

}  // namespace
}  // namespace aesmux::afalg
