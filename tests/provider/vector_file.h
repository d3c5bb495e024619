// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// A strict reader of OpenSSL's evp_test vector files
// (test/recipes/30-test_evp_data/*.txt): stanzas of `Name = Value` lines
// ended by a blank line; lines starting with '#' are comments.
//
// Strict, as BoringSSL's FileTest: the caller declares every attribute it
// understands, and an unknown attribute, a repeated one (unless declared
// repeatable), a line without '=' or a `Title` mixed into a stanza makes the
// whole file fail to parse, with the line number in the message. A stanza
// that holds only `Title = …` names the stanzas after it.
#ifndef AESMUX_TESTS_PROVIDER_VECTOR_FILE_H_
#define AESMUX_TESTS_PROVIDER_VECTOR_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aesmux::test {

struct Attribute {
  std::string name;
  std::string value;  // trimmed; may be empty ("AAD =")
  int line = 0;
};

struct Stanza {
  int line = 0;       // line of the first attribute
  std::string title;  // the last Title before the stanza, if any
  std::vector<Attribute> attributes;  // in file order

  // The first attribute called `name`, or nullptr.
  const Attribute *Find(std::string_view name) const;
  // Every attribute called `name`, in file order.
  std::vector<const Attribute *> FindAll(std::string_view name) const;
};

struct VectorFileSpec {
  std::vector<std::string_view> attributes;  // every accepted name
  std::vector<std::string_view> repeatable;  // names allowed more than once
};

// Parses `text`; on error returns nullopt and sets `error` to
// "line N: what is wrong".
std::optional<std::vector<Stanza>> ParseVectorFile(std::string_view text,
                                                   const VectorFileSpec &spec,
                                                   std::string *error);

// Reads and parses the file at `path`.
std::optional<std::vector<Stanza>> ReadVectorFile(const std::string &path,
                                                  const VectorFileSpec &spec,
                                                  std::string *error);

// Decodes hexadecimal digits (either case, even count, nothing else);
// nullopt if malformed. "" decodes to an empty vector.
std::optional<std::vector<uint8_t>> DecodeHex(std::string_view hex);

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PROVIDER_VECTOR_FILE_H_
