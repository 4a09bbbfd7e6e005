#pragma once
// Which torch and which Python a live run meets, against what its interposition table was verified
// on (issue 40). A table is written against one torch release: its entries name that release's
// modules and functions, and its points and exception kinds stand for facts of that release
// (docs/facts.md). Applied silently to another torch, it gives answers that look as trustworthy as
// on the release it was verified on and may not be. So a table declares its range:
//
//   "verified": {"version_of": "torch", "torch": ["2.11"], "python": ["3.11", "3.12"],
//                "known_to_differ": [{"torch": "2.12", "text": "F10: ..."}]}
//
// and before the first execution racelab reads `version_of`'s `__version__` and the interpreter's
// version: outside the range, the run says so in one line (terminal, report.json, the check and
// suite pages) or, with --refuse-other-torch, refuses to run (exit 2). A release "2.11" covers
// 2.11 and every 2.11.x (pre-releases and local builds such as 2.11.0+cu130 included).
//
// Also here: the virtual environment a run's interpreter uses (--python ENV, or $VIRTUAL_ENV), read
// from its pyvenv.cfg. Plain C++ (no interpreter): tested in tests/live/test_versions.cc.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace racelab::live::python {

// What the interpreter imported: versions as their modules spell them ("3.11.2",
// "2.11.0+cu130"). `torch` is empty where the table declares no `version_of`; `torch_error` says
// why it could not be read where it declares one (the module has no __version__).
struct Versions {
  std::string python;
  std::string torch;
  std::string torch_error;
};

// Whether `version` ("2.11.0+cu130") is one of `releases` ("2.11": 2.11 and 2.11.*).
bool version_in(const std::string& version, const std::vector<std::string>& releases);

struct VersionCheck {
  Versions found;
  std::string table;                // the table's name
  nlohmann::ordered_json verified;  // the table's "verified", null where it declares none
  // One line where the imported torch or Python is outside the table's range, else "":
  // "torch 2.12.1: the interposition table torch-2.11 was verified on torch 2.11.x; ..."
  std::string outside;
  nlohmann::ordered_json json() const;  // report.json's "versions"
};

// The check of `table_json` (an interposition table, already checked as a table; `table_name` as
// the user named it) against `found`. InputError for a malformed "verified".
VersionCheck check_versions(const std::string& table_json, const std::string& table_name,
                            const Versions& found);

// A virtual environment for the embedded interpreter: `env` is its directory or a python inside
// its bin/. `program` is the path the interpreter is told it runs as (ENV/bin/python, from which
// CPython finds pyvenv.cfg and the environment's site-packages, as running that python does);
// `version` is pyvenv.cfg's ("3.11.2"). InputError, naming `flag`, where `env` is no environment.
struct VirtualEnv {
  std::string dir;
  std::string program;
  std::string version;
};
VirtualEnv read_virtual_env(const std::string& env, const std::string& flag);

}  // namespace racelab::live::python
