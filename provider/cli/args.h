// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The aesmux command's arguments, read as a Unix tool reads them: each
// command declares its options once (OptionSpec), "--name value" and
// "--name=value" are the same, "--" ends the options, and anything the
// command does not know is a usage error that names it and the nearest
// option (or command) it does know. Numbers are parsed whole and checked
// against their range: "3x", "abc", "inf" and "nan" are refused, naming the
// option and the value.
//
// Errors are printed on stderr as "aesmux COMMAND: ..." followed by a hint
// to `aesmux COMMAND --help`; the command then exits with kUsageError.
#ifndef AESMUX_PROVIDER_CLI_ARGS_H_
#define AESMUX_PROVIDER_CLI_ARGS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aesmux::cli {

// Exit statuses of every command: 0 success, 1 failure (aesmux does not
// load, a file cannot be read or written), 2 a usage error.
inline constexpr int kFailure = 1;
inline constexpr int kUsageError = 2;

// The candidate closest to `word` by edit distance (a swap of two adjacent
// characters counts as one edit), when it is close enough to be what was
// meant: at most a third of the word's length away (at least one edit), or
// `word` is the start of exactly one candidate. "" otherwise.
std::string Nearest(std::string_view word,
                    std::span<const std::string_view> candidates);

// " (did you mean 'X'?)" for Nearest()'s answer, or "".
std::string DidYouMean(std::string_view word,
                       std::span<const std::string_view> candidates);

// Whether `args` ask for help: --help or -h before any "--".
bool WantsHelp(std::span<const std::string> args);

struct OptionSpec {
  std::string_view name;   // "--runs"
  std::string_view value;  // what its value is ("N"), or "" for a flag
};

// One command's arguments, split by its options. Every error is printed as
// it is found; ok() says whether there was one.
class CommandLine {
 public:
  // `command` names the command in messages ("calibrate"); operands
  // (arguments that are not options) are an error unless `operands` says
  // what they are ("PREFIX | FILE...").
  CommandLine(std::string_view command, std::span<const OptionSpec> options,
              std::span<const std::string> args,
              std::string_view operands = "");

  bool ok() const { return ok_; }
  // --help or -h was given (the other arguments are not checked then).
  bool help() const { return help_; }

  bool Flag(std::string_view name) const;
  // The option's value (the last one given), or nullopt.
  std::optional<std::string> Value(std::string_view name) const;
  const std::vector<std::string> &operands() const { return operands_; }

  // The option's value as a whole number in [min, max] into `out`; true
  // when the option is absent (`out` untouched) or good, false (printed)
  // otherwise.
  bool Integer(std::string_view name, int64_t min, int64_t max,
               int *out);
  // The same for a finite real number.
  bool Real(std::string_view name, double min, double max, double *out);

  // Reports a usage error about this command's arguments: prints
  // "aesmux COMMAND: `message`" and the --help hint, and clears ok().
  void Error(const std::string &message);

 private:
  const OptionSpec *Find(std::string_view name) const;

  std::string command_;
  std::span<const OptionSpec> specs_;
  std::vector<std::pair<std::string, std::string>> given_;  // name, value
  std::vector<std::string> operands_;
  bool ok_ = true;
  bool help_ = false;
};

// Strict number parsing, for options and lists: the whole text is the
// number (no sign for an integer, no spaces, no suffix), finite, and within
// [min, max]. nullopt, with what is wrong in `error` ("'3x' is not a whole
// number", "0 is out of range (1 to 1000)"), otherwise.
std::optional<int64_t> ParseInteger(std::string_view text, int64_t min,
                                    int64_t max, std::string *error);
std::optional<double> ParseReal(std::string_view text, double min, double max,
                                std::string *error);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_ARGS_H_
