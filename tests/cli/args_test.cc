// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The aesmux command's argument parsing (provider/cli/args.h): options by
// name, strict numbers in range, and usage errors that name the mistake and
// what was probably meant.
#include "provider/cli/args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aesmux::cli {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kCommands[] = {"info", "stats", "bench",
                                          "calibrate", "help", "version"};
constexpr OptionSpec kOptions[] = {
    {"--quick", ""}, {"--output", "FILE"}, {"--runs", "N"},
    {"--seconds", "S"}, {"--margin", "PERCENT"}};

TEST(Nearest, FindsTheCommandOrOptionMeant) {
  EXPECT_EQ(Nearest("inf", kCommands), "info");
  EXPECT_EQ(Nearest("stat", kCommands), "stats");
  EXPECT_EQ(Nearest("calibarte", kCommands), "calibrate");  // a swap
  EXPECT_EQ(Nearest("calib", kCommands), "calibrate");      // a prefix
  EXPECT_EQ(Nearest("verison", kCommands), "version");
  const std::string_view options[] = {"--quick", "--output", "--runs"};
  EXPECT_EQ(Nearest("--qiuck", options), "--quick");
  EXPECT_EQ(Nearest("-quick", options), "--quick");
  EXPECT_EQ(Nearest("--run", options), "--runs");
}

TEST(Nearest, SuggestsNothingFarOff) {
  EXPECT_EQ(Nearest("frobnicate", kCommands), "");
  EXPECT_EQ(Nearest("x", kCommands), "");
  EXPECT_EQ(Nearest("", kCommands), "");
  EXPECT_EQ(Nearest("--", kCommands), "");
  EXPECT_EQ(DidYouMean("inf", kCommands), " (did you mean 'info'?)");
  EXPECT_EQ(DidYouMean("frobnicate", kCommands), "");
}

TEST(ParseInteger, TakesOnlyAWholeNumberInRange) {
  std::string error;
  EXPECT_EQ(ParseInteger("3", 1, 1000, &error), 3);
  EXPECT_EQ(ParseInteger("1000", 1, 1000, &error), 1000);
  for (const char *bad : {"3x", "x", "", " 3", "3 ", "+3", "-3", "3.0", "0x3",
                          "1e3", "inf", "nan"}) {
    EXPECT_EQ(ParseInteger(bad, 1, 1000, &error), std::nullopt) << bad;
    EXPECT_THAT(error, HasSubstr("not a whole number")) << bad;
  }
  EXPECT_EQ(ParseInteger("0", 1, 1000, &error), std::nullopt);
  EXPECT_EQ(error, "0 is out of range (1 to 1000)");
  EXPECT_EQ(ParseInteger("99999999999999999999999", 1, 1000, &error),
            std::nullopt);
  EXPECT_THAT(error, HasSubstr("out of range"));
}

TEST(ParseReal, TakesOnlyAFiniteNumberInRange) {
  std::string error;
  EXPECT_EQ(ParseReal("0.5", 0, 100, &error), 0.5);
  EXPECT_EQ(ParseReal("5", 0, 100, &error), 5);
  EXPECT_EQ(ParseReal("1e-3", 0, 100, &error), 1e-3);
  for (const char *bad : {"abc", "", "0.5s", " 1", "1 ", "+1", "0x1p3"}) {
    EXPECT_EQ(ParseReal(bad, 0, 100, &error), std::nullopt) << bad;
    EXPECT_THAT(error, HasSubstr("not a number")) << bad;
  }
  for (const char *bad : {"inf", "-inf", "infinity", "nan", "NaN", "1e999"}) {
    EXPECT_EQ(ParseReal(bad, 0, 100, &error), std::nullopt) << bad;
    EXPECT_THAT(error, HasSubstr("not a finite number")) << bad;
  }
  EXPECT_EQ(ParseReal("-1", 0, 100, &error), std::nullopt);
  EXPECT_EQ(error, "-1 is out of range (0 to 100)");
  EXPECT_EQ(ParseReal("1e-9", 1e-4, 3600, &error), std::nullopt);
  EXPECT_EQ(error, "1e-9 is out of range (0.0001 to 3600)");
}

// `args` parsed as calibrate's, and what that printed on stderr.
struct Parsed {
  CommandLine line;
  std::string printed;
};
Parsed Parse(const std::vector<std::string> &args,
             std::string_view operands = "") {
  ::testing::internal::CaptureStderr();
  CommandLine line("calibrate", kOptions, args, operands);
  return {std::move(line), ::testing::internal::GetCapturedStderr()};
}

TEST(CommandLine, ReadsFlagsAndValuesInEitherForm) {
  Parsed p = Parse({"--quick", "--output", "a.conf", "--runs=7", "--runs", "9"});
  EXPECT_EQ(p.printed, "");
  EXPECT_TRUE(p.line.ok());
  EXPECT_TRUE(p.line.Flag("--quick"));
  EXPECT_FALSE(p.line.Flag("--margin"));
  EXPECT_EQ(p.line.Value("--output"), "a.conf");
  int runs = 0;
  EXPECT_TRUE(p.line.Integer("--runs", 1, 100, &runs));
  EXPECT_EQ(runs, 9);  // the last one given
  double seconds = 0.25;
  EXPECT_TRUE(p.line.Real("--seconds", 0.001, 10, &seconds));
  EXPECT_EQ(seconds, 0.25);  // absent: untouched
  // A value may start with one dash (a negative number, refused by range).
  Parsed negative = Parse({"--margin", "-5"});
  EXPECT_EQ(negative.printed, "");
  double margin = 5;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(negative.line.Real("--margin", 0, 100, &margin));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "aesmux calibrate: --margin: -5 is out of range (0 to 100)\n"
            "Try 'aesmux calibrate --help'.\n");
  EXPECT_FALSE(negative.line.ok());
}

TEST(CommandLine, NamesTheUnknownOptionAndTheNearest) {
  Parsed p = Parse({"--qiuck"});
  EXPECT_EQ(p.printed,
            "aesmux calibrate: unknown option '--qiuck' (did you mean "
            "'--quick'?)\nTry 'aesmux calibrate --help'.\n");
  EXPECT_FALSE(p.line.ok());
  p = Parse({"--frobnicate=3"});
  EXPECT_EQ(p.printed,
            "aesmux calibrate: unknown option '--frobnicate'\n"
            "Try 'aesmux calibrate --help'.\n");
  EXPECT_FALSE(p.line.ok());
}

TEST(CommandLine, RefusesMissingValuesFlagValuesAndStrayArguments) {
  for (const auto &[args, message] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--output"}, "--output needs a value (FILE)"},
           {{"--output", "--quick"}, "--output needs a value (FILE)"},
           {{"--quick=yes"}, "--quick takes no value"},
           {{"extra"}, "unexpected argument 'extra'"},
           {{"-"}, "unexpected argument '-'"}}) {
    Parsed p = Parse(args);
    EXPECT_THAT(p.printed, HasSubstr(message)) << args[0];
    EXPECT_FALSE(p.line.ok()) << args[0];
  }
}

TEST(CommandLine, TakesOperandsWhereTheCommandHasThem) {
  Parsed p = Parse({"a", "--quick", "--", "--b", "-"}, "FILE...");
  EXPECT_EQ(p.printed, "");
  EXPECT_TRUE(p.line.ok());
  EXPECT_EQ(p.line.operands(), (std::vector<std::string>{"a", "--b", "-"}));
}

TEST(CommandLine, HelpWinsBeforeTheOptionsEnd) {
  Parsed p = Parse({"--bogus", "-h"});
  EXPECT_EQ(p.printed, "");
  EXPECT_TRUE(p.line.help());
  EXPECT_TRUE(WantsHelp(std::vector<std::string>{"--runs", "3", "--help"}));
  EXPECT_FALSE(WantsHelp(std::vector<std::string>{"--", "--help"}));
}

TEST(CommandLine, ReportsANumberThatDoesNotParse) {
  Parsed p = Parse({"--runs", "3x", "--seconds", "inf", "--margin", "abc"});
  EXPECT_EQ(p.printed, "");
  int runs = 5;
  double seconds = 1, margin = 5;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(p.line.Integer("--runs", 1, 1000, &runs));
  EXPECT_FALSE(p.line.Real("--seconds", 1e-4, 3600, &seconds));
  EXPECT_FALSE(p.line.Real("--margin", 0, 100, &margin));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "aesmux calibrate: --runs: '3x' is not a whole number\n"
            "Try 'aesmux calibrate --help'.\n"
            "aesmux calibrate: --seconds: 'inf' is not a finite number\n"
            "aesmux calibrate: --margin: 'abc' is not a number\n");
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(seconds, 1);
  EXPECT_EQ(margin, 5);
}

}  // namespace
}  // namespace aesmux::cli
