// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/support/alloc_hooks.h"

#include <openssl/crypto.h>
#include <string.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>

namespace aesmux::test::alloc {
namespace {

// Sits just before every tracked block's bytes. Blocks aligned beyond the
// header's size start `offset` bytes into their allocation.
struct Header {
  Header *prev;
  Header *next;
  size_t size;
  size_t offset;
  uint64_t magic;
};
constexpr size_t kHeaderSize = 64;
static_assert(sizeof(Header) <= kHeaderSize);
constexpr uint64_t kMagic = 0x616c6c6f63686f6bULL;

struct Secret {
  uint8_t bytes[64];
  size_t len;
  char name[64];
};

struct Tracker {
  std::mutex mutex;
  Header live{nullptr, nullptr, 0, 0, 0};  // list head, guarded by mutex
  Secret secrets[256] = {};                // guarded by mutex
  size_t num_secrets = 0;
  char report[16384] = {};                 // guarded by mutex
  size_t report_len = 0;
};
constinit Tracker g_tracker;

thread_local uint64_t t_fail_countdown = 0;  // 0: not armed
thread_local bool t_failing = false;
thread_local bool t_injected = false;

// Allocations made by the hooks themselves (the tracker's blocks) and
// while they run: never failed by the C library's functions below.
thread_local int t_in_hooks = 0;

bool NextAllocationFails() {
  if (t_failing) {
    t_injected = true;
    return true;
  }
  if (t_fail_countdown != 0 && --t_fail_countdown == 0) {
    t_failing = true;
    t_injected = true;
    return true;
  }
  return false;
}

Header *HeaderOf(void *user) {
  return reinterpret_cast<Header *>(static_cast<uint8_t *>(user) - kHeaderSize);
}

void Link(Header *header) {
  std::lock_guard lock(g_tracker.mutex);
  Header &head = g_tracker.live;
  header->prev = &head;
  header->next = head.next;
  if (head.next != nullptr) head.next->prev = header;
  head.next = header;
}

void Note(const char *line) {
  const size_t len = strlen(line);
  if (g_tracker.report_len + len + 1 >= sizeof(g_tracker.report)) return;
  memcpy(g_tracker.report + g_tracker.report_len, line, len);
  g_tracker.report_len += len;
  g_tracker.report[g_tracker.report_len++] = '\n';
}

// Unlinks the block and searches it for the watched secrets.
void UnlinkAndInspect(Header *header) {
  std::lock_guard lock(g_tracker.mutex);
  header->prev->next = header->next;
  if (header->next != nullptr) header->next->prev = header->prev;
  const uint8_t *bytes = reinterpret_cast<uint8_t *>(header) + kHeaderSize;
  for (size_t i = 0; i < g_tracker.num_secrets; ++i) {
    const Secret &secret = g_tracker.secrets[i];
    if (memmem(bytes, header->size, secret.bytes, secret.len) != nullptr) {
      char line[160];
      std::snprintf(line, sizeof(line), "%s in a freed block of %zu bytes",
                    secret.name, header->size);
      Note(line);
    }
  }
  header->magic = 0;
}

}  // namespace

namespace internal {

void *Allocate(size_t size, size_t alignment) {
  if (NextAllocationFails()) return nullptr;
  const size_t offset = std::max(kHeaderSize, alignment);
  void *raw = nullptr;
  ++t_in_hooks;
  const int failed =
      posix_memalign(&raw, std::max<size_t>(alignment, 16), offset + size);
  --t_in_hooks;
  if (failed != 0) return nullptr;
  uint8_t *user = static_cast<uint8_t *>(raw) + offset;
  Header *header = HeaderOf(user);
  header->size = size;
  header->offset = offset;
  header->magic = kMagic;
  Link(header);
  return user;
}

void Release(void *user) {
  if (user == nullptr) return;
  Header *header = HeaderOf(user);
  if (header->magic != kMagic) std::abort();  // not ours, or freed twice
  UnlinkAndInspect(header);
  std::free(static_cast<uint8_t *>(user) - header->offset);
}

void *NewOrThrow(size_t size, size_t alignment) {
  void *user = Allocate(size == 0 ? 1 : size, alignment);
  if (user == nullptr) throw std::bad_alloc();
  return user;
}

}  // namespace internal

namespace {

using internal::Allocate;
using internal::Release;

void *OpenSslMalloc(size_t size, const char *, int) {
  return Allocate(size, 16);
}

void *OpenSslRealloc(void *old, size_t size, const char *, int) {
  if (old == nullptr) return Allocate(size, 16);
  if (size == 0) {
    Release(old);
    return nullptr;
  }
  void *fresh = Allocate(size, 16);
  if (fresh == nullptr) return nullptr;
  memcpy(fresh, old, std::min(size, HeaderOf(old)->size));
  Release(old);
  return fresh;
}

void OpenSslFree(void *user, const char *, int) { Release(user); }

}  // namespace

bool InstallOpenSslHooks() {
  return CRYPTO_set_mem_functions(OpenSslMalloc, OpenSslRealloc,
                                  OpenSslFree) == 1;
}

void FailFrom(uint64_t n) {
  t_failing = n == 0;
  t_fail_countdown = n;
  t_injected = false;
}

void StopFailing() {
  t_failing = false;
  t_fail_countdown = 0;
}

bool InjectedFailure() { return t_injected; }

void Watch(std::span<const uint8_t> secret, const char *name) {
  std::lock_guard lock(g_tracker.mutex);
  if (g_tracker.num_secrets == std::size(g_tracker.secrets) ||
      secret.size() > sizeof(Secret::bytes) || secret.empty()) {
    std::abort();  // a test asks for more than this supports
  }
  Secret &slot = g_tracker.secrets[g_tracker.num_secrets++];
  memcpy(slot.bytes, secret.data(), secret.size());
  slot.len = secret.size();
  std::snprintf(slot.name, sizeof(slot.name), "%s", name);
}

void ForgetWatched() {
  std::lock_guard lock(g_tracker.mutex);
  explicit_bzero(g_tracker.secrets, sizeof(g_tracker.secrets));
  g_tracker.num_secrets = 0;
  g_tracker.report_len = 0;
}

std::string FreedBlocksHoldingSecrets() {
  char copy[sizeof(Tracker::report)];
  size_t len;
  {
    std::lock_guard lock(g_tracker.mutex);
    len = g_tracker.report_len;
    memcpy(copy, g_tracker.report, len);
  }
  return std::string(copy, len);
}

size_t LiveBlocksHolding(std::span<const uint8_t> bytes,
                         size_t ignored_size) {
  std::lock_guard lock(g_tracker.mutex);
  size_t count = 0;
  for (const Header *header = g_tracker.live.next; header != nullptr;
       header = header->next) {
    if (ignored_size != 0 && header->size == ignored_size) continue;
    const uint8_t *user =
        reinterpret_cast<const uint8_t *>(header) + kHeaderSize;
    if (memmem(user, header->size, bytes.data(), bytes.size()) != nullptr) {
      ++count;
    }
  }
  return count;
}

}  // namespace aesmux::test::alloc

// The replaceable global allocation functions ([new.delete]).
namespace {
using aesmux::test::alloc::internal::Allocate;
using aesmux::test::alloc::internal::NewOrThrow;
using aesmux::test::alloc::internal::Release;
size_t Alignment(std::align_val_t align) {
  return std::max<size_t>(static_cast<size_t>(align), 16);
}
}  // namespace

void *operator new(size_t size) { return NewOrThrow(size, 16); }
void *operator new[](size_t size) { return NewOrThrow(size, 16); }
void *operator new(size_t size, std::align_val_t align) {
  return NewOrThrow(size, Alignment(align));
}
void *operator new[](size_t size, std::align_val_t align) {
  return NewOrThrow(size, Alignment(align));
}
void *operator new(size_t size, const std::nothrow_t &) noexcept {
  return Allocate(size == 0 ? 1 : size, 16);
}
void *operator new[](size_t size, const std::nothrow_t &) noexcept {
  return Allocate(size == 0 ? 1 : size, 16);
}
void *operator new(size_t size, std::align_val_t align,
                   const std::nothrow_t &) noexcept {
  return Allocate(size == 0 ? 1 : size, Alignment(align));
}
void *operator new[](size_t size, std::align_val_t align,
                     const std::nothrow_t &) noexcept {
  return Allocate(size == 0 ? 1 : size, Alignment(align));
}
void operator delete(void *user) noexcept { Release(user); }
void operator delete[](void *user) noexcept { Release(user); }
void operator delete(void *user, size_t) noexcept { Release(user); }
void operator delete[](void *user, size_t) noexcept { Release(user); }
void operator delete(void *user, std::align_val_t) noexcept { Release(user); }
void operator delete[](void *user, std::align_val_t) noexcept {
  Release(user);
}
void operator delete(void *user, size_t, std::align_val_t) noexcept {
  Release(user);
}
void operator delete[](void *user, size_t, std::align_val_t) noexcept {
  Release(user);
}
void operator delete(void *user, const std::nothrow_t &) noexcept {
  Release(user);
}
void operator delete[](void *user, const std::nothrow_t &) noexcept {
  Release(user);
}
void operator delete(void *user, std::align_val_t,
                     const std::nothrow_t &) noexcept {
  Release(user);
}
void operator delete[](void *user, std::align_val_t,
                       const std::nothrow_t &) noexcept {
  Release(user);
}

// The C library's allocation functions, failed on demand as the hooks'
// own (from the glibc functions aesmux calls, such as the registration of
// a thread_local destructor, to libstdc++'s operator new inside a module
// with its own hidden C++ runtime), and otherwise handed to glibc's
// implementation (glibc supports replacing malloc this way). Not under
// the sanitizers, whose runtimes replace these functions themselves.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *old, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *block);

namespace {
bool CLibraryAllocationFails() {
  if (aesmux::test::alloc::t_in_hooks != 0 ||
      !aesmux::test::alloc::NextAllocationFails()) {
    return false;
  }
  errno = ENOMEM;
  return true;
}
}  // namespace

__attribute__((visibility("default"))) void *malloc(size_t size) {
  return CLibraryAllocationFails() ? nullptr : __libc_malloc(size);
}
__attribute__((visibility("default"))) void *calloc(size_t count,
                                                    size_t size) {
  return CLibraryAllocationFails() ? nullptr : __libc_calloc(count, size);
}
__attribute__((visibility("default"))) void *realloc(void *old, size_t size) {
  return CLibraryAllocationFails() ? nullptr : __libc_realloc(old, size);
}
__attribute__((visibility("default"))) void free(void *block) {
  __libc_free(block);
}
__attribute__((visibility("default"))) void *memalign(size_t alignment,
                                                      size_t size) {
  return CLibraryAllocationFails() ? nullptr
                                   : __libc_memalign(alignment, size);
}
__attribute__((visibility("default"))) void *aligned_alloc(size_t alignment,
                                                           size_t size) {
  return memalign(alignment, size);
}
__attribute__((visibility("default"))) int posix_memalign(void **out,
                                                          size_t alignment,
                                                          size_t size) {
  if (CLibraryAllocationFails()) return ENOMEM;
  void *block = __libc_memalign(alignment, size);
  if (block == nullptr) return ENOMEM;
  *out = block;
  return 0;
}
}  // extern "C"
#endif
