// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/openssl/openssl_cnf.h"

#include <dirent.h>
#include <openssl/conf.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "provider/route/calibration_file.h"
#include "provider/route/excerpt.h"

namespace aesmux::openssl {
namespace {

constexpr size_t kMaxIncludeDepth = 8;
constexpr size_t kMaxBytes = 1 << 20;  // every file read, in all

// (Loops of their own, not find_first_not_of: this runs at every
// process's start over each line of the file, and the library's search for
// a set of characters calls memchr for each character.)
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

// The argument of a directive line (".include path", ".include = path"),
// or nullopt if `line` is not the directive `name`.
std::optional<std::string_view> DirectiveArgument(std::string_view line,
                                                  std::string_view name) {
  if (!line.starts_with(name) || line.size() == name.size()) return {};
  const char next = line[name.size()];
  if (next != ' ' && next != '\t' && next != '=') return {};
  std::string_view argument = TrimBlanks(line.substr(name.size()));
  if (argument.starts_with('=')) argument = TrimBlanks(argument.substr(1));
  return argument;
}

class Parser {
 public:
  Parser(const CnfReader &reader, CnfFile *file)
      : reader_(reader), file_(file) {}

  void Parse(std::string text, size_t depth) {
    bytes_ += text.size();
    file_->entries.reserve(file_->entries.size() + text.size() / 64);
    std::string_view rest = file_->texts.emplace_back(std::move(text));
    bool continued = false;  // the line before ended in '\': a value's rest
    while (!rest.empty()) {
      const size_t newline = rest.find('\n');
      std::string_view line = rest.substr(0, newline);
      rest.remove_prefix(newline == std::string_view::npos ? rest.size()
                                                           : newline + 1);
      if (line.ends_with('\r')) line.remove_suffix(1);
      const bool part_of_value = continued;
      continued = line.ends_with('\\');
      if (part_of_value) continue;
      line = TrimBlanks(line);
      if (!line.empty() && line.front() != '#') Line(line, depth);
    }
  }

 private:
  // A line that is neither blank nor a comment, without surrounding blanks.
  void Line(std::string_view line, size_t depth) {
    if (line.front() == '[') {
      const size_t close = line.find(']');
      if (close != std::string_view::npos) {
        section_ = TrimBlanks(line.substr(1, close - 1));
      }
      return;
    }
    if (line.front() == '.') {
      if (const auto path = DirectiveArgument(line, ".include")) {
        Include(*path, depth);
        return;
      }
      if (const auto pragma = DirectiveArgument(line, ".pragma")) {
        const size_t colon = pragma->find(':');
        if (colon != std::string_view::npos &&
            TrimBlanks(pragma->substr(0, colon)) == "includedir") {
          includedir_ = std::string(TrimBlanks(pragma->substr(colon + 1)));
        }
        return;
      }
    }
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) return;
    CnfEntry entry{section_, TrimBlanks(line.substr(0, equals)), {}};
    // "section::key" sets a key of another section.
    if (const size_t colon = entry.key.find(':');
        colon != std::string_view::npos &&
        entry.key.substr(colon).starts_with("::")) {
      entry.section = entry.key.substr(0, colon);
      entry.key = entry.key.substr(colon + 2);
    }
    // The value ends at a comment ('#'); OpenSSL reads quotes, escapes and
    // variables in it, which this does not.
    const std::string_view value = line.substr(equals + 1);
    size_t end = 0;
    for (; end < value.size() && value[end] != '#'; ++end) {
      const char c = value[end];
      if (c == '"' || c == '\'' || c == '\\' || c == '$') entry.plain = false;
    }
    entry.value = TrimBlanks(value.substr(0, end));
    if (!entry.key.empty()) file_->entries.push_back(entry);
  }

  void Include(std::string_view target, size_t depth) {
    if (depth + 1 >= kMaxIncludeDepth || target.empty()) return;
    // As OpenSSL: $OPENSSL_CONF_INCLUDE, else `.pragma includedir`, is the
    // directory of a relative path.
    const char *variable = secure_getenv("OPENSSL_CONF_INCLUDE");
    const std::string directory = variable != nullptr ? variable : includedir_;
    std::string path(target);
    if (!directory.empty() && !target.starts_with('/')) {
      path = directory + (directory.ends_with('/') ? "" : "/") + path;
    }
    std::vector<std::string> files;
    if (!reader_.list(path, &files)) files = {path};
    for (const std::string &name : files) {
      std::string text;
      if (reader_.read(name, &text) && bytes_ + text.size() <= kMaxBytes) {
        Parse(std::move(text), depth + 1);
      }
    }
  }

  const CnfReader &reader_;
  CnfFile *file_;
  std::string_view section_ = "default";
  std::string includedir_;
  size_t bytes_ = 0;
};

bool ReadFile(const std::string &path, std::string *text) {
  std::string error;
  std::optional<std::string> read = route::ReadRegularFile(path, kMaxBytes, &error);
  if (!read) return false;
  *text = std::move(*read);
  return true;
}

bool ListDirectory(const std::string &path, std::vector<std::string> *files) {
  const std::unique_ptr<DIR, int (*)(DIR *)> directory(opendir(path.c_str()),
                                                       &closedir);
  if (directory == nullptr) return false;
  while (const dirent *entry = readdir(directory.get())) {
    const std::string_view name = entry->d_name;
    auto ends_with = [&](std::string_view suffix) {
      return name.size() > suffix.size() &&
             strcasecmp(name.data() + name.size() - suffix.size(),
                        suffix.data()) == 0;
    };
    if (ends_with(".cnf") || ends_with(".conf")) {
      files->push_back(path + (path.ends_with('/') ? "" : "/") +
                       std::string(name));
    }
  }
  std::sort(files->begin(), files->end());
  return true;
}

// The value of the last `key` of `section` (as OpenSSL keeps it), or
// nullopt.
std::optional<std::string_view> Value(const CnfFile &file,
                                      std::string_view section,
                                      std::string_view key) {
  std::optional<std::string_view> value;
  for (const CnfEntry &entry : file.entries) {
    if (entry.section == section && entry.key == key) value = entry.value;
  }
  return value;
}

bool HasSection(const CnfFile &file, std::string_view section) {
  return std::any_of(file.entries.begin(), file.entries.end(),
                     [&](const CnfEntry &e) { return e.section == section; });
}

// The entries of `section`, a key once (its last value, as OpenSSL keeps
// it), without those whose value names a section (OpenSSL passes their
// keys as "<key>.<subkey>").
std::vector<const CnfEntry *> SectionEntries(const CnfFile &file,
                                             std::string_view section) {
  std::vector<const CnfEntry *> entries;
  for (const CnfEntry &entry : file.entries) {
    if (entry.section != section) continue;
    auto same_key = [&](const CnfEntry *e) { return e->key == entry.key; };
    if (auto it = std::find_if(entries.begin(), entries.end(), same_key);
        it != entries.end()) {
      *it = &entry;
    } else {
      entries.push_back(&entry);
    }
  }
  std::erase_if(entries, [&](const CnfEntry *e) {
    return e->section != e->value && HasSection(file, e->value);
  });
  return entries;
}

}  // namespace

const CnfReader kFileReader = {ReadFile, ListDirectory};

bool CnfFile::Diagnostics() const {
  const std::optional<std::string_view> value =
      Value(*this, "default", "config_diagnostics");
  if (!value) return false;
  // OpenSSL reads the leading digits: "1", "10", "1x"; "yes" is 0.
  const size_t digits =
      std::min(value->find_first_not_of("0123456789"), value->size());
  return value->find_first_not_of('0') < digits;
}

CnfFile ParseCnf(const std::string &path, std::string text,
                 const CnfReader &reader) {
  CnfFile file;
  file.path = path;
  Parser(reader, &file).Parse(std::move(text), 0);
  return file;
}

AesmuxSection FindAesmuxSection(const CnfFile &file, std::string_view name,
                                const CoreValues &core_values) {
  const std::optional<std::string_view> init =
      Value(file, "default", "openssl_conf");
  const std::optional<std::string_view> providers =
      init ? Value(file, *init, "providers") : std::nullopt;
  if (!providers) return {};
  for (const CnfEntry &provider : file.entries) {
    if (provider.section != *providers) continue;
    // Its name, as OpenSSL's provider_conf_load() takes it.
    std::string_view provider_name = provider.key;
    if (const size_t dot = provider_name.find('.');
        dot != std::string_view::npos) {
      provider_name.remove_prefix(dot + 1);
    }
    const std::vector<const CnfEntry *> entries =
        SectionEntries(file, provider.value);
    for (const CnfEntry *entry : entries) {
      std::string_view key = entry->key;
      if (const size_t dot = key.find('.'); dot != std::string_view::npos) {
        key.remove_prefix(dot + 1);
      }
      if (key == "identity") provider_name = entry->value;
    }
    if (provider_name != name || entries.empty()) continue;
    // Checked: every key but activate and soft_load, which say how the
    // provider was loaded, not which section it was loaded from (`aesmux
    // info` loads it again from the same section without them).
    std::vector<std::string_view> keys, checked;
    std::vector<const CnfEntry *> checked_entries;
    for (const CnfEntry *entry : entries) {
      keys.push_back(entry->key);
      std::string_view key = entry->key;
      if (const size_t dot = key.find('.'); dot != std::string_view::npos) {
        key.remove_prefix(dot + 1);
      }
      if (key == "activate" || key == "soft_load") continue;
      checked.push_back(entry->key);
      checked_entries.push_back(entry);
    }
    const std::vector<std::optional<std::string>> held = core_values(checked);
    bool same = held.size() == checked.size();
    for (size_t i = 0; same && i < checked.size(); ++i) {
      same = held[i] && (!checked_entries[i]->plain ||
                         *held[i] == checked_entries[i]->value);
    }
    if (!same) continue;
    AesmuxSection section;
    section.file = route::Escaped(file.path);
    section.where =
        section.file + " [" + route::Escaped(provider.value) + "]";
    section.keys.assign(keys.begin(), keys.end());
    section.diagnostics = file.Diagnostics();
    return section;
  }
  return {};
}

AesmuxSection FindAesmuxSection(const OSSL_CORE_HANDLE *handle,
                                OSSL_FUNC_core_get_params_fn *get_params) {
  if (get_params == nullptr) return {};
  const char *name = nullptr;
  OSSL_PARAM name_param[] = {
      OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_CORE_PROV_NAME,
                          const_cast<char **>(&name), 0),
      OSSL_PARAM_END};
  if (!get_params(handle, name_param) || name == nullptr) return {};
  const std::unique_ptr<char, void (*)(char *)> path(
      CONF_get1_default_config_file(),
      [](char *p) { OPENSSL_free(p); });
  std::string text;
  if (path == nullptr || !kFileReader.read(path.get(), &text)) return {};
  const CnfFile file = ParseCnf(path.get(), std::move(text), kFileReader);
  return FindAesmuxSection(
      file, name, [&](const std::vector<std::string_view> &keys) {
        std::vector<std::string> names(keys.begin(), keys.end());
        std::vector<const char *> found(names.size(), nullptr);
        std::vector<OSSL_PARAM> params;
        for (size_t i = 0; i < names.size(); ++i) {
          params.push_back(OSSL_PARAM_utf8_ptr(
              names[i].c_str(), const_cast<char **>(&found[i]), 0));
        }
        params.push_back(OSSL_PARAM_END);
        std::vector<std::optional<std::string>> values(names.size());
        if (!get_params(handle, params.data())) return values;
        for (size_t i = 0; i < names.size(); ++i) {
          if (found[i] != nullptr) values[i] = std::string(found[i]);
        }
        return values;
      });
}

}  // namespace aesmux::openssl
