// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// What the kernel says about its crypto implementations: /proc/crypto,
// NETLINK_CRYPTO and /proc/sys/crypto/af_alg_restrict, and which drivers
// are plain CPU software.
//
// Errors: functions that read the system return 0 or -errno.
#ifndef AESMUX_PROVIDER_AFALG_KERNEL_CRYPTO_H_
#define AESMUX_PROVIDER_AFALG_KERNEL_CRYPTO_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/kernel_crypto.h belongs to a layer above the one that includes it"
#endif

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aesmux::afalg {

// One entry of /proc/crypto.
struct CryptoAlg {
  std::string name;    // "cbc(aes)"
  std::string driver;  // "cbc-aes-aesni"
  std::string module;  // "aesni_intel", "kernel"
  std::string type;    // "skcipher", "aead", "cipher", …
  int priority = 0;
  bool async = false;
  bool internal = false;
  bool selftest_passed = true;
};

// Parses /proc/crypto's text ("key : value" lines, blank lines between
// entries). Unknown keys are ignored.
std::vector<CryptoAlg> ParseProcCrypto(std::string_view text);

// The implementation a bind() to `name` of `type` gets, from /proc/crypto's
// text: the usable entry of highest priority (not internal, self-test not
// failed); nullopt if none. Parses only the entries named `name`.
std::optional<CryptoAlg> BestImplementation(std::string_view proc_crypto,
                                            std::string_view name,
                                            std::string_view type);

// The offload implementation of `name` of `type` a bind() by driver name
// should ask for: the usable entry of highest priority whose driver is not
// CPU software (IsCpuSoftwareDriver); nullopt if none. It may rank below a
// CPU implementation, which a bind() by `name` would get instead.
std::optional<CryptoAlg> BestOffloadImplementation(std::string_view proc_crypto,
                                                   std::string_view name,
                                                   std::string_view type);

// Whether the file at `path`, in /proc/crypto's format, lists a usable
// entry (as above) whose driver is `driver`, of `type`: into `listed`. It
// reads `chunk` bytes at a time (at most kListingChunk) into a buffer of
// kListingChunk bytes on the stack, keeping only the line it is in, and
// allocates nothing: it runs while a request waits (Service::DriverListed),
// under noexcept code, on an ASYNC job's 32 KiB stack, when memory may
// have run out. -EOVERFLOW if a line does not fit the buffer (no line of
// /proc/crypto comes near: a name has at most 127 characters).
inline constexpr size_t kListingChunk = 1024;
int ListsDriver(const char *path, std::string_view driver,
                std::string_view type, bool *listed,
                size_t chunk = kListingChunk) noexcept;

// Whether `driver` runs on the CPU: every leaf of its template expression
// ("gcm_base(ctr(aes-aesni),ghash-clmulni)" has leaves "aes-aesni" and
// "ghash-clmulni") names a CPU implementation: a dash- or underscore-
// separated word such as generic, aesni, fixed(-time), ce, neon, neonbs,
// arm, arm64, asm, x86_64, clmulni, p8, vmx, zvkned, s390, sparc64, or one
// starting with avx, vaes or sse. Anything else (cbc-aes-qce, mv-cbc-aes,
// qat_aes_cbc, cbc-aes-ccp, safexcel-cbc-aes) is taken for an offload
// engine.
bool IsCpuSoftwareDriver(std::string_view driver);

// Reads a whole (small, /proc-like) file; 0 or -errno. Uses little stack
// (it may run on an ASYNC job's); may throw std::bad_alloc.
int ReadWholeFile(const char *path, std::string *text);

// /proc/sys/crypto/af_alg_restrict (0 unrestricted, 1 allowlist, 2 off;
// proposed for Linux 7.3): nullopt where the file does not exist.
std::optional<int> ReadAfAlgRestrict();

// The flags NETLINK_CRYPTO reports for a driver (CRYPTO_MSG_GETALG). Needs
// CAP_NET_ADMIN and the crypto_user module; returns -errno otherwise.
int QueryDriverFlags(const std::string &driver, unsigned *flags);

// CRYPTO_ALG_KERN_DRIVER_ONLY: the implementation is a hardware driver.
inline constexpr unsigned kKernDriverOnly = 0x00001000;

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_KERNEL_CRYPTO_H_
