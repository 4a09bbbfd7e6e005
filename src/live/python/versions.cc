// The table's verified range against the imported versions, and virtual environments
// (versions.h).
#include "live/python/versions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "util/errors.h"

namespace racelab::live::python {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

bool version_in(const std::string& version, const std::vector<std::string>& releases) {
  const std::string release = version.substr(0, version.find('+'));  // 2.11.0+cu130 -> 2.11.0
  for (const auto& r : releases) {
    if (release == r || release.rfind(r + ".", 0) == 0) return true;
    // A pre-release of the range's first patch release: 2.11.0a0 is 2.11's.
    if (release.size() > r.size() && release.rfind(r, 0) == 0 &&
        std::isalpha(static_cast<unsigned char>(release[r.size()])))
      return true;
  }
  return false;
}

namespace {

std::vector<std::string> releases(const nlohmann::ordered_json& verified, const char* key,
                                  const std::string& table) {
  if (!verified.contains(key)) return {};
  const auto& list = verified[key];
  bool ok = list.is_array() && !list.empty();
  for (const auto& r : list) ok = ok && r.is_string() && !r.get<std::string>().empty();
  if (!ok)
    throw InputError(fmt::format(
        "{}: verified: {} must be a non-empty list of releases (e.g. [\"2.11\"])", table, key));
  return list.get<std::vector<std::string>>();
}

std::string ranges(const std::vector<std::string>& rs) {
  std::vector<std::string> shown;
  for (const auto& r : rs) shown.push_back(r + ".x");
  return fmt::format("{}", fmt::join(shown, ", "));
}

}  // namespace

VersionCheck check_versions(const std::string& table_json, const std::string& table_name,
                            const Versions& found) {
  VersionCheck c;
  c.found = found;
  const auto table = nlohmann::ordered_json::parse(table_json);
  c.table = table.value("name", table_name);
  if (!table.contains("verified")) return c;
  c.verified = table["verified"];
  if (!c.verified.is_object())
    throw InputError(fmt::format("{}: verified must be an object", table_name));
  const auto torch = releases(c.verified, "torch", table_name);
  const auto python = releases(c.verified, "python", table_name);
  const bool torch_out =
      !torch.empty() && (!found.torch_error.empty() || !version_in(found.torch, torch));
  const bool python_out = !python.empty() && !version_in(found.python, python);
  if (!torch_out && !python_out) return c;

  std::vector<std::string> what, range;
  if (torch_out) {
    what.push_back(found.torch_error.empty()
                       ? fmt::format("torch {}", found.torch)
                       : fmt::format("torch version unknown ({})", found.torch_error));
    range.push_back("torch " + ranges(torch));
  }
  if (python_out) {
    what.push_back(fmt::format("Python {}", found.python));
    range.push_back("Python " + ranges(python));
  }
  c.outside = fmt::format(
      "{}: the interposition table {} was verified on {}; its entries and the facts behind its "
      "findings may not hold here (docs/facts.md)",
      fmt::join(what, " and "), c.table, fmt::join(range, " with "));
  // What is known to differ on the torch found (docs/facts.md's per-version table).
  if (torch_out && c.verified.contains("known_to_differ")) {
    const auto& known = c.verified["known_to_differ"];
    if (!known.is_array())
      throw InputError(fmt::format("{}: verified: known_to_differ must be a list", table_name));
    for (const auto& k : known) {
      if (!k.is_object() || !k.contains("torch") || !k["torch"].is_string() ||
          !k.contains("text") || !k["text"].is_string())
        throw InputError(
            fmt::format("{}: verified: every known_to_differ entry needs torch and text (strings)",
                        table_name));
      if (version_in(found.torch, {k["torch"].get<std::string>()}))
        c.outside += fmt::format("; known to differ on {}: {}", k["torch"].get<std::string>(),
                                 k["text"].get<std::string>());
    }
  }
  return c;
}

nlohmann::ordered_json VersionCheck::json() const {
  nlohmann::ordered_json j;
  j["python"] = found.python;
  if (!found.torch.empty()) j["torch"] = found.torch;
  if (!found.torch_error.empty()) j["torch_error"] = found.torch_error;
  j["table"] = table;
  if (!verified.is_null()) {
    nlohmann::ordered_json v;
    for (const char* key : {"torch", "python"})
      if (verified.contains(key)) v[key] = verified[key];
    j["verified_on"] = v;
  }
  j["inside"] = outside.empty();
  if (!outside.empty()) j["outside"] = outside;
  return j;
}

VirtualEnv read_virtual_env(const std::string& env, const std::string& flag) {
  std::error_code ec;
  fs::path dir = fs::absolute(env, ec);
  // A python inside the environment (ENV/bin/python): its environment is two levels up.
  if (!fs::is_directory(dir, ec) && dir.parent_path().filename() == "bin")
    dir = dir.parent_path().parent_path();
  const fs::path cfg = dir / "pyvenv.cfg";
  if (!fs::is_regular_file(cfg, ec))
    throw InputError(fmt::format(
        "{} {}: not a virtual environment (no pyvenv.cfg in {}); make one with python3 -m venv, "
        "or tools/install-torch.sh",
        flag, env, dir.string()));
  VirtualEnv v;
  v.dir = dir.lexically_normal().string();
  v.program = (dir / "bin" / "python").lexically_normal().string();
  std::ifstream in(cfg);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(line.substr(0, eq));
    // "version" (venv before 3.11.4 / Debian's 3.11.2), "version_info" (later venvs)
    if (key == "version" || key == "version_info") v.version = trim(line.substr(eq + 1));
  }
  if (v.version.empty())
    throw InputError(fmt::format("{} {}: {} names no Python version", flag, env, cfg.string()));
  return v;
}

}  // namespace racelab::live::python
