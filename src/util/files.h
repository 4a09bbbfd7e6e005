#pragma once
// File helpers. Every output racelab writes goes through write_file_atomic: the content lands in a
// temporary file beside the target and is renamed over it, so a reader (or an interrupted run)
// never sees a half-written report or schedule.
#include <filesystem>
#include <string>
#include <string_view>

namespace racelab {

// Throws InputError naming the path when the file cannot be read.
std::string read_file(const std::filesystem::path& path);

// Throws InputError naming the path when the file cannot be written.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Creates `dir` (and parents); throws InputError when it exists and is not a directory.
void ensure_directory(const std::filesystem::path& dir);

// Throws InputError, one line, unless `path` is a Python script to run: "X: is a directory, not a
// script (a Python file to run)" or "X: no such script".
void expect_script(const std::string& path);

// A path a schedule file records (its scenario, its script), as a replay finds it: an absolute
// path as recorded; a relative one (schedules before racelab recorded absolute paths: relative to
// where racelab ran) from the current directory where it exists there, else from the schedule
// file's directory or the nearest of its parents that has it, so that `racelab replay` works from
// any directory. Returned as recorded where none has it (the caller says it is missing). What
// the file holds is checked by the caller (the scenario's or the job's content hash).
std::string recorded_path(const std::string& recorded, const std::string& schedule_path);

// `path` made absolute and normal: what a schedule records.
std::string absolute_path(const std::string& path);

}  // namespace racelab
