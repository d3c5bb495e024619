// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Just enough JSON for the aesmux command's --json output: strings escaped
// as RFC 8259 requires. Objects are written by hand, one field a line, so
// that golden files diff line by line.
#ifndef AESMUX_PROVIDER_CLI_JSON_H_
#define AESMUX_PROVIDER_CLI_JSON_H_

#include <cstdio>
#include <string>
#include <string_view>

namespace aesmux::cli {

// `text` as a JSON string literal, quotes included.
inline std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_JSON_H_
