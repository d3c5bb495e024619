// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/kernel_crypto.h"

#include <fcntl.h>
#include <linux/cryptouser.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "provider/afalg/unique_fd.h"

namespace aesmux::afalg {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// Removes the next line from `text` and returns it without its '\n'.
std::string_view TakeLine(std::string_view *text) {
  const size_t end = text->find('\n');
  const std::string_view line = text->substr(0, end);
  text->remove_prefix(end == std::string_view::npos ? text->size() : end + 1);
  return line;
}

// The start of the line after the one at `line`, or `end`.
const char *NextLine(const char *line, const char *end) {
  const void *newline =
      std::memchr(line, '\n', static_cast<size_t>(end - line));
  return newline == nullptr ? end : static_cast<const char *>(newline) + 1;
}

// Whether the line at `line` holds only blanks (the usual line's first
// character already says no).
bool IsBlankLine(const char *line, const char *end) {
  for (; line < end && *line != '\n'; ++line) {
    if (*line != ' ' && *line != '\t' && *line != '\r') return false;
  }
  return true;
}

// Removes the next entry of /proc/crypto's text from `text`: its lines up
// to and with the blank line that ends it (a line of blanks counts as
// blank). Empty once no entry is left. Walks lines with memchr: the probe
// scans every entry for the few it wants.
std::string_view TakeEntry(std::string_view *text) {
  const char *line = text->data();
  const char *const end = line + text->size();
  while (line < end && IsBlankLine(line, end)) line = NextLine(line, end);
  const char *const begin = line;
  while (line < end) {
    const bool blank = IsBlankLine(line, end);
    line = NextLine(line, end);
    if (blank) break;
  }
  *text = std::string_view(line, static_cast<size_t>(end - line));
  return {begin, static_cast<size_t>(line - begin)};
}

// Splits a "key : value" line; false if it has no colon.
bool SplitField(std::string_view line, std::string_view *key,
                std::string_view *value) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  *key = Trim(line.substr(0, colon));
  *value = Trim(line.substr(colon + 1));
  return true;
}

// The value of `wanted` in an entry; nullopt if the entry has no such key.
std::optional<std::string_view> FieldOf(std::string_view entry,
                                        std::string_view wanted) {
  std::string_view key, value;
  while (!entry.empty()) {
    if (SplitField(TakeLine(&entry), &key, &value) && key == wanted) {
      return value;
    }
  }
  return std::nullopt;
}

// What an entry's "internal" and "selftest" fields say: an internal
// implementation, or one whose self-test has not passed ("unknown": not
// run yet), is never chosen.
bool IsInternal(std::string_view value) { return value == "yes"; }
bool SelftestPassed(std::string_view value) {
  return value != "unknown" && value != "failed";
}

// One entry's fields; unknown keys are ignored.
CryptoAlg ParseEntry(std::string_view entry) {
  CryptoAlg alg;
  std::string_view key, value;
  while (!entry.empty()) {
    if (!SplitField(TakeLine(&entry), &key, &value)) continue;
    if (key == "name") {
      alg.name = value;
    } else if (key == "driver") {
      alg.driver = value;
    } else if (key == "module") {
      alg.module = value;
    } else if (key == "type") {
      alg.type = value;
    } else if (key == "priority") {
      std::from_chars(value.data(), value.data() + value.size(), alg.priority);
    } else if (key == "async") {
      alg.async = value == "yes";
    } else if (key == "internal") {
      alg.internal = IsInternal(value);
    } else if (key == "selftest") {
      alg.selftest_passed = SelftestPassed(value);
    }
  }
  return alg;
}

bool IsCpuWord(std::string_view word) {
  static constexpr std::array<std::string_view, 17> kWords = {
      "generic", "aesni", "fixed", "ce",     "neon",   "neonbs",
      "arm",     "arm64", "asm",   "x86_64", "clmulni", "pclmul",
      "p8",      "vmx",   "zvkned", "s390",  "sparc64"};
  if (std::find(kWords.begin(), kWords.end(), word) != kWords.end()) {
    return true;
  }
  return word.starts_with("avx") || word.starts_with("vaes") ||
         word.starts_with("sse");
}

bool IsCpuLeaf(std::string_view leaf) {
  while (!leaf.empty() && leaf.front() == '_') leaf.remove_prefix(1);
  size_t start = 0;
  for (size_t i = 0; i <= leaf.size(); ++i) {
    if (i == leaf.size() || leaf[i] == '-' || leaf[i] == '_') {
      if (i > start && IsCpuWord(leaf.substr(start, i - start))) return true;
      start = i + 1;
    }
  }
  return false;
}

}  // namespace

std::vector<CryptoAlg> ParseProcCrypto(std::string_view text) {
  std::vector<CryptoAlg> algs;
  for (std::string_view entry = TakeEntry(&text); !entry.empty();
       entry = TakeEntry(&text)) {
    CryptoAlg alg = ParseEntry(entry);
    if (!alg.name.empty()) algs.push_back(std::move(alg));
  }
  return algs;
}

namespace {

// The usable entry of highest priority whose `key` ("name" or "driver") is
// `value`, of `type`, that `accept` takes.
template <typename Accept>
std::optional<CryptoAlg> Best(std::string_view proc_crypto,
                              std::string_view key, std::string_view value,
                              std::string_view type, Accept accept) {
  std::optional<CryptoAlg> best;
  for (std::string_view entry = TakeEntry(&proc_crypto); !entry.empty();
       entry = TakeEntry(&proc_crypto)) {
    // Only the wanted algorithm's few entries are parsed whole (the kernel
    // prints the name first): parsing every entry whole was most of a probe's
    // cost (BENCHMARKS.md, "What does loading aesmux cost: start-up and
    // memory?").
    if (FieldOf(entry, key) != value) continue;
    CryptoAlg alg = ParseEntry(entry);
    if (alg.type != type || alg.internal || !alg.selftest_passed ||
        !accept(alg)) {
      continue;
    }
    if (!best.has_value() || alg.priority > best->priority) {
      best = std::move(alg);
    }
  }
  return best;
}

}  // namespace

std::optional<CryptoAlg> BestImplementation(std::string_view proc_crypto,
                                            std::string_view name,
                                            std::string_view type) {
  return Best(proc_crypto, "name", name, type,
              [](const CryptoAlg &) { return true; });
}

std::optional<CryptoAlg> BestOffloadImplementation(std::string_view proc_crypto,
                                                   std::string_view name,
                                                   std::string_view type) {
  return Best(proc_crypto, "name", name, type, [](const CryptoAlg &alg) {
    return !IsCpuSoftwareDriver(alg.driver);
  });
}

namespace {

// What the lines of one entry read so far say, for ListsDriver.
struct DriverEntry {
  bool driver = false;  // its driver is the one looked for
  bool type = false;    // of the type looked for
  bool usable = true;   // not internal, self-test not failed (as Best())
};

// Takes one line of /proc/crypto into `entry`; true if it is the blank
// line that ends an entry which is the one looked for. Allocates nothing.
bool EndsTheDriversEntry(std::string_view line, std::string_view driver,
                         std::string_view type, DriverEntry *entry) {
  if (Trim(line).empty()) {
    const bool found = entry->driver && entry->type && entry->usable;
    *entry = DriverEntry{};
    return found;
  }
  std::string_view key, value;
  if (!SplitField(line, &key, &value)) return false;
  if (key == "driver") {
    entry->driver = value == driver;
  } else if (key == "type") {
    entry->type = value == type;
  } else if (key == "internal") {
    entry->usable = entry->usable && !IsInternal(value);
  } else if (key == "selftest") {
    entry->usable = entry->usable && SelftestPassed(value);
  }
  return false;
}

}  // namespace

int ListsDriver(const char *path, std::string_view driver,
                std::string_view type, bool *listed, size_t chunk) noexcept {
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return -errno;
  chunk = std::clamp<size_t>(chunk, 1, kListingChunk);
  char buffer[kListingChunk];
  size_t held = 0;  // the start of a line the next read continues
  DriverEntry entry;
  for (;;) {
    const ssize_t n =
        read(fd.get(), buffer + held, std::min(chunk, sizeof(buffer) - held));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    const char *line = buffer;
    const char *const end = buffer + held + static_cast<size_t>(n);
    for (const char *next; line < end; line = next) {
      const void *newline =
          std::memchr(line, '\n', static_cast<size_t>(end - line));
      if (newline == nullptr) break;
      next = static_cast<const char *>(newline) + 1;
      if (EndsTheDriversEntry({line, static_cast<size_t>(next - 1 - line)},
                              driver, type, &entry)) {
        *listed = true;
        return 0;
      }
    }
    held = static_cast<size_t>(end - line);
    if (n == 0) {
      // The last line may lack its '\n', the last entry its blank line.
      *listed = EndsTheDriversEntry({line, held}, driver, type, &entry) ||
                EndsTheDriversEntry({}, driver, type, &entry);
      return 0;
    }
    if (held == sizeof(buffer)) return -EOVERFLOW;
    std::memmove(buffer, line, held);
  }
}

bool IsCpuSoftwareDriver(std::string_view driver) {
  // Leaves are the names not followed by '(' in the template expression.
  bool any_leaf = false;
  size_t start = 0;
  for (size_t i = 0; i <= driver.size(); ++i) {
    const char c = i == driver.size() ? ')' : driver[i];
    if (c != '(' && c != ')' && c != ',') continue;
    const std::string_view token = Trim(driver.substr(start, i - start));
    start = i + 1;
    if (c == '(' || token.empty()) continue;
    any_leaf = true;
    if (!IsCpuLeaf(token)) return false;
  }
  return any_leaf;
}

int ReadWholeFile(const char *path, std::string *text) {
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return -errno;
  text->clear();
  // Read into the string itself, not through a buffer on the stack: the
  // probe runs on a family's first request, which may be inside an ASYNC
  // job, on its 32 KiB stack.
  constexpr size_t kChunk = 16384;
  for (;;) {
    const size_t used = text->size();
    text->resize(used + kChunk);
    const ssize_t n = read(fd.get(), text->data() + used, kChunk);
    const int error = errno;
    text->resize(used + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0) {
      if (error == EINTR) continue;
      return -error;
    }
    if (n == 0) return 0;
  }
}

std::optional<int> ReadAfAlgRestrict() {
  std::string text;
  if (ReadWholeFile("/proc/sys/crypto/af_alg_restrict", &text) != 0) {
    return std::nullopt;
  }
  int value = 0;
  const std::string_view trimmed = Trim(text.substr(0, text.find('\n')));
  if (std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), value)
          .ec != std::errc()) {
    return std::nullopt;
  }
  return value;
}

int QueryDriverFlags(const std::string &driver, unsigned *flags) {
  UniqueFd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CRYPTO));
  if (!fd.valid()) return -errno;
  struct {
    nlmsghdr header;
    crypto_user_alg alg;
  } request{};
  request.header.nlmsg_len = sizeof(request);
  request.header.nlmsg_type = CRYPTO_MSG_GETALG;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  request.header.nlmsg_seq = 1;
  if (driver.size() >= sizeof(request.alg.cru_driver_name)) return -ENAMETOOLONG;
  std::memcpy(request.alg.cru_driver_name, driver.data(), driver.size());
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd.get(), &request, sizeof(request), 0,
             reinterpret_cast<sockaddr *>(&kernel), sizeof(kernel)) < 0) {
    return -errno;
  }
  alignas(nlmsghdr) char reply[8192];
  const ssize_t n = recv(fd.get(), reply, sizeof(reply), 0);
  if (n < 0) return -errno;
  const auto *header = reinterpret_cast<const nlmsghdr *>(reply);
  if (!NLMSG_OK(header, static_cast<unsigned>(n))) return -EPROTO;
  if (header->nlmsg_type == NLMSG_ERROR) {
    const auto *error = static_cast<const nlmsgerr *>(NLMSG_DATA(header));
    return error->error != 0 ? error->error : -EPROTO;
  }
  if (header->nlmsg_len < NLMSG_LENGTH(sizeof(crypto_user_alg))) return -EPROTO;
  const auto *alg = static_cast<const crypto_user_alg *>(NLMSG_DATA(header));
  *flags = alg->cru_flags;
  return 0;
}

}  // namespace aesmux::afalg
