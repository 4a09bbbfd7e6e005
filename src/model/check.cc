// racelab check's runs and verdicts (check.h).
#include "model/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "model/live_case.h"
#include "util/document.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/spawn.h"

namespace racelab::model {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json read_json_or_null(const fs::path& p) {
  try {
    return nlohmann::json::parse(read_file(p.string()));
  } catch (const std::exception&) {
    return nullptr;
  }
}

// "--warmup sequential" -> "warmup-sequential", for a directory name.
std::string slug(const std::string& text, std::size_t index) {
  std::string out;
  for (char c : text) {
    const bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_';
    if (word)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 60) out.resize(60);
  return fmt::format("{}-{}", index, out.empty() ? "as-given" : out);
}

std::vector<std::string> live_flags(const CheckOptions& o) {
  std::vector<std::string> v;
  for (const auto& d : o.dicts) v.push_back("--dict=" + d);
  for (const auto& l : o.locks) v.push_back("--lock=" + l);
  for (const auto& p : o.points) v.push_back("--point=" + p);
  for (const auto& b : o.blocking) v.push_back("--blocking=" + b);
  return v;
}

RaceVerdict search_races(const CheckOptions& o, const std::string& racelab,
                         const std::vector<std::string>& args, const std::string& dir) {
  RaceVerdict r;
  const std::string out = (fs::path(dir) / "races").string();
  ensure_directory(out);
  r.argv = {racelab,
            "live",
            "python",
            "--interpose",
            o.interpose,
            "--strategy",
            o.strategy,
            "--seed",
            std::to_string(o.seed),
            "--executions",
            std::to_string(o.executions),
            "--hang-timeout",
            fmt::format("{}", o.hang_timeout),
            "--time-limit",
            fmt::format("{}", o.time_limit),
            "--expect",
            "clean",
            "--out",
            out};
  for (auto& f : live_flags(o)) r.argv.push_back(std::move(f));
  r.argv.push_back(o.script);
  if (!args.empty()) {
    r.argv.push_back("--");
    r.argv.insert(r.argv.end(), args.begin(), args.end());
  }
  r.log = (fs::path(out) / "live.log").string();
  std::error_code ec;
  fs::remove(fs::path(out) / "report.json", ec);
  const auto t0 = std::chrono::steady_clock::now();
  const int code = spawn_and_wait(r.argv, "", r.log);
  r.seconds = seconds_since(t0);
  // Exit 2 is racelab refusing what every variant shares (the script, the table, a --dict,
  // --lock, --point or --blocking entry): the check's own bad input, its one line.
  if (code == 2) {
    std::string line = last_line(r.log);
    const std::string prefix = "racelab: error: ";
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    throw InputError(line);
  }
  const nlohmann::json rep = read_live_report(fs::path(out) / "report.json");
  if (rep.is_null()) {
    r.state = RaceVerdict::State::kError;
    r.reason = fmt::format("racelab live python exited {}: {}", code, last_line(r.log));
    return r;
  }
  r.executions = rep.value("executions", std::uint64_t{0});
  r.budget = o.executions;
  r.stopped_by = rep.value("stopped_by", "");
  if (rep.contains("versions") && rep["versions"].is_object())
    r.outside_verified = rep["versions"].value("outside", "");
  if (rep.contains("kinds_seen") && rep["kinds_seen"].is_object())
    for (const auto& [k, n] : rep["kinds_seen"].items()) r.kinds[k] = n.get<std::uint64_t>();
  const auto& findings = rep.value("findings", nlohmann::json::array());
  if (!findings.empty()) {
    r.kind = findings[0].value("kind", "");
    r.message = findings[0].value("message", "");
    r.execution = findings[0].value("execution", std::uint64_t{0});
    r.schedule = rep.value("schedule", "");
    r.stack = findings[0].value("stack", nlohmann::json::array());
  }
  if (code == 3 || rep.value("crashed", false)) {
    r.state = RaceVerdict::State::kInconclusive;
    if (rep.value("crashed", false)) r.state = RaceVerdict::State::kFound;
  } else {
    r.state = code == 0 ? RaceVerdict::State::kClean : RaceVerdict::State::kFound;
  }
  return r;
}

DeviceMemory device_memory(const nlohmann::json& j) {
  DeviceMemory d;
  d.name = j.value("name", "");
  d.stable = j.value("stable", false);
  // From alloc-report.json version 2: too few iterations after the warm phase to tell.
  d.measured = j.value("stability", std::string()) != "not_measured";
  d.verdict = j.value("verdict", "");
  if (j.contains("stable_from") && j["stable_from"].is_number_integer())
    d.stable_from = j["stable_from"].get<std::int64_t>();
  d.peak_reserved = j.value("peak_reserved", std::int64_t{0});
  for (const auto& g : j.value("growth_at", nlohmann::json::array()))
    d.growth_at.push_back(g.is_string() ? g.get<std::string>() : g.dump());
  const auto& rows = j.value("rows", nlohmann::json::array());
  d.iterations = rows.size();
  for (const auto& row : rows) {
    d.labels.push_back(row.value("label", std::to_string(d.labels.size())));
    d.reserved_mib.push_back(static_cast<double>(row.value("reserved", std::int64_t{0})) /
                             (1024.0 * 1024.0));
    d.allocated_mib.push_back(static_cast<double>(row.value("allocated", std::int64_t{0})) /
                              (1024.0 * 1024.0));
  }
  if (!rows.empty()) {
    d.segments_first = rows.front().value("segments", std::int64_t{0});
    d.segments_last = rows.back().value("segments", std::int64_t{0});
    d.reserved_first = rows.front().value("reserved", std::int64_t{0});
    d.reserved_last = rows.back().value("reserved", std::int64_t{0});
  }
  return d;
}

}  // namespace

bool VariantResult::passed() const {
  return races.state == RaceVerdict::State::kClean &&
         (memory.state == MemoryVerdict::State::kStable ||
          memory.state == MemoryVerdict::State::kNotMeasured) &&
         memory.failure.empty();
}

int CheckResult::exit_code() const {
  return std::all_of(variants.begin(), variants.end(),
                     [](const VariantResult& v) { return v.passed(); })
             ? 0
             : 1;
}

std::vector<std::string> split_arguments(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) throw InputError(fmt::format("--variant \"{}\": unclosed {} quote", text, quote));
  if (in_word) out.push_back(word);
  return out;
}

MemoryVerdict capture_memory(const std::string& racelab, const std::string& script,
                             const std::vector<std::string>& args, const std::string& interpose,
                             const std::string& python_path, double time_limit, std::int64_t settle,
                             const std::string& dir) {
  MemoryVerdict m;
  const fs::path base(dir);
  const fs::path alloc = base / "alloc", plain = base / "plain";
  std::error_code ec;
  fs::remove_all(alloc, ec);
  ensure_directory(plain.string());
  m.argv = {
      racelab,   "live",         "python",       "--uncontrolled", "--interpose",
      interpose, "--alloc",      alloc.string(), "--time-limit",   fmt::format("{}", time_limit),
      "--out",   plain.string(), script};
  if (!args.empty()) {
    m.argv.push_back("--");
    m.argv.insert(m.argv.end(), args.begin(), args.end());
  }
  m.log = (plain / "live.log").string();
  const auto t0 = std::chrono::steady_clock::now();
  const int code = spawn_and_wait(m.argv, python_path, m.log);
  const nlohmann::json rep = read_live_report(plain / "report.json");
  m.seconds = seconds_since(t0);
  if (code == 2 || rep.is_null()) {
    const std::string line = last_line(m.log);
    const bool unmeasurable = line.find("--alloc:") != std::string::npos;
    m.state = unmeasurable ? MemoryVerdict::State::kNotMeasured : MemoryVerdict::State::kError;
    m.reason = unmeasurable ? line.substr(line.find("--alloc:") + 9)
                            : fmt::format("the capture run exited {}: {}", code, line);
    return m;
  }
  m.ended = "complete";
  const auto& findings = rep.value("findings", nlohmann::json::array());
  if (!findings.empty()) {
    m.ended = findings.front().value("kind", "exception");
    m.failure = findings.front().value("message", "");
  }
  std::vector<std::string> pickles;
  if (fs::is_directory(alloc))
    for (const auto& e : fs::directory_iterator(alloc)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("snap_", 0) == 0 && e.path().extension() == ".pickle")
        pickles.push_back(e.path().string());
    }
  std::sort(pickles.begin(), pickles.end());
  if (pickles.empty()) {
    m.state = MemoryVerdict::State::kNotMeasured;
    m.reason = "the run made no CUDA allocation";
    return m;
  }
  m.report_dir = (base / "alloc-report").string();
  m.settle = settle;
  // The warm phase comes from the capture (alloc/warm_phase.h) unless the user gave --settle.
  std::vector<std::string> report = {racelab, "alloc", "report"};
  if (settle >= 0) {
    report.push_back("--settle");
    report.push_back(std::to_string(settle));
  }
  report.insert(report.end(), pickles.begin(), pickles.end());
  report.push_back("--out");
  report.push_back(m.report_dir);
  const std::string log = (base / "alloc-report.log").string();
  const int rc = spawn_and_wait(report, "", log);
  const fs::path report_json = fs::path(m.report_dir) / "alloc-report.json";
  const nlohmann::json j = read_json_or_null(report_json);
  m.seconds = seconds_since(t0);
  if (rc != 0 || j.is_null() || !j.contains("reports")) {
    m.state = MemoryVerdict::State::kError;
    m.reason = fmt::format("alloc report exited {}: {}", rc, last_line(log));
    return m;
  }
  try {
    check_format(j, report_json.string(), kAllocReportFormat, kAllocReportVersion,
                 "the alloc-report.json of racelab alloc report --out");
  } catch (const InputError& e) {
    m.state = MemoryVerdict::State::kError;
    m.reason = e.what();
    return m;
  }
  for (const auto& r : j["reports"]) m.devices.push_back(device_memory(r));
  // Growth on any device is not stable; otherwise a device with too few iterations after its
  // warm phase leaves the run not measured.
  const bool grew = std::any_of(m.devices.begin(), m.devices.end(),
                                [](const DeviceMemory& d) { return d.measured && !d.stable; });
  const auto unmeasured = std::find_if(m.devices.begin(), m.devices.end(),
                                       [](const DeviceMemory& d) { return !d.measured; });
  if (grew) {
    m.state = MemoryVerdict::State::kUnstable;
  } else if (unmeasured != m.devices.end()) {
    m.state = MemoryVerdict::State::kNotMeasured;
    m.reason = unmeasured->verdict;
  } else {
    m.state = MemoryVerdict::State::kStable;
  }
  return m;
}

CheckResult run_check(const CheckOptions& o, const std::string& racelab,
                      const std::function<void(const std::string&)>& note) {
  expect_script(o.script);
  if (o.executions == 0) throw InputError("--executions: expected a positive integer, got 0");
  std::vector<std::pair<std::string, std::vector<std::string>>> sets;
  if (o.variants.empty()) sets.push_back({"(as given)", o.args});
  for (const auto& v : o.variants) {
    std::vector<std::string> a = o.args;
    for (auto& w : split_arguments(v)) a.push_back(std::move(w));
    sets.push_back({v, std::move(a)});
  }
  CheckResult result;
  const auto t0 = std::chrono::steady_clock::now();
  ensure_directory(o.out);
  const std::string script = fs::absolute(o.script).string();
  for (std::size_t k = 0; k < sets.size(); ++k) {
    VariantResult v;
    v.name = sets[k].first;
    v.args = sets[k].second;
    v.dir = (fs::path(o.out) / slug(v.name == "(as given)" ? "" : v.name, k)).string();
    ensure_directory(v.dir);
    CheckOptions with_script = o;
    with_script.script = script;
    note(fmt::format("[{}/{}] {}: races ({} executions, {})", k + 1, sets.size(), v.name,
                     o.executions, o.strategy));
    v.races = search_races(with_script, racelab, v.args, v.dir);
    if (o.memory) {
      note(fmt::format("[{}/{}] {}: memory (one uncontrolled run with the allocator capture)",
                       k + 1, sets.size(), v.name));
      v.memory =
          capture_memory(racelab, script, v.args, o.interpose, "", o.time_limit, o.settle, v.dir);
    } else {
      v.memory.reason = "not asked for (--no-memory)";
    }
    result.variants.push_back(std::move(v));
  }
  result.seconds = seconds_since(t0);
  return result;
}

const char* race_state_name(RaceVerdict::State s) {
  switch (s) {
    case RaceVerdict::State::kClean:
      return "clean";
    case RaceVerdict::State::kFound:
      return "found";
    case RaceVerdict::State::kInconclusive:
      return "inconclusive";
    case RaceVerdict::State::kError:
      return "error";
  }
  return "?";
}

const char* memory_state_name(MemoryVerdict::State s) {
  switch (s) {
    case MemoryVerdict::State::kStable:
      return "stable";
    case MemoryVerdict::State::kUnstable:
      return "unstable";
    case MemoryVerdict::State::kNotMeasured:
      return "not_measured";
    case MemoryVerdict::State::kError:
      return "error";
  }
  return "?";
}

std::string race_summary(const RaceVerdict& r) {
  switch (r.state) {
    case RaceVerdict::State::kClean:
      if (r.stopped_by == "time_limit" || r.stopped_by == "interrupted")
        return fmt::format("none in {} of {} executions (stopped by {})", r.executions, r.budget,
                           r.stopped_by == "time_limit" ? "the time limit" : "an interrupt");
      return fmt::format("none in {} executions", r.executions);
    case RaceVerdict::State::kFound:
      return fmt::format("{} at execution {}", r.kind.empty() ? "failure" : r.kind, r.execution);
    case RaceVerdict::State::kInconclusive:
      return fmt::format("inconclusive: racelab lost control ({})", r.kind);
    case RaceVerdict::State::kError:
      return "error: " + r.reason;
  }
  return "?";
}

std::string memory_summary(const MemoryVerdict& m) {
  switch (m.state) {
    case MemoryVerdict::State::kNotMeasured:
      if (m.devices.empty()) return "not measured: " + m.reason;
      break;
    case MemoryVerdict::State::kError:
      return "error: " + m.reason;
    case MemoryVerdict::State::kStable:
    case MemoryVerdict::State::kUnstable:
      break;
  }
  // alloc report's own words per device: one rule, one wording (alloc/report.h).
  std::string out;
  for (const DeviceMemory& d : m.devices) {
    if (!out.empty()) out += "; ";
    if (m.devices.size() > 1) out += d.name.substr(d.name.rfind('.') + 1) + " ";
    out += fmt::format("{} ({} iterations)", d.verdict, d.iterations);
  }
  if (!m.failure.empty())
    out = fmt::format("the run failed ({}), so of a partial run: ", m.ended) + out;
  return out;
}

nlohmann::ordered_json check_json(const CheckResult& r, const CheckOptions& o) {
  nlohmann::ordered_json j;
  j["format"] = kCheckFormat;
  j["version"] = kCheckVersion;
  j["script"] = o.script;
  j["args"] = o.args;
  j["interpose"] = o.interpose;
  j["strategy"] = o.strategy;
  j["seed"] = o.seed;
  j["executions"] = o.executions;
  j["seconds"] = r.seconds;
  j["passed"] = r.exit_code() == 0;
  j["variants"] = nlohmann::ordered_json::array();
  for (const VariantResult& v : r.variants) {
    nlohmann::ordered_json races{
        {"verdict", race_state_name(v.races.state)},
        {"summary", race_summary(v.races)},
        {"executions", v.races.executions},
        {"stopped_by", v.races.stopped_by},
        {"kinds_seen", v.races.kinds},
        {"kind", v.races.kind},
        {"message", v.races.message},
        {"execution", v.races.execution},
        {"schedule", v.races.schedule},
        {"stack", v.races.stack},
        {"command", shell_line(v.races.argv)},
        {"versions_outside", v.races.outside_verified.empty()
                                 ? nlohmann::ordered_json(nullptr)
                                 : nlohmann::ordered_json(v.races.outside_verified)},
        {"seconds", v.races.seconds}};
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const DeviceMemory& d : v.memory.devices)
      devices.push_back({{"name", d.name},
                         {"stable", d.stable},
                         {"verdict", d.verdict},
                         {"iterations", d.iterations},
                         {"peak_reserved", d.peak_reserved},
                         {"segments", {d.segments_first, d.segments_last}},
                         {"reserved", {d.reserved_first, d.reserved_last}}});
    nlohmann::ordered_json memory{
        {"verdict", memory_state_name(v.memory.state)},
        {"settle", v.memory.settle >= 0 ? nlohmann::ordered_json(v.memory.settle)
                                        : nlohmann::ordered_json(nullptr)},
        {"summary", memory_summary(v.memory)},
        {"ended", v.memory.ended},
        {"failure", v.memory.failure},
        {"devices", devices},
        {"report", v.memory.report_dir},
        {"command", shell_line(v.memory.argv)},
        {"seconds", v.memory.seconds}};
    j["variants"].push_back({{"variant", v.name},
                             {"args", v.args},
                             {"passed", v.passed()},
                             {"dir", v.dir},
                             {"races", races},
                             {"memory", memory}});
  }
  return j;
}

}  // namespace racelab::model
