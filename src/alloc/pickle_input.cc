// PickleInput: chunked reads of a file, or a view of memory.
#include "alloc/pickle_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "util/check.h"
#include "util/errors.h"

namespace racelab::alloc {

PickleInput::PickleInput(std::string_view data) : buf_(data), size_(data.size()) {}

PickleInput::PickleInput(const std::filesystem::path& path, const std::string& origin)
    : origin_(origin) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(origin + ": is a directory, expected a file");
  }
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw InputError(origin + ": cannot read: " + std::strerror(errno));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    std::fclose(file_);  // a constructor that throws runs no destructor
    throw InputError(origin + ": cannot read: " + ec.message());
  }
  size_ = size;
  chunk_ = std::make_unique<char[]>(kChunkBytes);
}

PickleInput::~PickleInput() {
  if (file_) std::fclose(file_);
}

void PickleInput::refill() {
  RACELAB_CHECK(file_ && remaining() > 0, "a pickle read past its end");
  base_ += buf_.size();
  buf_ = {};
  next_ = 0;
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, remaining()));
  const std::size_t got = std::fread(chunk_.get(), 1, want, file_);
  if (got != want) {
    throw InputError(fmt::format(
        "{}: byte {}: cannot read: {}", origin_, base_,
        std::ferror(file_) ? std::strerror(errno) : "the file became shorter while read"));
  }
  buf_ = std::string_view(chunk_.get(), got);
  next_ = 0;
}

void PickleInput::take(std::uint64_t n, std::string& out) {
  RACELAB_CHECK(n <= remaining(), "a pickle read past its end");
  out.reserve(out.size() + n);
  while (n > 0) {
    if (next_ == buf_.size()) refill();
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, buf_.size() - next_));
    out.append(buf_.substr(next_, k));
    next_ += k;
    n -= k;
  }
}

void PickleInput::skip(std::uint64_t n) {
  RACELAB_CHECK(n <= remaining(), "a pickle read past its end");
  while (n > 0) {
    if (next_ == buf_.size()) refill();
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, buf_.size() - next_));
    next_ += k;
    n -= k;
  }
}

}  // namespace racelab::alloc
