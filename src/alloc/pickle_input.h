#pragma once
// The bytes of a pickle, from memory or from a file read by chunks: the reader never needs the
// whole file in memory (a memory_viz snapshot can pass 1 GB). The length is known up front (a
// file's size from the file system), so that the reader can check every length in the stream
// against the bytes that remain before it allocates anything, as pickle.h promises.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace racelab::alloc {

class PickleInput {
 public:
  // Reads `data`, which must outlive the input.
  explicit PickleInput(std::string_view data);
  // Reads the file by chunks of kChunkBytes. Throws InputError "<origin>: cannot read: <why>".
  PickleInput(const std::filesystem::path& path, const std::string& origin);
  ~PickleInput();
  PickleInput(const PickleInput&) = delete;
  PickleInput& operator=(const PickleInput&) = delete;

  // 1 MiB: large enough that reading costs one system call per million bytes, small enough to be
  // noise beside the trace the reader builds.
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

  std::uint64_t size() const { return size_; }
  std::uint64_t pos() const { return base_ + next_; }
  std::uint64_t remaining() const { return size_ - pos(); }

  // The next byte; the caller has checked remaining() > 0.
  std::uint8_t byte() {
    if (next_ == buf_.size()) refill();
    return static_cast<std::uint8_t>(buf_[next_++]);
  }
  // The next `n` bytes (n <= remaining()), appended to `out`; skip() drops them.
  void take(std::uint64_t n, std::string& out);
  void skip(std::uint64_t n);

 private:
  void refill();

  std::string_view buf_;  // the current chunk, or all of the data in memory
  std::size_t next_ = 0;  // in buf_
  std::uint64_t base_ = 0;
  std::uint64_t size_ = 0;
  std::FILE* file_ = nullptr;
  std::unique_ptr<char[]> chunk_;
  std::string origin_;
};

}  // namespace racelab::alloc
