// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Text from a file, an openssl.cnf value or an environment variable, quoted
// in a message: at most a short excerpt, escaped, so that a value of
// megabytes or one holding terminal escape sequences cannot flood or
// rewrite the terminal that shows the message.
#ifndef AESMUX_PROVIDER_ROUTE_EXCERPT_H_
#define AESMUX_PROVIDER_ROUTE_EXCERPT_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/excerpt.h belongs to a layer above the one that includes it"
#endif

#include <cstddef>
#include <string>
#include <string_view>

namespace aesmux::route {

// The most bytes of a text an excerpt shows.
inline constexpr size_t kExcerptBytes = 48;

// `text` with printable ASCII as it is and every other byte (and '\' and
// '\'') as \xNN: for a name that a message shows whole, such as a path.
inline std::string Escaped(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string escaped;
  for (const char byte : text) {
    const auto c = static_cast<unsigned char>(byte);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      escaped += byte;
    } else {
      escaped += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return escaped;
}

// `text` in single quotes: Escaped() of its first kExcerptBytes bytes; a
// longer text ends in "..." and its length ("'abc...' (70000 bytes)").
inline std::string Excerpt(std::string_view text) {
  if (text.size() <= kExcerptBytes) return "'" + Escaped(text) + "'";
  return "'" + Escaped(text.substr(0, kExcerptBytes)) + "...' (" +
         std::to_string(text.size()) + " bytes)";
}

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_EXCERPT_H_
