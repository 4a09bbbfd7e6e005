#pragma once
// What the command line says in racelab's own words: suggestions for mistyped commands and
// options, the one-line messages for option values out of range, and which kind of file a user
// gave where another was expected ("this is a suite summary, not a schedule").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace racelab::report {

// Levenshtein distance (insertions, deletions, substitutions).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a typo (distance at most a third
// of the word's length, at least 1, at most 3; ties: the first); empty when none is.
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

// "explore, replay and shrink": a list in words.
std::string word_list(const std::vector<std::string>& words, const char* last = "and");

// Checks an option's text before it is converted, so that "-1" never wraps to a huge unsigned
// number: empty when `text` is an integer in [lo, hi], else "expected a positive integer, got 0",
// "expected an integer in 1..64, got 70", "expected a non-negative integer, got -1".
std::string check_integer(const std::string& text, std::int64_t lo, std::int64_t hi);
// The same for a number (seconds): "expected a number >= 0, got -2".
std::string check_number(const std::string& text, double lo);

// The kinds of file racelab reads and writes, told apart by their content.
enum class FileKind {
  kUnknown,
  kMissing,
  kDirectory,
  kSchedule,        // {"format": "racelab-schedule", ...}
  kScenario,        // TOML
  kSuiteSummary,    // summary.json of racelab suite --out ("format": "racelab-summary")
  kExploreReport,   // report.json of racelab explore ("format": "racelab-report")
  kLiveReport,      // report.json of racelab live torch | python ("racelab-live-report")
  kAllocReport,     // alloc-report.json of racelab alloc report --out
  kStats,           // the per-iteration stats JSON beside a trace
  kSnapshot,        // memory_viz snapshot: pickle or its JSON
  kInterposeTable,  // {"format": "racelab-interpose"}
  kJunit,           // JUnit XML
  kHtml,            // a report.html
};

// What the file at `path` is, from its first bytes (and its JSON keys when it is small).
FileKind identify_file(const std::string& path);
// "a suite summary (the summary.json racelab suite --out writes)".
std::string file_kind_text(FileKind k);
// What a command expects, with the format: "a schedule file (JSON with \"format\":
// \"racelab-schedule\", as explore and suite write under DIR/schedules/)".
std::string expected_text(FileKind k);

// Throws InputError "<path>: this is <what it is>, not <what was expected>; <usage> takes <the
// expected format>" when the file is recognisably another kind. Unknown content passes: the
// reader then names the first problem.
void expect_file(const std::string& path, FileKind expected, const std::string& usage);

}  // namespace racelab::report
