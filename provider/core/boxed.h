// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Boxed<T>: a part of a context's state that most contexts never need (a
// path's state, an XTS tweak key, a TLS record's MAC), kept on the heap and
// made on first use, so that a context costs only what it uses
// (BENCHMARKS.md, "What does loading aesmux cost: start-up and memory?").
//
// It copies with the object that holds it, deeply, so a context's state
// stays a value that dupctx copies by construction: through T's copy
// constructor, or T::CopyFrom(const T &) -> bool where copying can fail
// without an exception. A failed copy throws std::bad_alloc, which the
// dispatch function that copies (dupctx) turns into an OpenSSL error.
#ifndef AESMUX_PROVIDER_CORE_BOXED_H_
#define AESMUX_PROVIDER_CORE_BOXED_H_

#include <concepts>
#include <memory>
#include <new>
#include <utility>

namespace aesmux::core {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed &other) : value_(Copy(other.value_.get())) {}
  Boxed &operator=(const Boxed &other) {
    if (this != &other) value_ = Copy(other.value_.get());
    return *this;
  }
  Boxed(Boxed &&) noexcept = default;
  Boxed &operator=(Boxed &&) noexcept = default;

  // Null until made.
  T *get() const { return value_.get(); }
  T *operator->() const { return value_.get(); }
  T &operator*() const { return *value_; }
  explicit operator bool() const { return value_ != nullptr; }

  // The value, default-constructed on first use; null (nothing changed) if
  // memory runs out.
  T *GetOrMake() {
    if (value_ == nullptr) value_.reset(new (std::nothrow) T());
    return value_.get();
  }

  // Destroys the value (T's destructor wipes what must be wiped).
  void Reset() { value_.reset(); }

 private:
  static std::unique_ptr<T> Copy(const T *from) {
    if (from == nullptr) return nullptr;
    if constexpr (requires(T &to) { { to.CopyFrom(*from) } -> std::same_as<bool>; }) {
      auto to = std::make_unique<T>();
      if (!to->CopyFrom(*from)) throw std::bad_alloc();
      return to;
    } else {
      return std::make_unique<T>(*from);
    }
  }

  std::unique_ptr<T> value_;
};

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_BOXED_H_
