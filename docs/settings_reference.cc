// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Prints the reference of aesmux's settings from their one declaration
// (route::SettingKeys()), in the form each document needs:
//
//   settings_reference man TEMPLATE  TEMPLATE (aesmux.7) with its line
//                                    ".\" aesmux-settings-reference" replaced
//                                    by every key in troff
//   settings_reference markdown      docs/settings.md, whole
//   settings_reference cnf           the settings of openssl.cnf.example
//   settings_reference readme        README.md's table of the keys
//   settings_reference engine        docs/engine.md's table of the ENGINE's
//                                    control commands
//   settings_reference names         every openssl.cnf key and its control
//                                    command, a line each
//
// The build makes aesmux.7 with it; docs_drift_test compares the checked-in
// copies with what it prints (and rewrites them with --update). Text in the
// declaration marks code with `backquotes`.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "provider/route/settings.h"

namespace aesmux::docs {
namespace {

using route::Family;
using route::SettingKey;

// What holds for every key, in the declaration's markup; printed before the
// keys in every form.
constexpr std::string_view kPreamble[] = {
    "Every key goes in aesmux's section of openssl.cnf. An environment "
    "variable, `AESMUX_` and the key in capitals with `_` for `.` "
    "(`cbc.fallback_max_len`: `AESMUX_CBC_FALLBACK_MAX_LEN`), overrides it; "
    "setuid and setgid programs ignore these variables. The thresholds may "
    "also come from a calibration file (`calibration_file`). In increasing "
    "priority: the default, the calibration file, openssl.cnf, the "
    "environment. `aesmux info` shows every key in force and where its value "
    "came from.",
    "OpenSSL itself reads `module`, `activate`, `identity` and `soft_load` "
    "in that section; every other key there is aesmux's.",
    "Every program that loads aesmux prints each mistake of its "
    "configuration on stderr, once per process, and `aesmux info` lists "
    "them all and exits with status 1. A value aesmux cannot use is an "
    "error (`aesmux: not loaded: <key> = '<value>': <why>`): aesmux does not "
    "load, and OpenSSL runs the program on its default provider. An unknown "
    "key of aesmux's section or `AESMUX_*` variable (named with the nearest "
    "known one) and a calibration file that cannot be used are warnings "
    "(`aesmux: warning: ...`): aesmux loads without them. When the "
    "openssl.cnf that OpenSSL reads by default sets `config_diagnostics = "
    "1`, any mistake ends the program with exit status 1. With `disable = "
    "1` every mistake is a warning.",
    "Byte counts are decimal with an optional `K`, `M` or `G` suffix (powers "
    "of 1024).",
    "The ENGINE `aesmux` takes every key as a control command named as its "
    "variable without `AESMUX_`, given before the ENGINE is initialised; the "
    "variables override these too.",
};

constexpr std::string_view kGeneratedBy =
    "generated from provider/route/settings.cc by docs/settings_reference.cc "
    "(docs_drift_test --update)";

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char &c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::vector<Family> FamiliesOf(const SettingKey &key) {
  std::vector<Family> families;
  for (size_t f = 0; f < route::kNumFamilies; ++f) {
    if (key.families & (1u << f)) families.push_back(static_cast<Family>(f));
  }
  return families;
}

// A key of several families is written once with a placeholder for the
// family; a key of one family, or of none, by its own name.
bool HasPlaceholder(const SettingKey &key) {
  return FamiliesOf(key).size() > 1;
}

// The names of `key` in the declaration's markup ("`<family>.afalg`").
// `placeholder` is how the family is written where there is one, with
// "FAMILY" for the variable and the control command.
struct Names {
  std::string key, env, control;
};

Names NamesOf(const SettingKey &key) {
  if (!HasPlaceholder(key)) {
    const std::vector<Family> families = FamiliesOf(key);
    const Family family = families.empty() ? Family{} : families[0];
    const std::string env = route::EnvironmentName(key, family);
    return {route::ConfigKeyName(key, family), env,
            env.substr(std::string_view("AESMUX_").size())};
  }
  const std::string upper = Upper(key.name);
  return {"<family>." + std::string(key.name),
          "AESMUX_<FAMILY>_" + upper, "<FAMILY>_" + upper};
}

std::string FamilyList(const SettingKey &key) {
  std::string list;
  for (Family family : FamiliesOf(key)) {
    if (!list.empty()) list += ", ";
    list += "`" + std::string(core::FamilyName(family)) + "`";
  }
  return list;
}

// The first sentence of a text: up to a full stop followed by a space and a
// capital letter or code.
std::string_view Summary(std::string_view doc) {
  for (size_t i = 0; i + 2 < doc.size(); ++i) {
    const char next = doc[i + 2];
    if (doc[i] == '.' && doc[i + 1] == ' ' &&
        ((next >= 'A' && next <= 'Z') || next == '`')) {
      return doc.substr(0, i + 1);
    }
  }
  return doc;
}

std::string DefaultOf(const SettingKey &key) {
  if (!key.default_value.empty()) {
    return "`" + std::string(key.default_value) + "`";
  }
  return std::string(key.unset_means);
}

// A line of the example: the key (its first family's) and the value.
std::string ExampleOf(const SettingKey &key) {
  const std::vector<Family> families = FamiliesOf(key);
  return route::ConfigKeyName(key, families.empty() ? Family{} : families[0]) +
         " = " + std::string(key.example);
}

// What the declaration says of a key besides its documentation, as
// "label: value" lines in the declaration's markup.
std::vector<std::string> FactsOf(const SettingKey &key) {
  const Names names = NamesOf(key);
  std::vector<std::string> facts;
  if (HasPlaceholder(key)) facts.push_back("Families: " + FamilyList(key));
  facts.push_back("Default: " + DefaultOf(key));
  facts.push_back("Environment: `" + names.env + "`");
  facts.push_back("ENGINE control: `" + names.control + "`");
  if (key.calibrated) facts.push_back("A calibration file may set it");
  facts.push_back("Example: `" + ExampleOf(key) + "`");
  return facts;
}

// ---- troff ----

// Text for troff: a backslash escaped, a line never starting with a control
// character.
std::string TroffText(std::string_view text, bool code) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (code && c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

// The markup in troff: code in bold, "<word>" inside code in italics.
std::string Troff(std::string_view text) {
  std::string out;
  bool code = false;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '`') continue;
    std::string_view part = text.substr(start, i - start);
    if (code) {
      std::string bold = "\\fB";
      for (size_t j = 0; j < part.size(); ++j) {
        const size_t close = part.find('>', j);
        if (part[j] == '<' && close != std::string_view::npos) {
          bold += "\\fI" + TroffText(part.substr(j + 1, close - j - 1), true) +
                  "\\fB";
          j = close;
        } else {
          bold += TroffText(part.substr(j, 1), true);
        }
      }
      out += "\\%" + bold + "\\fR";
    } else {
      out += TroffText(part, false);
    }
    code = !code;
    start = i + 1;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

void PrintTroff(std::ostream &out) {
  out << ".\\\" The settings: " << kGeneratedBy << ".\n";
  for (std::string_view paragraph : kPreamble) {
    out << ".PP\n" << Troff(paragraph) << "\n";
  }
  for (const SettingKey &key : route::SettingKeys()) {
    out << ".TP\n" << Troff("`" + NamesOf(key).key + "`") << "\n"
        << Troff(key.doc) << "\n.IP\n";
    const char *separator = "";
    for (const std::string &fact : FactsOf(key)) {
      out << separator << Troff(fact) << "\n";
      separator = ".br\n";
    }
  }
}

int PrintMan(const char *template_path) {
  std::ifstream in(template_path);
  if (!in) {
    std::cerr << "settings_reference: cannot read " << template_path << "\n";
    return 1;
  }
  std::string line;
  int found = 0;
  while (std::getline(in, line)) {
    if (line == ".\\\" aesmux-settings-reference") {
      PrintTroff(std::cout);
      ++found;
    } else {
      std::cout << line << "\n";
    }
  }
  if (found != 1) {
    std::cerr << "settings_reference: " << template_path
              << " must hold the line .\\\" aesmux-settings-reference once\n";
    return 1;
  }
  return 0;
}

// ---- markdown ----

void PrintMarkdown(std::ostream &out) {
  out << "<!-- " << kGeneratedBy << " -->\n"
      << "# aesmux settings\n\n";
  for (std::string_view paragraph : kPreamble) out << paragraph << "\n\n";
  out << "The same reference is in `man 7 aesmux`; "
         "[openssl.cnf.example](../openssl.cnf.example) shows every key.\n";
  for (const SettingKey &key : route::SettingKeys()) {
    out << "\n## `" << NamesOf(key).key << "`\n\n" << key.doc << "\n\n";
    for (const std::string &fact : FactsOf(key)) out << "- " << fact << "\n";
  }
}

// README's table: each key with its default and the first sentence of its
// documentation.
void PrintReadme(std::ostream &out) {
  out << "<!-- settings: " << kGeneratedBy << " -->\n"
      << "| key | default | what it does |\n|---|---|---|\n";
  for (const SettingKey &key : route::SettingKeys()) {
    out << "| `" << NamesOf(key).key << "` | " << DefaultOf(key) << " | "
        << Summary(key.doc) << " |\n";
  }
  out << "<!-- end of settings -->\n";
}

// ---- openssl.cnf ----

// Wrapped into "# " comment lines of at most 78 columns.
void PrintComment(std::ostream &out, std::string_view text) {
  std::istringstream words{std::string(text)};
  std::string word, line;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > 76) {
      out << "# " << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out << "# " << line << "\n";
}

void PrintCnf(std::ostream &out) {
  PrintComment(out, "--- aesmux settings, " + std::string(kGeneratedBy) +
                        ". Every key is optional: each is shown commented "
                        "out with its default, then an example.");
  for (std::string_view paragraph : kPreamble) {
    out << "#\n";
    PrintComment(out, paragraph);
  }
  for (const SettingKey &key : route::SettingKeys()) {
    out << "\n";
    PrintComment(out, NamesOf(key).key + ": " + std::string(key.doc));
    std::string facts;
    for (const std::string &fact : FactsOf(key)) {
      if (!fact.starts_with("Example")) facts += fact + ". ";
    }
    PrintComment(out, facts);
    // The default, key by key, where there is one to write.
    std::vector<Family> families = FamiliesOf(key);
    if (families.empty()) families.push_back(Family{});
    for (Family family : families) {
      if (key.default_value.empty()) break;
      out << "# " << route::ConfigKeyName(key, family) << " = "
          << key.default_value << "\n";
    }
    out << "# Example:\n# " << ExampleOf(key) << "\n";
  }
  out << "# --- end of the aesmux settings\n";
}

// ---- the ENGINE ----

void PrintEngine(std::ostream &out) {
  out << "<!-- engine controls: " << kGeneratedBy << " -->\n"
      << "| control | setting | default |\n|---|---|---|\n";
  for (const SettingKey &key : route::SettingKeys()) {
    const Names names = NamesOf(key);
    out << "| `" << names.control << "` | `" << names.key << "` | "
        << DefaultOf(key) << " |\n";
  }
  out << "<!-- end of engine controls -->\n";
}

void PrintNames(std::ostream &out) {
  for (const route::SettingName &name : route::SettingNames()) {
    out << name.key << " "
        << name.env_name.substr(std::string_view("AESMUX_").size()) << "\n";
  }
}

int Usage() {
  std::cerr << "usage: settings_reference man TEMPLATE | markdown | cnf | "
               "readme | engine | names\n";
  return 2;
}

}  // namespace
}  // namespace aesmux::docs

int main(int argc, char **argv) {
  using namespace aesmux::docs;
  if (argc < 2) return Usage();
  const std::string_view form = argv[1];
  if (form == "man" && argc == 3) return PrintMan(argv[2]);
  if (argc != 2) return Usage();
  if (form == "markdown") {
    PrintMarkdown(std::cout);
  } else if (form == "cnf") {
    PrintCnf(std::cout);
  } else if (form == "readme") {
    PrintReadme(std::cout);
  } else if (form == "engine") {
    PrintEngine(std::cout);
  } else if (form == "names") {
    PrintNames(std::cout);
  } else {
    return Usage();
  }
  return std::cout.flush() ? 0 : 1;
}
