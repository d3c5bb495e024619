// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// libFuzzer target: the statistics file parser (provider/core/stats_file.h)
// on arbitrary text, as `aesmux stats` and the folding writer read any file
// another user put in the directory. Besides not crashing, reading past
// its input or looping: a file it accepts says what it held (written again
// as a process file, it parses to the same counts, identity and notes),
// sums never wrap, a refusal names a line of the input, and the table made
// from an accepted file holds no byte a terminal would act on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "provider/core/stats_file.h"
#include "provider/core/stats_table.h"

namespace {

using aesmux::core::StatsFileView;

void Check(bool condition) {
  if (!condition) std::abort();
}

bool SameCounts(const aesmux::core::StatsSnapshot &a,
                const aesmux::core::StatsSnapshot &b) {
  for (size_t alg = 0; alg < aesmux::core::kNumAlgs; ++alg) {
    for (size_t p = 0; p < aesmux::core::kNumPaths; ++p) {
      if (a.counters[alg][p].requests != b.counters[alg][p].requests ||
          a.counters[alg][p].bytes != b.counters[alg][p].bytes) {
        return false;
      }
    }
    for (size_t h = 0; h < aesmux::core::kNumHandoffs; ++h) {
      if (a.handoffs[alg][h].requests != b.handoffs[alg][h].requests ||
          a.handoffs[alg][h].bytes != b.handoffs[alg][h].bytes) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace aesmux::core;
  static StatsFileView *const view = new StatsFileView;
  static StatsFileView *const again = new StatsFileView;
  static std::vector<char> *const buffer =
      new std::vector<char>(kMaxStatsFileBytes);
  const std::string_view text(reinterpret_cast<const char *>(data), size);

  StatsParseError error;
  if (!ParseStatsFile(text, view, &error)) {
    size_t lines = 0;
    for (char c : text) lines += c == '\n';
    Check(error.line <= lines + 1);
    Check(error.reason != nullptr && error.reason[0] != '\0');
  } else {
    Check(view->summary || view->processes == 1);
    // Written again, it says the same.
    std::string notes;
    for (size_t i = 0; i < view->num_notes; ++i) {
      notes += std::string(view->notes[i].text) + "\n";
    }
    StatsText out{buffer->data(), buffer->size()};
    FormatProcessFile(view->process, view->counts, notes, out);
    Check(!out.overflow);
    StatsParseError again_error;
    if (!view->summary) {
      Check(ParseStatsFile(std::string_view(buffer->data(), out.used), again,
                           &again_error));
      Check(SameCounts(view->counts, again->counts));
      Check(again->process.pid == view->process.pid &&
            again->process.start == view->process.start &&
            again->process.pidns == view->process.pidns &&
            std::string_view(again->process.boot.data()) ==
                std::string_view(view->process.boot.data()));
      Check(again->num_notes == view->num_notes);
      for (size_t i = 0; i < view->num_notes; ++i) {
        Check(again->notes[i].text == view->notes[i].text);
      }
    }
    // Summed with itself: either refused, unchanged, or exactly doubled.
    StatsSnapshot sum = view->counts;
    char which[64];
    if (AddStatsCounts(sum, view->counts, which)) {
      Check(sum.counters[0][0].requests == 2 * view->counts.counters[0][0].requests);
    } else {
      Check(SameCounts(sum, view->counts));
    }
    std::vector<StatsTableNote> table_notes;
    for (size_t i = 0; i < view->num_notes; ++i) {
      table_notes.push_back(
          {std::string(view->notes[i].text), view->notes[i].processes});
    }
    for (const char c : FormatStatsTable(view->counts, table_notes, true)) {
      Check(c == '\n' || (c >= 0x20 && c < 0x7f));
    }
  }
  // The first line as a name in a statistics directory.
  uint64_t number = 0;
  std::string_view suffix;
  const std::string_view first = text.substr(0, text.find('\n'));
  if (ClassifyStatsName("s", first, &number, &suffix) == StatsName::kProcess) {
    Check(first.size() == 2 + suffix.size());
  }
  for (const char c : Printable(first)) Check(c >= 0x20 && c < 0x7f);
  return 0;
}
