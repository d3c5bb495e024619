// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// What aesmux reads of openssl.cnf itself. OpenSSL hands a provider the
// values of its section only by name (core get_params), so aesmux cannot
// ask it which keys the section has, nor whether the file sets
// config_diagnostics; it reads the file OpenSSL reads by default
// ($OPENSSL_CONF, else OPENSSLDIR/openssl.cnf) for them.
//
// It finds its section there as OpenSSL does (openssl_conf, that section's
// `providers`, the entry named as the provider or whose section has that
// `identity`) and then asks the core for every key of it: only a section
// whose every key the core holds, with the same value wherever the file
// spells it plainly (no quotes, escapes or $variables), is taken as the one
// aesmux was loaded from. So a section of another file, or one of a
// library context configured from another file, is never mistaken for it:
// nothing is reported then. Keys whose value names a section (OpenSSL
// passes those as "<key>.<subkey>") are left out.
#ifndef AESMUX_PROVIDER_OPENSSL_OPENSSL_CNF_H_
#define AESMUX_PROVIDER_OPENSSL_OPENSSL_CNF_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/openssl_cnf.h belongs to a layer above the one that includes it"
#endif

#include <openssl/core.h>
#include <openssl/core_dispatch.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aesmux::openssl {

// One "key = value" line of an openssl.cnf file.
struct CnfEntry {
  std::string_view section;  // "default" before the first section header
  std::string_view key;
  std::string_view value;  // without comment and surrounding blanks
  // Whether the value is as OpenSSL reads it: no quotes, escapes or $.
  bool plain = true;
};

// How ParseCnf reads an included file (false: it cannot) and lists the
// *.cnf and *.conf files of a directory, as full paths in the order to read
// them (false: `path` is no directory); tests and the fuzzer give their own.
struct CnfReader {
  bool (*read)(const std::string &path, std::string *text);
  bool (*list)(const std::string &path, std::vector<std::string> *files);
};

// Reads regular files (at most 1 MiB each, never blocking) and directories.
extern const CnfReader kFileReader;

// The "key = value" lines of an openssl.cnf file and of the files it
// includes, in order; the views point into `texts`.
struct CnfFile {
  std::string path;
  std::deque<std::string> texts;
  std::vector<CnfEntry> entries;
  // Whether the default section sets config_diagnostics to a number other
  // than 0 (its leading digits, as OpenSSL reads it).
  bool Diagnostics() const;
};

// Parses `text`, the file `path`, following `.include` as OpenSSL does (a
// directory's *.cnf and *.conf files; a relative path under
// $OPENSSL_CONF_INCLUDE or `.pragma includedir`, else as given), at most 8
// deep and 1 MiB in all, through `reader`. A line OpenSSL would refuse is
// skipped: this only looks for keys, it does not check the file.
CnfFile ParseCnf(const std::string &path, std::string text,
                 const CnfReader &reader);

// What aesmux learned of the file about its own section.
struct AesmuxSection {
  // The file, for messages (route::Escaped); empty if the section was
  // not found.
  std::string file;
  // "<file> [<section>]", for messages; empty if not found (then `keys`
  // is too).
  std::string where;
  std::vector<std::string> keys;  // its keys, in order
  // The file sets config_diagnostics (CnfFile::Diagnostics) and holds the
  // section.
  bool diagnostics = false;
};

// The value the core holds for each of `keys` of the provider's section
// (nullopt: none), in their order.
using CoreValues = std::function<std::vector<std::optional<std::string>>(
    const std::vector<std::string_view> &keys)>;

// Finds the section of the provider called `name` in `file`, checked
// against the values the core holds (`core_values`).
AesmuxSection FindAesmuxSection(const CnfFile &file, std::string_view name,
                                const CoreValues &core_values);

// Reads the default openssl.cnf and finds there the section that the
// provider of `handle` was loaded from (asked through `get_params`). Costs a
// read and a scan of the file and two get_params calls.
AesmuxSection FindAesmuxSection(const OSSL_CORE_HANDLE *handle,
                                OSSL_FUNC_core_get_params_fn *get_params);

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_OPENSSL_CNF_H_
