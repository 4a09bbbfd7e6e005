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

}  // namespace racelab
