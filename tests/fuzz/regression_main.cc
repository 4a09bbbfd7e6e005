// Runs every file of the seed corpora and of tests/fuzz/regressions/<target>/ through its fuzz
// target, in the ordinary build: inputs that once crashed stay fixed.
//   fuzz_regressions DIR_OF_tests/fuzz
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_regressions TESTS_FUZZ_DIR\n");
    return 2;
  }
  struct Target {
    const char* name;
    void (*fn)(const std::uint8_t*, std::size_t);
  };
  const Target targets[] = {{"pickle", racelab::fuzz::pickle},
                            {"scenario", racelab::fuzz::scenario},
                            {"schedule", racelab::fuzz::schedule}};
  std::size_t inputs = 0;
  for (const Target& t : targets) {
    for (const char* sub : {"corpus", "regressions"}) {
      const fs::path dir = fs::path(argv[1]) / sub / t.name;
      if (!fs::is_directory(dir)) continue;
      for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        t.fn(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        ++inputs;
      }
    }
  }
  std::printf("%zu inputs through 3 fuzz targets: no crash\n", inputs);
  return inputs > 0 ? 0 : 1;
}
