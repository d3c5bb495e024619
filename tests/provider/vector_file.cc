// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/provider/vector_file.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace aesmux::test {
namespace {

constexpr std::string_view kTitle = "Title";

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

bool Contains(const std::vector<std::string_view> &names,
              std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Ends the stanza being read: a lone Title sets the title, anything else
// becomes a stanza. Returns false (with `error`) for a Title among others.
bool EndStanza(Stanza *current, std::string *title,
               std::vector<Stanza> *stanzas, std::string *error) {
  if (current->attributes.empty()) return true;
  if (const Attribute *t = current->Find(kTitle)) {
    if (current->attributes.size() != 1) {
      *error = "line " + std::to_string(t->line) +
               ": Title must be a stanza of its own";
      return false;
    }
    *title = t->value;
  } else {
    current->title = *title;
    stanzas->push_back(std::move(*current));
  }
  *current = Stanza{};
  return true;
}

}  // namespace

const Attribute *Stanza::Find(std::string_view name) const {
  for (const Attribute &attribute : attributes) {
    if (attribute.name == name) return &attribute;
  }
  return nullptr;
}

std::vector<const Attribute *> Stanza::FindAll(std::string_view name) const {
  std::vector<const Attribute *> found;
  for (const Attribute &attribute : attributes) {
    if (attribute.name == name) found.push_back(&attribute);
  }
  return found;
}

std::optional<std::vector<Stanza>> ParseVectorFile(std::string_view text,
                                                   const VectorFileSpec &spec,
                                                   std::string *error) {
  std::vector<Stanza> stanzas;
  Stanza current;
  std::string title;
  int line_number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view raw = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{}
                                         : text.substr(eol + 1);
    ++line_number;
    const std::string_view line = Trim(raw);
    if (!line.empty() && line.front() == '#') continue;
    if (line.empty()) {
      if (!EndStanza(&current, &title, &stanzas, error)) return std::nullopt;
      continue;
    }
    const std::string where = "line " + std::to_string(line_number) + ": ";
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      *error =
          where + "expected 'Name = Value', got '" + std::string(line) + "'";
      return std::nullopt;
    }
    const std::string_view name = Trim(line.substr(0, equals));
    const std::string_view value = Trim(line.substr(equals + 1));
    if (!Contains(spec.attributes, name) && name != kTitle) {
      *error = where + "unknown attribute '" + std::string(name) + "'";
      return std::nullopt;
    }
    if (current.Find(name) != nullptr && !Contains(spec.repeatable, name)) {
      *error = where + "attribute '" + std::string(name) + "' repeated";
      return std::nullopt;
    }
    if (current.attributes.empty()) current.line = line_number;
    current.attributes.push_back(
        {std::string(name), std::string(value), line_number});
  }
  if (!EndStanza(&current, &title, &stanzas, error)) return std::nullopt;
  return stanzas;
}

std::optional<std::vector<Stanza>> ReadVectorFile(const std::string &path,
                                                  const VectorFileSpec &spec,
                                                  std::string *error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot open " + path;
    return std::nullopt;
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  auto stanzas = ParseVectorFile(contents.str(), spec, error);
  if (!stanzas) *error = path + ": " + *error;
  return stanzas;
}

std::optional<std::vector<uint8_t>> DecodeHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int high = HexDigit(hex[2 * i]);
    const int low = HexDigit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return bytes;
}

}  // namespace aesmux::test
