// An interposition table's verified range against the torch and Python a run imports
// (live/python/versions.h), and the virtual environments racelab live python --python reads.
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.h"
#include "live/python/versions.h"
#include "util/errors.h"

namespace lp = racelab::live::python;
namespace fs = std::filesystem;

namespace {

const std::string kTable = R"J({
  "format": "racelab-interpose", "version": 1, "name": "torch-2.11",
  "verified": {"version_of": "torch", "torch": ["2.11"], "python": ["3.11", "3.12"],
               "known_to_differ": [{"torch": "2.12", "text": "F10's flag is per thread"}]}
})J";

}  // namespace

TEST_CASE("A release covers its patch releases, pre-releases and local builds, nothing else",
          "[versions]") {
  CHECK(lp::version_in("2.11.0", {"2.11"}));
  CHECK(lp::version_in("2.11.3+cu130", {"2.11"}));
  CHECK(lp::version_in("2.11.0a0+git1234", {"2.11"}));
  CHECK(lp::version_in("2.11", {"2.11"}));
  CHECK_FALSE(lp::version_in("2.12.1", {"2.11"}));
  CHECK_FALSE(lp::version_in("2.1.0", {"2.11"}));
  CHECK_FALSE(lp::version_in("2.110.0", {"2.11"}));
  CHECK(lp::version_in("3.12.7", {"3.11", "3.12"}));
}

TEST_CASE("Inside the verified range a run says nothing; outside, one line naming both",
          "[versions]") {
  const auto inside = lp::check_versions(kTable, "torch-2.11", {"3.11.2", "2.11.0+cu130", ""});
  CHECK(inside.outside.empty());
  CHECK(inside.json()["inside"] == true);
  CHECK(inside.json()["verified_on"]["torch"][0] == "2.11");

  const auto torch = lp::check_versions(kTable, "torch-2.11", {"3.11.2", "2.13.0", ""});
  CHECK(torch.outside.rfind("torch 2.13.0: the interposition table torch-2.11 was verified on "
                            "torch 2.11.x with Python 3.11.x, 3.12.x",
                            0) != 0);  // only the torch is outside: its range alone
  CHECK(torch.outside.rfind("torch 2.13.0: the interposition table torch-2.11 was verified on "
                            "torch 2.11.x;",
                            0) == 0);
  CHECK(torch.outside.find('\n') == std::string::npos);
  CHECK(torch.json()["outside"] == torch.outside);
  CHECK(torch.json()["inside"] == false);

  const auto known = lp::check_versions(kTable, "torch-2.11", {"3.11.2", "2.12.1", ""});
  CHECK(known.outside.find("known to differ on 2.12: F10's flag is per thread") !=
        std::string::npos);

  const auto both = lp::check_versions(kTable, "torch-2.11", {"3.13.0", "2.12.1", ""});
  CHECK(both.outside.rfind("torch 2.12.1 and Python 3.13.0: the interposition table torch-2.11 "
                           "was verified on torch 2.11.x with Python 3.11.x, 3.12.x;",
                           0) == 0);

  const auto unknown =
      lp::check_versions(kTable, "torch-2.11", {"3.11.2", "", "torch has no __version__"});
  CHECK(unknown.outside.rfind("torch version unknown (torch has no __version__)", 0) == 0);
}

TEST_CASE("A table without a verified range is never outside it; a malformed one is bad input",
          "[versions]") {
  const auto none = lp::check_versions(R"({"format": "racelab-interpose", "version": 1})",
                                       "mine.json", {"3.11.2", "", ""});
  CHECK(none.outside.empty());
  CHECK(none.table == "mine.json");
  CHECK_FALSE(none.json().contains("verified_on"));
  CHECK_THROWS_AS(lp::check_versions(R"({"verified": {"torch": "2.11"}})", "bad.json",
                                     {"3.11.2", "2.11.0", ""}),
                  racelab::InputError);
  CHECK_THROWS_AS(
      lp::check_versions(R"({"verified": {"torch": []}})", "bad.json", {"3.11.2", "2.11.0", ""}),
      racelab::InputError);
}

TEST_CASE("A virtual environment is read from its pyvenv.cfg, by directory or by its python",
          "[versions]") {
  const fs::path dir = fs::temp_directory_path() / "racelab-test-venv";
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "pyvenv.cfg") << "home = /usr/bin\nversion = 3.11.2\n";
  std::ofstream(dir / "bin" / "python") << "";
  const auto v = lp::read_virtual_env(dir.string(), "--python");
  CHECK(v.version == "3.11.2");
  CHECK(v.program == (dir / "bin" / "python").string());
  CHECK(lp::read_virtual_env((dir / "bin" / "python").string(), "--python").dir == v.dir);
  std::ofstream(dir / "pyvenv.cfg") << "home = /usr/bin\nversion_info = 3.12.1.final.0\n";
  CHECK(lp::read_virtual_env(dir.string(), "--python").version == "3.12.1.final.0");
  fs::remove(dir / "pyvenv.cfg");
  CHECK_THROWS_AS(lp::read_virtual_env(dir.string(), "--python"), racelab::InputError);
  fs::remove_all(dir);
}
