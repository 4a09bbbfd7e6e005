// The racelab command as users and CI call it: exit codes, outputs on disk, one-line errors.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "catch.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int code;
  std::string out;  // stdout and stderr
};

const char* bin() {
  const char* b = std::getenv("RACELAB_BIN");
  REQUIRE(b != nullptr);
  return b;
}

// Runs a shell command in the source tree.
Result shell(const std::string& command) {
  const char* src = std::getenv("RACELAB_SOURCE_DIR");
  REQUIRE(src != nullptr);
  const std::string cmd = std::string("cd ") + src + " && " + command + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

Result racelab(const std::string& args) { return shell(std::string(bin()) + " " + args); }

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("racelab-cli-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A bundled scenario (under scenarios/) with `from` replaced by `to`, written to `dest`.
void write_variant(const std::string& scenario, const std::string& from, const std::string& to,
                   const fs::path& dest) {
  std::string text =
      read_text(std::string(std::getenv("RACELAB_SOURCE_DIR")) + "/scenarios/" + scenario);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(dest) << text;
}

std::string alloc_data_path(const std::string& rel) {
  const char* d = std::getenv("RACELAB_ALLOC_DATA");
  REQUIRE(d != nullptr);
  return (fs::path(d) / rel).string();
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("--version, --help and usage errors", "[cli]") {
  auto v = racelab("--version");
  CHECK(v.code == 0);
  CHECK(v.out.rfind("racelab 0.", 0) == 0);
  CHECK(racelab("--help").code == 0);
  auto none = racelab("");
  CHECK(none.code == 2);
  CHECK(none.out.find("missing command; commands: doctor, explore, replay") != std::string::npos);
  auto bad = racelab("frobnicate");
  CHECK(bad.code == 2);
  CHECK(lines(bad.out) == 1);
  CHECK(bad.out.find("unknown command \"frobnicate\"; commands: doctor, explore, replay, shrink, "
                     "suite, alloc, merge, live") != std::string::npos);
  auto typo = racelab("exlpore scenarios/deadlock/lazy-2-drafters.toml");
  CHECK(typo.code == 2);
  CHECK(typo.out.find("(did you mean explore?)") != std::string::npos);
  auto nested = racelab("alloc reprot x.pickle");
  CHECK(nested.code == 2);
  CHECK(lines(nested.out) == 1);
  CHECK(nested.out.find("unknown command \"reprot\" for racelab alloc (did you mean report?)") !=
        std::string::npos);
  auto badflag = racelab("explore scenarios/deadlock/lazy-2-drafters.toml --strategy bfs");
  CHECK(badflag.code == 2);
  CHECK(lines(badflag.out) == 1);
  CHECK(badflag.out.find("--strategy: expected random, pct") != std::string::npos);
  CHECK(badflag.out.find("got 'bfs' (did you mean dfs?)") != std::string::npos);
  auto unknown = racelab("explore scenarios/deadlock/lazy-2-drafters.toml --strategi dfs");
  CHECK(unknown.code == 2);
  CHECK(lines(unknown.out) == 1);
  CHECK(
      unknown.out.find("unknown option --strategi for racelab explore; did you mean --strategy?") !=
      std::string::npos);
}

TEST_CASE("numbers out of range are one line in racelab's words, never a 300-digit range",
          "[cli2]") {
  struct Case {
    std::string args, message;
  };
  const std::string sc = " scenarios/deadlock/lazy-2-drafters.toml";
  for (const Case& c :
       {Case{"explore" + sc + " --iterations 0",
             "--iterations: expected a positive integer, got 0"},
        Case{"explore" + sc + " --iterations -5",
             "--iterations: expected a positive integer, got -5"},
        Case{"explore" + sc + " --depth 0", "--depth: expected an integer in 1..64, got 0"},
        Case{"explore" + sc + " --max-preemptions 65",
             "--max-preemptions: expected an integer in 0..64, got 65"},
        Case{"explore" + sc + " --time-limit -1", "--time-limit: expected a number >= 0, got -1"},
        Case{"explore" + sc + " --jobs -1", "--jobs: expected an integer in 0..4096, got -1"},
        Case{"suite scenarios --time-limit x", "--time-limit: expected a number >= 0, got x"},
        Case{"alloc report --settle -1 x.pickle",
             "--settle: expected a non-negative integer, got -1"},
        Case{"alloc report --window -3 x.pickle", "--window: expected a positive integer, got -3"},
        Case{"alloc report --window 0 x.pickle", "--window: expected a positive integer, got 0"},
        Case{"live torch --executions -1", "--executions: expected a positive integer, got -1"},
        Case{"live python --executions 0 x.py", "--executions: expected a positive integer, got 0"},
        Case{"live torch --hang-timeout -3", "--hang-timeout: expected a number >= 0, got -3"},
        Case{"explore" + sc + " --strategy pct --stateless",
             "--stateless: only for --strategy dpor (this run's strategy is pct)"},
        Case{"explore" + sc + " --no-symmetry",
             "--no-symmetry: only for --strategy dpor (this run's strategy is pct)"},
        Case{"live torch --expect deadlok",
             "--expect: expected clean or deadlock, got 'deadlok' (did you mean deadlock?)"}}) {
    auto r = racelab(c.args);
    INFO(c.args << ": " << r.out);
    CHECK(r.code == 2);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find(c.message) != std::string::npos);
    CHECK(r.out.size() < 200);
  }
}

TEST_CASE("doctor reports every capability and exits 0", "[cli]") {
  auto d = racelab("doctor");
  CHECK(d.code == 0);
  for (const char* item : {"cpus", "compiler", "tsan", "rr", "cuda", "libtorch", "python3",
                           "python", "torch", "table"}) {
    CHECK(d.out.find(std::string("\n") + item + " ") != std::string::npos);
  }
}

TEST_CASE("explore writes the report and a schedule per finding; replay reproduces it", "[cli]") {
  const fs::path out = scratch("explore");
  auto e = racelab("explore scenarios/deadlock/lazy-2-drafters.toml --out " + out.string());
  CHECK(e.code == 1);
  CHECK(e.out.find("replay: racelab replay ") != std::string::npos);
  CHECK(e.out.find("executions/s)") != std::string::npos);
  REQUIRE(fs::exists(out / "report.json"));
  CHECK(fs::exists(out / "report.html"));
  const fs::path schedule = out / "schedules" / "lazy-2-drafters.deadlock.json";
  auto page = racelab("replay " + schedule.string() + " --out " + (out / "replayed").string());
  CHECK(page.code == 1);
  CHECK(fs::exists(out / "replayed" / "report.html"));
  REQUIRE(fs::exists(schedule));
  auto r = racelab("replay " + schedule.string());
  CHECK(r.code == 1);
  CHECK(r.out.find("reproduced deadlock") != std::string::npos);
  // Shrinking keeps the finding.
  auto s = racelab("shrink " + schedule.string() + " -o " + (out / "small.json").string());
  CHECK(s.code == 0);
  CHECK(racelab("replay " + (out / "small.json").string()).code == 1);
  // No message repeats its kind ("deadlock: deadlock: ...").
  CHECK(e.out.find("deadlock: deadlock:") == std::string::npos);
  CHECK(r.out.find("deadlock: deadlock:") == std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("--torch: explore and replay under another torch version answer does upgrading fix it",
          "[cli]") {
  const fs::path out = scratch("torch");
  const std::string scenario = "scenarios/deadlock/lazy-one-drafter-per-gpu.toml";
  // Unknown: one line, exit 2, nothing written.
  auto unknown = racelab("explore " + scenario + " --torch 9.9 --out " + (out / "x").string());
  INFO(unknown.out);
  CHECK(unknown.code == 2);
  CHECK(lines(unknown.out) == 1);
  CHECK(unknown.out.find("--torch: unknown torch version \"9.9\": the profiles cover 2.10-2.13 "
                         "(profile 2.11), 2.14-2.15 (profile 2.14)") != std::string::npos);
  CHECK(!fs::exists(out / "x"));
  // A scenario naming an unknown version: one line, exit 2.
  const fs::path bad = out / "bad.toml";
  std::ofstream(bad) << "name = \"bad\"\n[torch]\nprofile = \"9.9\"\n";
  auto refused = racelab("explore " + bad.string());
  CHECK(refused.code == 2);
  CHECK(lines(refused.out) == 1);
  CHECK(refused.out.find("torch.profile: unknown torch version \"9.9\"") != std::string::npos);

  // On 2.11 (the scenario's own profile) the FX tracing crash crosses devices.
  auto old = racelab("explore " + scenario + " --out " + (out / "2.11").string());
  CHECK(old.code == 1);
  const fs::path crash =
      out / "2.11" / "schedules" / "lazy-one-drafter-per-gpu.fx_trace_error.json";
  REQUIRE(fs::exists(crash));
  // Under 2.15.0 (profile 2.14) it is gone: no findings of failure kinds; the scenario's own
  // expectation (must fx_trace_error, written for 2.11) no longer holds.
  auto upgraded =
      racelab("explore " + scenario + " --torch 2.15.0 --out " + (out / "2.15").string());
  INFO(upgraded.out);
  CHECK(upgraded.code == 1);
  CHECK(upgraded.out.find("torch 2.15.0: profile 2.14 (") != std::string::npos);
  CHECK(upgraded.out.find("fx_trace_error (") == std::string::npos);
  const auto report = nlohmann::json::parse(read_text(out / "2.15" / "report.json"));
  CHECK(report["torch"] == "2.15.0");
  CHECK(report["torch_profile"] == "2.14");
  // The recorded crash, replayed under 2.14: every continuation explored, the crash is gone.
  auto fixed =
      racelab("replay " + crash.string() + " --torch 2.14 --out " + (out / "replayed").string());
  INFO(fixed.out);
  CHECK(fixed.code == 0);
  CHECK(fixed.out.find("under torch 2.14 (profile 2.14)") != std::string::npos);
  // A schedule recorded under --torch replays without it (its hash names the profile).
  auto under = racelab("explore scenarios/deadlock/lazy-2-drafters.toml --torch 2.14 --out " +
                       (out / "lazy").string());
  const fs::path deadlock = out / "lazy" / "schedules" / "lazy-2-drafters.deadlock.json";
  REQUIRE(fs::exists(deadlock));
  auto again = racelab("replay " + deadlock.string());
  CHECK(again.code == 1);
  CHECK(again.out.find("reproduced deadlock") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE(
    "replay --scenario FIXED: the recorded steps that apply, then every continuation of them "
    "(dpor)",
    "[cli]") {
  const fs::path out = scratch("replay-fix");
  const std::string src = std::getenv("RACELAB_SOURCE_DIR");
  // Record against a copy, so that changing it later is a change of the recorded scenario.
  const fs::path recorded = out / "lazy.toml";
  fs::copy_file(src + "/scenarios/deadlock/lazy-2-drafters.toml", recorded);
  auto e = racelab("explore " + recorded.string() + " --out " + (out / "o").string());
  CHECK(e.code == 1);
  const std::string schedule = (out / "o/schedules/lazy-2-drafters.deadlock.json").string();
  REQUIRE(fs::exists(schedule));
  const auto recorded_steps = nlohmann::json::parse(read_text(schedule))["steps"];
  // The sequential warmup, forward and backward, removes the deadlock: the interleaving diverges
  // where the warmup starts, and no continuation of the steps before it deadlocks: exit 0.
  const fs::path fixed = out / "fixed.toml";
  write_variant("deadlock/lazy-2-drafters.toml", "mode = \"none\"",
                "mode = \"sequential\"\nbackward = true", fixed);
  auto gone = racelab("replay " + schedule + " --scenario " + fixed.string() + " --out " +
                      (out / "gone").string());
  INFO(gone.out);
  CHECK(gone.code == 0);
  CHECK(gone.out.find("another scenario") != std::string::npos);
  CHECK(gone.out.find("the interleaving diverged at step ") != std::string::npos);
  CHECK(gone.out.find("exhaustive: every interleaving class explored") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(gone.out, m,
                            std::regex("deadlock: gone: no deadlock in any of ([0-9]+) "
                                       "continuations after the first ([0-9]+) steps")));
  CHECK(std::stoull(m[1]) > 1);  // every continuation, not one
  const std::size_t applied = std::stoull(m[2]);
  CHECK(applied > 0);
  CHECK(applied < recorded_steps.size());
  CHECK(gone.out.find("continued under random") == std::string::npos);
  CHECK(!fs::exists(out / "gone/schedules/lazy-2-drafters.deadlock.json"));
  CHECK(fs::exists(out / "gone/report.html"));
  // Stopped at the divergence, nothing was explored: no answer, exit 1.
  auto stop = racelab("replay " + schedule + " --scenario " + fixed.string() +
                      " --on-divergence fail --out " + (out / "stop").string());
  CHECK(stop.code == 1);
  CHECK(stop.out.find("deadlock: not decided: the interleaving diverged at step ") !=
        std::string::npos);
  CHECK(stop.out.find("stopped there (--on-divergence fail)") != std::string::npos);
  CHECK(stop.out.find("gone") == std::string::npos);
  // A random continuation answers nothing against a fix: refused, one line.
  for (const std::string flag : {" --seed 7", " --on-divergence random"}) {
    auto random = racelab("replay " + schedule + " --scenario " + fixed.string() + flag);
    INFO(flag << ": " << random.out);
    CHECK(random.code == 2);
    CHECK(lines(random.out) == 1);
    CHECK(random.out.find("explores every continuation") != std::string::npos);
  }
  // A search cut short answers nothing either: inconclusive, exit 1.
  auto capped = racelab("replay " + schedule + " --scenario " + fixed.string() +
                        " --iterations 1 --out " + (out / "capped").string());
  INFO(capped.out);
  CHECK(capped.code == 1);
  CHECK(capped.out.find("deadlock: inconclusive: no deadlock in the 1 continuation explored") !=
        std::string::npos);
  CHECK(capped.out.find("cut short by the execution cap after 1 continuation") !=
        std::string::npos);
  CHECK(capped.out.find("raise --iterations above 1") != std::string::npos);
  CHECK(capped.out.find("gone") == std::string::npos);
  // A "fix" that warms up another length diverges at the same step and keeps the deadlock: a
  // continuation reaches it, and its schedule, written, replays to it on its own.
  const fs::path other = out / "other-length.toml";
  write_variant("deadlock/lazy-2-drafters.toml", "mode = \"none\"",
                "mode = \"sequential\"\nbackward = true\nseq_len = 1536\n\n[torch]\n"
                "automatic_dynamic = false",
                other);
  const fs::path reach = out / "reach";
  auto still =
      racelab("replay " + schedule + " --scenario " + other.string() + " --out " + reach.string());
  INFO(still.out);
  CHECK(still.code == 1);
  const fs::path witness = reach / "schedules" / "lazy-2-drafters.deadlock.json";
  REQUIRE(std::regex_search(still.out, m,
                            std::regex("deadlock: still reachable: continuation [0-9]+ after the "
                                       "first ([0-9]+) steps reaches deadlock in [0-9]+ steps; "
                                       "its schedule: (.*)")));
  CHECK(m[2] == witness.string());
  REQUIRE(fs::exists(witness));
  const auto witness_json = nlohmann::json::parse(read_text(witness));
  const std::size_t prefix = std::stoull(m[1]);
  CHECK(prefix == applied);
  REQUIRE(witness_json["steps"].size() > prefix);
  for (std::size_t k = 0; k < prefix; ++k) CHECK(witness_json["steps"][k] == recorded_steps[k]);
  CHECK(witness_json["subject"]["path"] == fs::absolute(other).string());
  auto again = racelab("replay " + witness.string());
  CHECK(again.code == 1);
  CHECK(again.out.find("reproduced deadlock in") != std::string::npos);
  // Another scenario that keeps the whole interleaving (four drafters): still reachable, exit 1.
  auto four = racelab("replay " + schedule + " --scenario " + src +
                      "/scenarios/deadlock/lazy-4-drafters.toml --out " + (out / "four").string());
  CHECK(four.code == 1);
  CHECK(four.out.find("the whole interleaving of " + std::to_string(recorded_steps.size()) +
                      " steps applies") != std::string::npos);
  CHECK(four.out.find("deadlock: still reachable: continuation ") != std::string::npos);
  // The search's limits belong to a replay against another scenario.
  auto limits = racelab("replay " + schedule + " --iterations 5");
  CHECK(limits.code == 2);
  CHECK(lines(limits.out) == 1);
  CHECK(limits.out.find("--iterations limits the search of the continuations against another "
                        "scenario") != std::string::npos);
  // Plain replay after the recorded scenario changed: refused, with the command that compares.
  std::ofstream(recorded, std::ios::app) << "# changed\n";
  auto refused = racelab("replay " + schedule);
  CHECK(refused.code == 2);
  CHECK(lines(refused.out) == 1);
  CHECK(refused.out.find("the scenario changed since recording") != std::string::npos);
  CHECK(refused.out.find("--scenario " + recorded.string()) != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE(
    "a schedule cut short before its outcome diverges in its own words; a schedule replays from "
    "any directory",
    "[cli2]") {
  const fs::path out = scratch("cut-schedule");
  // The user's own copy of a scenario, explored by its relative path from its directory.
  fs::create_directories(out / "proj" / "sc");
  std::ofstream(out / "proj" / "sc" / "lazy.toml") << read_text(
      std::string(std::getenv("RACELAB_SOURCE_DIR")) + "/scenarios/deadlock/lazy-2-drafters.toml");
  auto e =
      shell("cd " + (out / "proj").string() + " && " + bin() + " explore sc/lazy.toml --out res");
  CHECK(e.code == 1);
  const fs::path schedule = out / "proj" / "res" / "schedules" / "lazy-2-drafters.deadlock.json";
  REQUIRE(fs::exists(schedule));
  auto recorded = nlohmann::json::parse(read_text(schedule));
  CHECK(recorded["subject"]["path"] == (out / "proj" / "sc" / "lazy.toml").string());
  // From another directory.
  auto anywhere = shell("cd / && " + std::string(bin()) + " replay " + schedule.string());
  CHECK(anywhere.code == 1);
  CHECK(anywhere.out.find("reproduced deadlock in") != std::string::npos);
  // A schedule of an older racelab, its path relative to where racelab ran: found from the
  // schedule file's parents.
  auto old = recorded;
  old["subject"]["path"] = "sc/lazy.toml";
  std::ofstream(out / "proj" / "res" / "schedules" / "old.json") << old.dump(1);
  auto from_old = shell("cd / && " + std::string(bin()) + " replay " +
                        (out / "proj" / "res" / "schedules" / "old.json").string());
  CHECK(from_old.code == 1);
  CHECK(from_old.out.find("reproduced deadlock in") != std::string::npos);
  // Its trailing steps removed: every step matches, then the execution goes on without the
  // deadlock. A divergence with its own words, exit 1.
  auto cut = recorded;
  cut["steps"] =
      nlohmann::json(std::vector<nlohmann::json>(cut["steps"].begin(), cut["steps"].begin() + 10));
  std::ofstream(out / "cut.json") << cut.dump(1);
  auto c = racelab("replay " + (out / "cut.json").string());
  INFO(c.out);
  CHECK(c.code == 1);
  CHECK(c.out.find("diverged: the schedule ended at step 10 before its recorded deadlock "
                   "happened") != std::string::npos);
  CHECK(c.out.find("completed without") == std::string::npos);
  // A step edited: the divergence names what can have caused it, the scenario being as recorded.
  auto edited = recorded;
  edited["steps"][5][0] = "no such thread";
  std::ofstream(out / "edited.json") << edited.dump(1);
  auto ed = racelab("replay " + (out / "edited.json").string());
  CHECK(ed.code == 2);
  CHECK(lines(ed.out) == 1);
  CHECK(ed.out.find("diverged at step 5: expected no such thread: ") != std::string::npos);
  CHECK(ed.out.find("the scenario and racelab are as recorded: the schedule's steps were edited") !=
        std::string::npos);
  edited["racelab_version"] = "0.0.1";
  std::ofstream(out / "older.json") << edited.dump(1);
  auto older = racelab("replay " + (out / "older.json").string());
  CHECK(older.code == 2);
  CHECK(older.out.find("recorded by racelab 0.0.1 and this is ") != std::string::npos);
  // A directory where a scenario goes: said so, one line, exit 2.
  auto dir = racelab("replay " + schedule.string() + " --scenario " + (out / "proj").string());
  CHECK(dir.code == 2);
  CHECK(lines(dir.out) == 1);
  CHECK(dir.out.find((out / "proj").string() + ": is a directory, not a scenario") !=
        std::string::npos);
  auto script = racelab("check --no-memory " + (out / "proj").string());
  CHECK(script.code == 2);
  CHECK(lines(script.out) == 1);
  CHECK(script.out.find((out / "proj").string() + ": is a directory, not a script") !=
        std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("evidence kinds never change an exit code on their own", "[cli2]") {
  const fs::path out = scratch("evidence");
  // Exhaustive, and only compile_after_warmup (evidence) found: explore exits 0. dpor proves
  // lock-first-forward in a few dozen executions.
  auto e = racelab("explore scenarios/warmup/lock-first-forward.toml --out " + out.string());
  INFO(e.out);
  CHECK(e.code == 0);
  CHECK(e.out.find("compile_after_warmup (evidence; execution 0") != std::string::npos);
  CHECK(e.out.find("expectations hold") != std::string::npos);
  CHECK(e.out.find("exhaustive: every interleaving class explored") != std::string::npos);
  auto r = racelab("replay " +
                   (out / "schedules/lock-first-forward.compile_after_warmup.json").string());
  CHECK(r.code == 0);
  CHECK(r.out.find("reproduced compile_after_warmup (evidence, not a failure)") !=
        std::string::npos);
  fs::remove_all(out);
}

TEST_CASE(
    "a dfs proof cut short is inconclusive: terminal, report.json, summary.json, JUnit, exit 1",
    "[cli]") {
  const fs::path out = scratch("inconclusive");
  // lock-first-forward under dfs within 2 preemptions needs 1255196 executions; a cap of 1000
  // cuts it short. (The bundled scenario proves with dpor, in a few dozen: below.)
  const std::string dpor_explore = "strategy = \"dpor\"\niterations = 1000000\n";
  write_variant("warmup/lock-first-forward.toml", dpor_explore,
                "strategy = \"dfs\"\niterations = 1000\nmax_preemptions = 2\n",
                out / "capped.toml");
  auto s = racelab("suite " + (out / "capped.toml").string() + " --out " + (out / "res").string() +
                   " --junit " + (out / "junit.xml").string());
  INFO(s.out);
  CHECK(s.code == 1);
  CHECK(s.out.find("INCONCLUSIVE lock-first-forward") != std::string::npos);
  CHECK(s.out.find("1000 executions, cut short by the execution cap") != std::string::npos);
  CHECK(s.out.find("1 scenarios: 0 passed, 0 failed, 1 inconclusive") != std::string::npos);
  const auto summary = nlohmann::json::parse(read_text(out / "res/summary.json"));
  CHECK(summary["inconclusive"] == 1);
  CHECK(summary["passed"] == 0);
  CHECK(summary["scenarios"][0]["verdict"] == "inconclusive");
  CHECK(summary["scenarios"][0]["hold"] == true);
  const auto report = nlohmann::json::parse(read_text(out / "res/lock-first-forward/report.json"));
  CHECK(report["verdict"] == "inconclusive");
  CHECK(report["exhausted"] == false);
  CHECK(report["verdict_reason"].get<std::string>().find("must_not [deadlock") !=
        std::string::npos);
  const std::string xml = read_text(out / "junit.xml");
  CHECK(xml.find("failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"inconclusive: the dfs search was cut short by the execution "
                 "cap after 1000 executions") != std::string::npos);
  CHECK(xml.find("type=\"inconclusive\"") != std::string::npos);
  // explore says the same and exits 1.
  auto e = racelab("explore " + (out / "capped.toml").string() + " --out " + (out / "e").string());
  CHECK(e.code == 1);
  CHECK(e.out.find("expectations inconclusive: the dfs search was cut short") != std::string::npos);
  // A time limit cuts it short too (the whole bounded space: seconds).
  write_variant("warmup/lock-first-forward.toml", dpor_explore,
                "strategy = \"dfs\"\niterations = 2000000\nmax_preemptions = 2\n",
                out / "dfs.toml");
  auto t = racelab("suite " + (out / "dfs.toml").string() + " --time-limit 0.2 --out " +
                   (out / "tl").string());
  CHECK(t.code == 1);
  CHECK(t.out.find("INCONCLUSIVE lock-first-forward") != std::string::npos);
  CHECK(t.out.find("cut short by the time limit") != std::string::npos);
  // dpor cut short by its cap is inconclusive alike, and no bound is offered as the remedy.
  fs::create_directories(out / "dpor");
  write_variant("warmup/lock-first-forward.toml", dpor_explore,
                "strategy = \"dpor\"\niterations = 5\n", out / "dpor/capped.toml");
  auto d = racelab("suite " + (out / "dpor/capped.toml").string() + " --out " +
                   (out / "dpor/res").string() + " --junit " + (out / "dpor/junit.xml").string());
  INFO(d.out);
  CHECK(d.code == 1);
  CHECK(d.out.find("INCONCLUSIVE lock-first-forward") != std::string::npos);
  CHECK(d.out.find("5 executions, cut short by the execution cap") != std::string::npos);
  CHECK(read_text(out / "dpor/junit.xml")
            .find("inconclusive: the dpor search was cut short by the execution cap after 5 "
                  "executions, before covering its space, so must_not [deadlock") !=
        std::string::npos);
  CHECK(d.out.find("(raise [explore] iterations above 5)") != std::string::npos);
  // The bundled scenario: proven by dpor, and the suite says so.
  auto proven =
      racelab("suite scenarios/warmup/lock-first-forward.toml --out " + (out / "proven").string());
  CHECK(proven.code == 0);
  CHECK(proven.out.find("PASS lock-first-forward") != std::string::npos);
  CHECK(proven.out.find("; proven (dpor, exhaustive, ") != std::string::npos);
  CHECK(proven.out.find("note:") == std::string::npos);
  // Split over workers (tools/run-suite.sh's --jobs 0), stateless, and said so once.
  auto split = racelab("suite scenarios/warmup/lock-first-forward.toml --jobs 2 --out " +
                       (out / "split").string());
  CHECK(split.code == 0);
  CHECK(split.out.find("; proven (dpor, exhaustive, ") != std::string::npos);
  CHECK(split.out.find("note: --jobs 2 splits each dpor scenario's search, and a split runs "
                       "stateless") != std::string::npos);
  // Bounded dfs on the command line: the whole space passes, and a cap equal to the space's size
  // still covers it.
  const std::string dfs = " --strategy dfs --max-preemptions 2";
  for (const char* cap : {"", " --iterations 74272"}) {
    auto x = racelab(std::string("explore scenarios/sdpa/sdpa-fused.toml --out ") +
                     (out / "x").string() + dfs + cap);
    INFO(cap);
    CHECK(x.code == 0);
    CHECK(x.out.find("exhaustive within the bound (dfs(max_preemptions=2)): 74272 executions") !=
          std::string::npos);
  }
  auto under = racelab("explore scenarios/sdpa/sdpa-fused.toml --iterations 74271 --out " +
                       (out / "x").string() + dfs);
  CHECK(under.code == 1);
  // The same for the scenario's own dpor: a cap of its executions covers it, one fewer does not.
  // Its space ends within dpor's stateless share (kDporStatelessFirst): no state cache.
  auto whole = racelab("explore scenarios/sdpa/sdpa-fused.toml --out " + (out / "x").string());
  CHECK(whole.code == 0);
  const std::string exhausted =
      "exhaustive: every interleaving class explored (dpor(unbounded, symmetry)): ";
  const auto at = whole.out.find(exhausted);
  REQUIRE(at != std::string::npos);
  const std::uint64_t n = std::stoull(whole.out.substr(at + exhausted.size()));
  REQUIRE(n > 1);
  auto cap = racelab("explore scenarios/sdpa/sdpa-fused.toml --iterations " + std::to_string(n) +
                     " --out " + (out / "x").string());
  CHECK(cap.code == 0);
  CHECK(cap.out.find(exhausted + std::to_string(n) + " executions") != std::string::npos);
  auto below = racelab("explore scenarios/sdpa/sdpa-fused.toml --iterations " +
                       std::to_string(n - 1) + " --out " + (out / "x").string());
  CHECK(below.code == 1);
  CHECK(below.out.find("expectations inconclusive: the dpor search was cut short") !=
        std::string::npos);
  // Sampling says how much it sampled.
  auto p = racelab("explore scenarios/deadlock/lazy-2-drafters.toml --out " + (out / "p").string());
  CHECK(p.out.find("sampled 2000 executions (pct(depth=3, seed=1)), not a proof") !=
        std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("findings are ordered by severity, the same on every run and for any --jobs", "[cli]") {
  const fs::path out = scratch("order");
  std::vector<std::string> first;
  for (const char* jobs : {"1", "2", "1"}) {
    auto e = racelab(std::string("explore scenarios/deadlock/lazy-2-drafters.toml --jobs ") + jobs +
                     " --out " + (out / jobs).string());
    CHECK(e.code == 1);
    const auto report = nlohmann::json::parse(read_text(out / jobs / "report.json"));
    std::vector<std::string> kinds;
    for (const auto& f : report["findings"]) kinds.push_back(f["kind"].get<std::string>());
    CHECK(kinds == std::vector<std::string>{"deadlock", "fx_trace_error", "duplicate_compile",
                                            "compile_after_warmup"});
    if (first.empty()) first = kinds;
    CHECK(kinds == first);
    // Seconds and virtual times are rounded: no 49.29800000000001.
    const std::string text = read_text(out / jobs / "report.json");
    CHECK(std::regex_search(text, std::regex("[0-9]\\.[0-9]{7,}")) == false);
  }
  fs::remove_all(out);
}

TEST_CASE("files of the wrong kind are named for what they are, one line, exit 2", "[cli]") {
  const fs::path out = scratch("wrong-kind");
  auto s = racelab("suite scenarios/deadlock/lazy-2-drafters.toml --out " + out.string());
  CHECK(s.code == 0);
  const std::string summary = (out / "summary.json").string();
  const std::string report = (out / "lazy-2-drafters/report.json").string();
  const std::string schedule =
      (out / "lazy-2-drafters/schedules/lazy-2-drafters.deadlock.json").string();
  struct Case {
    std::string args, message;
  };
  for (const Case& c : {
           Case{"replay " + summary,
                "this is a suite summary (the summary.json racelab suite --out "
                "writes), not a schedule"},
           Case{"replay " + report, "this is an exploration report"},
           Case{"replay " + out.string(), "this is a directory, not a schedule"},
           Case{"shrink " + summary + " -o x.json", "this is a suite summary"},
           Case{"explore " + schedule,
                "this is a schedule (racelab-schedule JSON), not a scenario"},
           Case{"suite " + schedule, "not a scenario"},
           Case{"alloc replay " + schedule, "not a memory_viz snapshot"},
           Case{"alloc report " + summary, "this is a suite summary"},
           Case{"alloc report --iterations " + schedule + " " +
                    alloc_data_path("fixtures-h200/snap_sdpa_fused_1.pickle"),
                "not a per-iteration stats JSON"},
       }) {
    auto r = racelab(c.args);
    INFO(c.args << ": " << r.out);
    CHECK(r.code == 2);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find(c.message) != std::string::npos);
  }
  auto r = racelab("replay " + summary);
  CHECK(r.out.find("\"format\": \"racelab-schedule\"") != std::string::npos);
  // A schedule whose header says live python replays as one (tests/live/check_capture.py replays
  // a real one): a model schedule relabelled so has no script among its parameters.
  {
    auto j = nlohmann::json::parse(read_text(schedule));
    j["subject"]["name"] = "live-python";
    std::ofstream(out / "live.json") << j.dump(2);
  }
  auto live = racelab("replay " + (out / "live.json").string());
  INFO(live.out);
  CHECK(live.code == 2);
  CHECK(lines(live.out) == 1);
  CHECK((live.out.find("script parameters") != std::string::npos ||
         live.out.find("without the Python bridge") != std::string::npos));
  auto with_scenario =
      racelab("replay " + (out / "live.json").string() + " --scenario " +
              std::getenv("RACELAB_SOURCE_DIR") + "/scenarios/deadlock/lazy-2-drafters.toml");
  CHECK(with_scenario.code == 2);
  CHECK(with_scenario.out.find("--scenario applies to model schedules only") != std::string::npos);
  // A live-* subject racelab does not know: refused by name, not replayed as a model schedule.
  {
    auto j = nlohmann::json::parse(read_text(schedule));
    j["subject"]["name"] = "live-rust";
    std::ofstream(out / "unknown.json") << j.dump(2);
  }
  auto unknown = racelab("replay " + (out / "unknown.json").string());
  INFO(unknown.out);
  CHECK(unknown.code == 2);
  CHECK(lines(unknown.out) == 1);
  CHECK(unknown.out.find("subject.name: unknown live subject \"live-rust\"") != std::string::npos);
  // A live torch schedule replays with its recorded configuration: the options only a model
  // schedule takes are refused in one line, before anything runs, whether this build has
  // LibTorch or not.
  {
    auto j = nlohmann::json::parse(read_text(schedule));
    j["subject"]["name"] = "live-torch";
    std::ofstream(out / "torch.json") << j.dump(2);
  }
  auto torch = racelab("replay " + (out / "torch.json").string() +
                       " --trace --seed 7 --on-divergence random");
  INFO(torch.out);
  CHECK(torch.code == 2);
  CHECK(lines(torch.out) == 1);
  CHECK(torch.out.find("a schedule of racelab live torch; --on-divergence, --seed, --trace apply "
                       "to model schedules only") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("suite without --out writes to racelab-out/suite and says so", "[cli]") {
  const fs::path dir = scratch("suite-default");
  const std::string src = std::getenv("RACELAB_SOURCE_DIR");
  auto s = shell("cd " + dir.string() + " && " + bin() + " suite " + src +
                 "/scenarios/deadlock/lazy-2-drafters.toml");
  CHECK(s.code == 0);
  CHECK(s.out.find("wrote racelab-out/suite/summary.json, racelab-out/suite/report.html") !=
        std::string::npos);
  CHECK(fs::exists(dir / "racelab-out/suite/summary.json"));
  CHECK(fs::exists(dir / "racelab-out/suite/lazy-2-drafters/report.json"));
  fs::remove_all(dir);
}

TEST_CASE("the dfs progress line counts executions up to the cap, without a percentage", "[cli2]") {
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    WARN("script(1) missing: the terminal progress line is not checked");
    return;
  }
  const fs::path dir = scratch("progress");
  // script(1) gives racelab a terminal, where it draws progress on stderr. sdpa-fused under dfs
  // within 2 preemptions: 74,272 executions (a third of a second; seconds under ASan), long
  // enough for a line.
  auto r = shell("script -qec '" + std::string(bin()) +
                 " explore scenarios/sdpa/sdpa-fused.toml --strategy dfs --max-preemptions 2"
                 " --iterations 2000000 --out " +
                 dir.string() + "' /dev/null");
  CHECK(r.code == 0);
  CHECK(r.out.find("executions (up to 2000000)") != std::string::npos);
  CHECK(r.out.find("s left") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a clean scenario explores to exit 0", "[cli]") {
  const fs::path out = scratch("clean");
  auto e = racelab("explore scenarios/sdpa/sdpa-fused.toml --out " + out.string());
  CHECK(e.code == 0);
  CHECK(e.out.find("no findings") != std::string::npos);
  CHECK(e.out.find("exhaustive: every interleaving class explored") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("suite writes JUnit and summary; exit 1 when an expectation fails", "[cli]") {
  const fs::path out = scratch("suite");
  std::ofstream(out / "wrong.toml") << "name = \"wrong\"\n[explore]\niterations = 2000\n"
                                       "[expect]\nmust_not = [\"deadlock\"]\n";
  std::ofstream(out / "right.toml") << "name = \"right\"\n[explore]\niterations = 2000\n"
                                       "[expect]\nmust = [\"deadlock\"]\n";
  auto s = racelab("suite " + out.string() + " --junit " + (out / "junit.xml").string() +
                   " --out " + (out / "res").string());
  CHECK(s.code == 1);
  CHECK(s.out.find("FAIL wrong") != std::string::npos);
  CHECK(s.out.find("PASS right") != std::string::npos);
  CHECK(fs::exists(out / "res" / "summary.json"));
  CHECK(fs::exists(out / "res" / "wrong" / "report.json"));
  std::ifstream j(out / "junit.xml");
  std::stringstream ss;
  ss << j.rdbuf();
  const std::string xml = ss.str();
  CHECK(xml.find("<testsuites") != std::string::npos);
  CHECK(xml.find("failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"found but must not occur: deadlock\"") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE(
    "a must kind missed by a search that did not finish is inconclusive, never FAIL: explore, "
    "suite, JUnit and merge alike",
    "[cli2]") {
  const fs::path out = scratch("unfinished");
  const std::string lazy = "scenarios/deadlock/lazy-2-drafters.toml";
  // dfs cut short by its execution cap: the deadlock is reachable, the search did not get there.
  auto cap =
      racelab("explore " + lazy + " --strategy dfs --iterations 3 --out " + (out / "cap").string());
  CHECK(cap.code == 1);
  CHECK(cap.out.find("expectations inconclusive: expected but not found: deadlock") !=
        std::string::npos);
  CHECK(cap.out.find("cut short by the execution cap after 3 executions, before covering its "
                     "bounded space: an unfinished search shows nothing either way") !=
        std::string::npos);
  CHECK(cap.out.find("do not hold") == std::string::npos);
  auto report = nlohmann::json::parse(read_text(out / "cap" / "report.json"));
  CHECK(report["verdict"] == "inconclusive");
  // A sampling search stopped by the time limit before its executions ran: inconclusive too.
  auto tl = racelab("explore " + lazy + " --time-limit 0.000001 --out " + (out / "tl").string());
  CHECK(tl.code == 1);
  CHECK(tl.out.find("but the pct search was cut short by the time limit") != std::string::npos);
  CHECK(tl.out.find("before it ran its 2000 executions") != std::string::npos);
  // A sampling search that ran all its executions and missed the kind: that expectation fails.
  auto sampled = racelab("explore " + lazy + " --iterations 2 --out " + (out / "few").string());
  CHECK(sampled.code == 1);
  CHECK(sampled.out.find("expectations do not hold: expected but not found: deadlock") !=
        std::string::npos);
  // The suite, its summary and JUnit: INCONCLUSIVE, the reason once.
  fs::create_directories(out / "sc");
  std::ofstream(out / "sc" / "capped.toml")
      << "name = \"capped\"\n[explore]\nstrategy = \"dfs\"\niterations = 3\n"
         "[expect]\nmust = [\"deadlock\"]\n";
  auto s = racelab("suite " + (out / "sc").string() + " --junit " + (out / "junit.xml").string() +
                   " --out " + (out / "res").string());
  CHECK(s.code == 1);
  CHECK(s.out.find("INCONCLUSIVE capped") != std::string::npos);
  CHECK(s.out.find("FAIL capped") == std::string::npos);
  CHECK(s.out.find("     expected but not found") == std::string::npos);
  CHECK(s.out.find("0 failed, 1 inconclusive") != std::string::npos);
  const auto summary = nlohmann::json::parse(read_text(out / "res" / "summary.json"));
  CHECK(summary["scenarios"][0]["verdict"] == "inconclusive");
  CHECK(summary["scenarios"][0]["missing"] == nlohmann::json::array({"deadlock"}));
  const std::string xml = read_text(out / "junit.xml");
  CHECK(xml.find("type=\"inconclusive\"") != std::string::npos);
  CHECK(xml.find("type=\"expectation\"") == std::string::npos);
  // Shards of a dfs search each cut short by their cap: each leaves the missing kind to merge
  // (pending, not a failure of its own); merged, the whole is inconclusive.
  std::string dirs;
  for (int k = 0; k < 2; ++k) {
    const std::string d = (out / ("s" + std::to_string(k))).string();
    auto shard = racelab("explore " + lazy + " --strategy dfs --iterations 4 --shard " +
                         std::to_string(k) + "/2 --out " + d);
    INFO(shard.out);
    CHECK(shard.out.find("PENDING: expectations pending: must [") != std::string::npos);
    CHECK(shard.code <= 1);  // 1 only for a failure kind it found itself
    dirs += " " + d;
  }
  auto m = racelab("merge" + dirs + " --out " + (out / "merged").string());
  CHECK(m.code == 1);
  CHECK(m.out.find("INCONCLUSIVE lazy-2-drafters") != std::string::npos);
  CHECK(nlohmann::json::parse(read_text(out / "merged" / "report.json"))["verdict"] ==
        "inconclusive");
  fs::remove_all(out);
}

TEST_CASE("bad input: exit 2, one line, no output written", "[cli]") {
  const fs::path out = scratch("bad");
  std::ofstream(out / "bad.toml") << "name = \"x\"\n[pipeline]\ndevices = 0\n";
  auto b = racelab("explore " + (out / "bad.toml").string() + " --out " + (out / "o").string());
  CHECK(b.code == 2);
  CHECK(lines(b.out) == 1);
  CHECK(b.out.find("pipeline.devices: expected an integer in 1..64, got 0") != std::string::npos);
  CHECK(!fs::exists(out / "o"));
  auto missing = racelab("explore " + (out / "none.toml").string());
  CHECK(missing.code == 2);
  CHECK(lines(missing.out) == 1);
  std::ofstream(out / "s.json") << "{\"format\": \"racelab-schedule\", \"version\": 9}";
  auto sched = racelab("replay " + (out / "s.json").string());
  CHECK(sched.code == 2);
  CHECK(sched.out.find("unsupported schedule version 9") != std::string::npos);
  auto empty = racelab("suite " + (out / "o").string());
  CHECK(empty.code == 2);
  fs::create_directories(out / "empty");
  auto nodir = racelab("suite " + (out / "empty").string());
  CHECK(nodir.code == 2);
  CHECK(nodir.out.find("no scenarios") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("SIGINT and --time-limit end a run with the report and schedules found so far", "[cli]") {
  const fs::path out = scratch("interrupt");
  // SIGINT six seconds into a run of a hundred million executions (racelab must have started,
  // set its handler and found the deadlock, also on a loaded machine under a sanitizer: it loads
  // LibTorch and CPython first).
  auto i = shell("timeout --preserve-status -s INT 6 " + std::string(bin()) +
                 " explore scenarios/deadlock/lazy-2-drafters.toml --iterations 100000000 --out " +
                 (out / "int").string());
  CHECK(i.code == 1);
  CHECK(i.out.find("interrupted: results so far written") != std::string::npos);
  REQUIRE(fs::exists(out / "int" / "report.json"));
  std::ifstream in(out / "int" / "report.json");
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str().find("\"stopped_by\": \"interrupted\"") != std::string::npos);
  CHECK(fs::exists(out / "int" / "schedules" / "lazy-2-drafters.deadlock.json"));
  auto t = racelab(
      "explore scenarios/deadlock/lazy-2-drafters.toml --iterations 100000000 "
      "--time-limit 4 --out " +
      (out / "tl").string());
  CHECK(t.code == 1);
  CHECK(t.out.find("time limit reached") != std::string::npos);
  // The deadlock takes ~1,500 executions (10 ms here, ~1 s under ASan beside other tests); the
  // limit leaves room for a slow machine so that the check is about the written file, not speed.
  CHECK(fs::exists(out / "tl" / "schedules" / "lazy-2-drafters.deadlock.json"));
  fs::remove_all(out);
}

TEST_CASE("SIGINT and SIGTERM end racelab check with what it finished, and no verdict", "[cli]") {
  const fs::path out = scratch("check-interrupt");
  // A clean script whose hunt of a million executions outlasts the signal (--time-limit:
  // a bound should the child never hear of it).
  std::ofstream(out / "clean.py") << "import threading\n"
                                     "lock = threading.Lock()\n"
                                     "n = [0]\n"
                                     "def work():\n"
                                     "    for _ in range(3):\n"
                                     "        with lock:\n"
                                     "            n[0] += 1\n"
                                     "ts = [threading.Thread(target=work) for _ in range(2)]\n"
                                     "for t in ts: t.start()\n"
                                     "for t in ts: t.join()\n";
  auto probe = racelab("live python --interpose none --uncontrolled --out " +
                       (out / "probe").string() + " " + (out / "clean.py").string());
  if (probe.out.find("without the Python bridge") != std::string::npos) {
    SUCCEED("racelab was built without the Python bridge");
    return;
  }
  REQUIRE(probe.code == 0);
  const std::string check = std::string(bin()) +
                            " check --interpose none --no-memory --executions 1000000 "
                            "--time-limit 120 --variant a --variant b " +
                            (out / "clean.py").string() + " --out ";
  // SIGINT to the process group, as Ctrl-C sends it; SIGTERM to racelab check alone, as a job
  // runner sends it: the check passes it on to its child, which stops and writes its report.
  for (const std::string& how : {std::string("int"), std::string("term")}) {
    const fs::path dir = out / how;
    auto r = how == "int"
                 ? shell("timeout --preserve-status -s INT 6 " + check + dir.string())
                 : shell("(" + check + dir.string() + " & p=$!; sleep 6; kill -TERM $p; wait $p)");
    INFO(how << ": " << r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("interrupted: results so far written\n") != std::string::npos);
    CHECK(r.out.find("finished: none; cut short: a (in races, the hunt; not run: races, the proof, "
                     "native runs); not run: b\n") != std::string::npos);
    CHECK(r.out.find("an interrupted check is not a verdict") != std::string::npos);
    CHECK(r.out.find("INCONCLUSIVE") != std::string::npos);
    CHECK(r.out.find("PASS") == std::string::npos);
    CHECK(r.out.find("(partial: interrupted, ") != std::string::npos);
    REQUIRE(fs::exists(dir / "check.json"));
    const auto j = nlohmann::json::parse(read_text(dir / "check.json"));
    CHECK(j["passed"] == false);
    CHECK(j["interrupted"] == true);
    CHECK(j["not_run"] == nlohmann::json::array({"b"}));
    REQUIRE(j["variants"].size() == 1);
    const auto& v = j["variants"][0];
    CHECK(v["verdict"] == "INCONCLUSIVE");
    CHECK(v["interrupted_in"] == "races, the hunt");
    CHECK(v["races"]["stopped_by"] == "interrupted");  // the child heard it, and stopped
    CHECK(v["races"]["proof"].is_null());
    CHECK(!fs::exists(dir / "1-b"));
    CHECK(read_text(dir / "check.html").find("Interrupted: not a verdict") != std::string::npos);
  }
  fs::remove_all(out);
}

namespace {

std::string alloc_data(const std::string& rel) {
  const char* d = std::getenv("RACELAB_ALLOC_DATA");
  REQUIRE(d != nullptr);
  return (fs::path(d) / rel).string();
}

}  // namespace

TEST_CASE("alloc replay --compare prints the agreement line and exits 0 only at 100%", "[cli]") {
  auto ok =
      racelab("alloc replay --compare " + alloc_data("fixtures-h200/snap_sdpa_fused_1.pickle"));
  CHECK(ok.code == 0);
  CHECK(ok.out.find("allocations: 4540/4540 same placement; segment events: 17/17 identical\n") !=
        std::string::npos);
  // Under settings the trace was not recorded with, placements differ: exit 1 and the first ones.
  auto off =
      racelab("alloc replay --compare --config max_split_size_mb:64,roundup_power2_divisions:4 " +
              alloc_data("fixtures-h200/snap_sdpa_chunked_1.pickle"));
  CHECK(off.code == 1);
  CHECK(off.out.find("first differences: ") != std::string::npos);
}

TEST_CASE("alloc replay --out writes a memory_viz pickle that reads back as a snapshot", "[cli]") {
  const fs::path out = scratch("alloc-replay");
  auto r =
      racelab("alloc replay " + alloc_data("h200-traces/snap_sdpa_chunked_es_empty25_1.pickle") +
              " --out " + out.string());
  CHECK(r.code == 0);
  CHECK(r.out.find("empty_cache: 6 calls inferred from the trace") != std::string::npos);
  REQUIRE(fs::exists(out / "replay.pickle"));
  REQUIRE(fs::exists(out / "replay.json"));
  // Versioned, as every report (util/document.h): the format and its version first.
  const auto replay = nlohmann::ordered_json::parse(read_text(out / "replay.json"));
  CHECK(replay.begin().key() == "format");
  CHECK(replay["format"] == "racelab-alloc-replay");
  CHECK(replay["version"] == 1);
  // racelab's own output replays identically against itself.
  auto again = racelab("alloc replay --compare " + (out / "replay.pickle").string());
  CHECK(again.code == 0);
  CHECK(again.out.find("segment events: 113/113 identical") != std::string::npos);
}

TEST_CASE("alloc report gives the stability verdicts of the fixtures", "[cli]") {
  const fs::path out = scratch("alloc-report");
  auto r = racelab("alloc report " + alloc_data("fixtures-h200/snap_flex_padded_1.pickle") + " " +
                   alloc_data("fixtures-h200/snap_sdpa_chunked_1.pickle") + " " +
                   alloc_data("fixtures-h200/snap_sdpa_fused_1.pickle") + " --out " + out.string());
  CHECK(r.code == 0);
  CHECK(r.out.find("flex_padded_1: stable from iteration 0: no device allocation in the 149 "
                   "iterations after the warm phase (assumed: iteration 0); 14 segments") !=
        std::string::npos);
  CHECK(r.out.find("sdpa_chunked_1: not stable: device allocations at iterations 1, 2, 13 after "
                   "the warm phase (assumed: iteration 0); 18 -> 21 segments, reserved 376 -> 432 "
                   "MiB; ") != std::string::npos);
  CHECK(r.out.find("13: length 2048, no longer than the 4096 served before: fragmentation") !=
        std::string::npos);
  CHECK(r.out.find("sdpa_fused_1: stable from iteration 0: no device allocation in the 149 "
                   "iterations after the warm phase (assumed: iteration 0); 17 segments") !=
        std::string::npos);
  // What it assumed, and why.
  CHECK(r.out.find("warm phase: assumed to be iteration 0 (a single-thread loop that warms up in "
                   "its first iteration): stats_flex_padded_1.json does not record which threads "
                   "and optimizers stepped") != std::string::npos);
  CHECK(r.out.find("matches the stats JSON at 150/150 iterations") != std::string::npos);
  const auto report = nlohmann::ordered_json::parse(read_text(out / "alloc-report.json"));
  CHECK(report.begin().key() == "format");
  CHECK(report["format"] == "racelab-alloc-report");
  CHECK(report["version"] == 2);
  CHECK(report["reports"].size() == 3);
  CHECK(report["reports"][1]["stability"] == "unstable");
  CHECK(report["reports"][1]["warm_phase"]["source"] == "assumed");
  CHECK(fs::exists(out / "sdpa_chunked_1.iterations.csv"));
}

TEST_CASE("alloc report refuses stats of another run and warns where agreement is partial",
          "[cli]") {
  // The chunked trace with the fused run's stats: another run, refused in one line.
  auto other = racelab("alloc report " + alloc_data("fixtures-h200/snap_sdpa_chunked_1.pickle") +
                       " --iterations " + alloc_data("fixtures-h200/stats_sdpa_fused_1.json"));
  INFO(other.out);
  CHECK(other.code == 2);
  CHECK(lines(other.out) == 1);
  CHECK(other.out.find("stats_sdpa_fused_1.json: does not belong to ") != std::string::npos);
  CHECK(other.out.find("stable") == std::string::npos);
  // Stats whose times cover the trace but whose numbers agree nowhere: refused too.
  const fs::path dir = scratch("alloc-stats");
  {
    auto j =
        nlohmann::json::parse(read_text(alloc_data("fixtures-h200/stats_sdpa_chunked_1.json")));
    for (auto& row : j["rows"]) row["reserved"] = row["reserved"].get<std::int64_t>() + (1 << 21);
    std::ofstream(dir / "stats_shifted.json") << j.dump();
  }
  auto shifted = racelab("alloc report " + alloc_data("fixtures-h200/snap_sdpa_chunked_1.pickle") +
                         " --iterations " + (dir / "stats_shifted.json").string());
  CHECK(shifted.code == 2);
  CHECK(lines(shifted.out) == 1);
  CHECK(shifted.out.find("none of its 150 iterations agrees with the replayed trace") !=
        std::string::npos);
  // A trace whose stats agree at 13 of 150 iterations: the verdict, with a warning.
  auto partial =
      racelab("alloc report " + alloc_data("h200-traces/snap_sdpa_chunked_gc06f_1.pickle"));
  CHECK(partial.code == 0);
  CHECK(partial.out.find("warning: ") != std::string::npos);
  CHECK(partial.out.find("at only 13/150 iterations (first difference at iteration ") !=
        std::string::npos);
  // The trace with its own stats: no warning.
  auto own = racelab("alloc report " + alloc_data("fixtures-h200/snap_sdpa_chunked_1.pickle"));
  CHECK(own.code == 0);
  CHECK(own.out.find("warning") == std::string::npos);
  // --settle -1 no longer wraps to a huge number (which turned this unstable trace stable).
  auto settle =
      racelab("alloc report --settle -1 " + alloc_data("fixtures-h200/snap_sdpa_chunked_1.pickle"));
  CHECK(settle.code == 2);
  CHECK(settle.out.find("stable") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("alloc whatif predicts the runs recorded under other settings", "[cli]") {
  const fs::path out = scratch("alloc-whatif");
  auto w = racelab("alloc whatif " + alloc_data("fixtures-h200/snap_sdpa_chunked_1.pickle") +
                   " --config expandable_segments:True --config "
                   "max_split_size_mb:64,roundup_power2_divisions:4 --out " +
                   out.string());
  CHECK(w.code == 0);
  // The real runs under these settings (tools/alloc-capture): 446 MiB / 20 maps, 434 MiB / 21
  // segments.
  CHECK(w.out.find("expandable_segments:True") != std::string::npos);
  CHECK(w.out.find("446 MiB        446 MiB         2            20") != std::string::npos);
  CHECK(w.out.find("434 MiB        434 MiB        21            21") != std::string::npos);
  // whatif.json names its format and version first, then one entry per device.
  const auto whatif = nlohmann::ordered_json::parse(read_text(out / "whatif.json"));
  REQUIRE(whatif.is_object());
  CHECK(whatif.begin().key() == "format");
  CHECK(whatif["format"] == "racelab-alloc-whatif");
  CHECK(whatif["version"] == 1);
  REQUIRE(whatif["devices"].size() == 1);
  CHECK(whatif["devices"][0]["device"] == 0);
  REQUIRE(whatif["devices"][0]["settings"].size() == 3);
  CHECK(whatif["devices"][0]["settings"][1]["config"] == "expandable_segments:True");
  CHECK(whatif["devices"][0]["settings"][1]["segments"] == 2);
  CHECK(fs::exists(out / "whatif.html"));
}

TEST_CASE("alloc: bad traces and settings are one line and exit 2", "[cli]") {
  const fs::path dir = scratch("alloc-bad");
  {
    std::ifstream in(alloc_data("fixtures-h200/snap_sdpa_fused_1.pickle"), std::ios::binary);
    std::string head(3000, '\0');
    in.read(head.data(), 3000);
    std::ofstream(dir / "truncated.pickle", std::ios::binary) << head;
    std::ofstream(dir / "garbage.pickle", std::ios::binary) << "not a pickle at all";
    std::ofstream(dir / "other.json") << R"({"rows": []})";
  }
  for (const std::string& args : {"alloc replay " + (dir / "truncated.pickle").string(),
                                  "alloc replay " + (dir / "garbage.pickle").string(),
                                  "alloc replay " + (dir / "other.json").string(),
                                  "alloc replay " + (dir / "missing.pickle").string(),
                                  "alloc replay --config max_split_size_mb:8 " +
                                      alloc_data("fixtures-h200/snap_sdpa_fused_1.pickle"),
                                  "alloc whatif --config backend:cudaMallocAsync " +
                                      alloc_data("fixtures-h200/snap_sdpa_fused_1.pickle"),
                                  "alloc report --iterations " + (dir / "other.json").string() +
                                      " " + alloc_data("fixtures-h200/snap_sdpa_fused_1.pickle")}) {
    INFO(args);
    auto r = racelab(args);
    CHECK(r.code == 2);
    CHECK(lines(r.out) == 1);
  }
  auto t = racelab("alloc replay " + (dir / "truncated.pickle").string());
  CHECK(t.out.find("truncated.pickle: byte ") != std::string::npos);
  CHECK(t.out.find("expected ") != std::string::npos);
}

TEST_CASE("alloc convert: pickle to JSON and back keeps the snapshot", "[cli]") {
  const fs::path dir = scratch("alloc-convert");
  const std::string src = alloc_data("fixtures-h200/snap_sdpa_fused_1.pickle");
  CHECK(racelab("alloc convert " + src + " " + (dir / "s.json").string()).code == 0);
  CHECK(racelab("alloc convert " + (dir / "s.json").string() + " " + (dir / "s.pickle").string())
            .code == 0);
  auto r = racelab("alloc replay --compare " + (dir / "s.pickle").string());
  CHECK(r.code == 0);
  CHECK(r.out.find("allocations: 4540/4540 same placement") != std::string::npos);
}

namespace {

// Report text without the timing fields.
std::string without_timings(const fs::path& file) {
  std::ifstream in(file);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("\"seconds\"") == std::string::npos) out += line + "\n";
  }
  return out;
}

std::string file_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE(
    "explore --shard: 4 merged DFS shards are the unsharded run, byte for byte apart from timings",
    "[cli2]") {
  const fs::path base = scratch("shards");
  const std::string sc =
      std::string(std::getenv("RACELAB_SOURCE_DIR")) + "/scenarios/deadlock/lazy-2-drafters.toml";
  const std::string flags = " --strategy dfs --max-preemptions 1 --iterations 1000000";
  fs::create_directories(base / "one");
  fs::create_directories(base / "split");
  auto one = shell("cd " + (base / "one").string() + " && " + bin() + " explore " + sc + flags +
                   " --out out");
  CHECK(one.code == 1);
  std::string dirs;
  for (int k = 0; k < 4; ++k) {
    auto s = shell("cd " + (base / "split").string() + " && " + bin() + " explore " + sc + flags +
                   " --jobs 2 --shard " + std::to_string(k) + "/4 --out s" + std::to_string(k));
    CHECK(s.code <= 1);
    dirs += " s" + std::to_string(k);
  }
  auto m =
      shell("cd " + (base / "split").string() + " && " + bin() + " merge" + dirs + " --out out");
  CHECK(m.code == 1);  // like explore: something was found
  CHECK(without_timings(base / "one/out/report.json") ==
        without_timings(base / "split/out/report.json"));
  for (const char* kind : {"deadlock", "duplicate_compile", "compile_after_warmup"}) {
    const std::string f = std::string("out/schedules/lazy-2-drafters.") + kind + ".json";
    INFO(f);
    REQUIRE(fs::exists(base / "one" / f));
    CHECK(file_text(base / "one" / f) == file_text(base / "split" / f));
  }
  CHECK(fs::exists(base / "split/out/report.html"));
}

TEST_CASE("explore --shard: merged dpor shards are the --jobs run; one job has the same classes",
          "[cli2]") {
  const fs::path base = scratch("dpor-shards");
  const std::string sc =
      std::string(std::getenv("RACELAB_SOURCE_DIR")) + "/scenarios/deadlock/lazy-2-drafters.toml";
  const std::string flags = " --strategy dpor --iterations 1000000";
  fs::create_directories(base / "one");
  fs::create_directories(base / "jobs");
  fs::create_directories(base / "split");
  // A split runs dpor stateless and without symmetry (factory.cc): one job without them is the
  // match.
  auto one = shell("cd " + (base / "one").string() + " && " + bin() + " explore " + sc + flags +
                   " --no-symmetry --stateless --out out");
  CHECK(one.code == 1);
  auto jobs = shell("cd " + (base / "jobs").string() + " && " + bin() + " explore " + sc + flags +
                    " --jobs 2 --out out");
  CHECK(jobs.code == 1);
  // The state cache is one job's, and a split says so (once); --stateless asks for the split.
  const std::string note = "and a split runs stateless: the state cache belongs to one job";
  CHECK(jobs.out.find("note: --jobs 2 splits dpor's search, " + note) != std::string::npos);
  CHECK(one.out.find(note) == std::string::npos);
  auto asked = shell("cd " + (base / "jobs").string() + " && " + bin() + " explore " + sc + flags +
                     " --jobs 2 --stateless --out asked");
  CHECK(asked.code == 1);
  CHECK(asked.out.find(note) == std::string::npos);
  std::string dirs;
  for (int k = 0; k < 3; ++k) {
    auto s = shell("cd " + (base / "split").string() + " && " + bin() + " explore " + sc + flags +
                   " --shard " + std::to_string(k) + "/3 --out s" + std::to_string(k));
    CHECK(s.code <= 1);
    CHECK(s.out.find("note: --shard " + std::to_string(k) + "/3 splits dpor's search, " + note) !=
          std::string::npos);
    dirs += " s" + std::to_string(k);
  }
  auto m =
      shell("cd " + (base / "split").string() + " && " + bin() + " merge" + dirs + " --out out");
  CHECK(m.code == 1);
  CHECK(without_timings(base / "jobs/out/report.json") ==
        without_timings(base / "split/out/report.json"));
  // One job and the split: the same classes and kinds ("N classes" in the coverage line).
  auto classes = [](const fs::path& report) {
    const auto r = nlohmann::json::parse(file_text(report));
    const std::string c = r["coverage"].get<std::string>();
    const auto end = c.find(" classes");
    const auto begin = c.rfind(' ', end - 1);
    std::set<std::string> kinds;
    for (const auto& f : r["findings"]) kinds.insert(f["kind"].get<std::string>());
    return std::make_pair(c.substr(begin + 1, end - begin - 1), kinds);
  };
  const auto a = classes(base / "one/out/report.json");
  const auto b = classes(base / "jobs/out/report.json");
  CHECK(a.first == b.first);
  CHECK(a.second == b.second);
  CHECK(a.second.count("deadlock") == 1);
}

TEST_CASE("merge refuses shards that do not belong together", "[cli2]") {
  const fs::path base = scratch("merge-bad");
  const std::string sc = "scenarios/deadlock/lazy-2-drafters.toml";
  auto run = [&](const std::string& extra, const std::string& out) {
    return racelab("explore " + sc + " --iterations 200 " + extra + " --out " +
                   (base / out).string());
  };
  run("--shard 0/2", "a0");
  run("--shard 1/2", "a1");
  run("--shard 1/2 --seed 9", "b1");
  run("--shard 1/3", "c1");
  run("", "whole");
  auto ok = racelab("merge " + (base / "a0").string() + " " + (base / "a1").string() + " --out " +
                    (base / "m").string());
  CHECK(ok.code == 1);
  struct Bad {
    std::string dirs, needle;
  };
  for (const Bad& b : {Bad{"a0 b1", "seed"}, Bad{"a0 c1", "shards of 2"}, Bad{"a0", "missing"},
                       Bad{"a0 a0", "is also in"}, Bad{"a0 whole", "not a shard"}}) {
    std::string dirs;
    std::istringstream in(b.dirs);
    for (std::string d; in >> d;) dirs += " " + (base / d).string();
    auto r = racelab("merge" + dirs + " --out " + (base / "x").string());
    INFO(b.dirs << ": " << r.out);
    CHECK(r.code == 2);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find(b.needle) != std::string::npos);
  }
  for (const char* bad : {"4/4", "1", "a/b", "1/0", "-1/2"}) {
    auto r = racelab("explore " + sc + " --shard " + bad);
    INFO(bad);
    CHECK(r.code == 2);
  }
}

TEST_CASE("suite --shard: a shard settles only its part; merge prints the unsharded suite's lines",
          "[cli2]") {
  const fs::path base = scratch("suite-shards");
  const std::string src = std::getenv("RACELAB_SOURCE_DIR");
  fs::create_directories(base / "sc");
  for (const char* f : {"deadlock/lazy-2-drafters.toml", "warmup/sequential-forward-backward.toml"})
    fs::copy_file(src + "/scenarios/" + f, base / "sc" / fs::path(f).filename());
  auto here = [&](const std::string& args) {
    return shell("cd " + base.string() + " && " + bin() + " " + args);
  };
  // One machine, split over two jobs (a split dpor, as the shards run it).
  auto full = here("suite sc --jobs 2 --out full --junit full/junit.xml");
  INFO(full.out);
  CHECK(full.code == 0);
  std::string dirs;
  for (int k = 0; k < 4; ++k) {
    const std::string shard = "shard " + std::to_string(k) + "/4";
    const std::string d = "s" + std::to_string(k);
    auto s = here("suite sc --shard " + std::to_string(k) + "/4 --out " + d + " --junit " + d +
                  "/junit.xml");
    INFO(s.out);
    // Nothing it found is a failure, and the proof of the warmup is not a shard's to give.
    CHECK(s.code == 0);
    CHECK(s.out.find(shard + ": 2 scenarios: ") != std::string::npos);
    CHECK(s.out.find("PENDING sequential-forward-backward") != std::string::npos);
    CHECK(s.out.find("racelab merge of every shard judges it") != std::string::npos);
    CHECK(s.out.find("partial (subtrees " + std::to_string(k) + ", " + std::to_string(k + 4)) !=
          std::string::npos);
    CHECK(s.out.find("exhaustive") == std::string::npos);
    CHECK(s.out.find("FAIL") == std::string::npos);
    const auto summary = nlohmann::json::parse(read_text(base / d / "summary.json"));
    CHECK(summary["partition"]["shard"] == k);
    CHECK(summary["pending"].get<int>() >= 1);
    CHECK(summary["failed"] == 0);
    for (const auto& e : summary["scenarios"]) CHECK(e["exhausted"] == false);
    const auto report =
        nlohmann::json::parse(read_text(base / d / "sequential-forward-backward/report.json"));
    CHECK(report["verdict"] == "pending");
    CHECK(report["exhausted"] == false);
    CHECK(report["coverage"].get<std::string>().rfind("partial (subtrees ", 0) == 0);
    const std::string xml = read_text(base / d / "junit.xml");
    CHECK(xml.find("name=\"racelab.suite (" + shard + ")\"") != std::string::npos);
    CHECK(xml.find("<skipped message=\"pending: must_not [deadlock, ") != std::string::npos);
    CHECK(xml.find("<failure") == std::string::npos);
    const std::string page = read_text(base / d / "report.html");
    CHECK(page.find("<h1>racelab suite · " + shard + "</h1>") != std::string::npos);
    CHECK(page.find("exhaustive") == std::string::npos);
    CHECK(page.find("data-verdict=\"PENDING\"") != std::string::npos);
    dirs += " " + d;
  }
  // The shards given in another order: merge judges the whole, in the suite's words.
  auto m = here("merge s3 s1 s0 s2 --out merged --junit merged/junit.xml");
  INFO(m.out);
  CHECK(m.code == 0);
  auto lines = [](const std::string& out, const std::string& dir) {
    std::vector<std::string> kept;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("note:", 0) == 0) continue;  // --jobs 2's note on the split
      line = std::regex_replace(line, std::regex("[0-9]+\\.[0-9]+ s\\b"), "T s");
      line = std::regex_replace(line, std::regex(dir + "/"), "OUT/");
      kept.push_back(line);
    }
    return kept;
  };
  CHECK(lines(m.out, "merged") == lines(full.out, "full"));
  CHECK(m.out.find("2 scenarios: 2 passed, 0 failed, 0 inconclusive in ") != std::string::npos);
  CHECK(m.out.find("wrote merged/summary.json, merged/report.html and one report.json per "
                   "scenario, merged/junit.xml") != std::string::npos);
  const std::string page = read_text(base / "merged/report.html");
  CHECK(page.find("data-scenario=\"lazy-2-drafters\" data-verdict=\"PASS\"") != std::string::npos);
  CHECK(page.find("data-scenario=\"sequential-forward-backward\" data-verdict=\"PASS\"") !=
        std::string::npos);
  CHECK(page.find("proven (dpor, exhaustive, ") != std::string::npos);
  fs::remove_all(base);
}

TEST_CASE("report.json and summary.json carry their format; merge refuses others, reads old ones",
          "[cli2]") {
  const fs::path base = scratch("merge-format");
  const std::string sc = "scenarios/deadlock/lazy-2-drafters.toml";
  for (const char* k : {"0", "1"}) {
    racelab("explore " + sc + " --iterations 200 --shard " + k + "/2 --out " +
            (base / (std::string("e") + k)).string());
    racelab("suite " + sc + " --shard " + k + "/2 --out " +
            (base / (std::string("s") + k)).string());
  }
  CHECK(read_text(base / "e1/report.json")
            .rfind("{\n  \"format\": \"racelab-report\",\n  \"version\": 1,\n", 0) == 0);
  CHECK(read_text(base / "s1/summary.json")
            .rfind("{\n  \"format\": \"racelab-summary\",\n  \"version\": 1,\n", 0) == 0);
  CHECK(read_text(base / "s1/lazy-2-drafters/report.json")
            .rfind("{\n  \"format\": \"racelab-report\",\n  \"version\": 1,\n", 0) == 0);
  // A copy of shard 1 with its file edited: `edit` sets or (null) removes keys.
  auto variant = [&](const std::string& shard, const std::string& file, const std::string& name,
                     const nlohmann::json& edit) {
    fs::copy(base / shard, base / name, fs::copy_options::recursive);
    auto j = nlohmann::ordered_json::parse(read_text(base / name / file));
    for (const auto& [key, value] : edit.items()) {
      if (value.is_null())
        j.erase(key);
      else
        j[key] = value;
    }
    std::ofstream(base / name / file) << j.dump(2) << "\n";
    return (base / name).string();
  };
  const nlohmann::json none = {{"format", nullptr}, {"version", nullptr}};
  struct Bad {
    std::string shard0, shard1, needle;
  };
  for (const Bad& b : {
           Bad{"e0", variant("e1", "report.json", "e-newer", {{"version", 2}}),
               "e-newer/report.json: racelab-report version 2 (written by racelab "},
           Bad{"e0", variant("e1", "report.json", "e-live", {{"format", "racelab-live-report"}}),
               "e-live/report.json: this is a \"racelab-live-report\" file, not the report.json "
               "of racelab explore or suite --out"},
           Bad{"s0", variant("s1", "summary.json", "s-newer", {{"version", 5}}),
               "racelab-summary version 5"},
           Bad{"s0", variant("s1", "summary.json", "s-other", {{"format", "racelab-report"}}),
               "s-other/summary.json: this is a \"racelab-report\" file, not the summary.json of "
               "racelab suite --out (\"format\": \"racelab-summary\")"},
       }) {
    auto r = racelab("merge " + (base / b.shard0).string() + " " + b.shard1 + " --out " +
                     (base / "x").string());
    INFO(b.shard1 << ": " << r.out);
    CHECK(r.code == 2);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find(b.needle) != std::string::npos);
  }
  CHECK(!fs::exists(base / "x"));
  // Files an older racelab wrote, without the keys, merge as before.
  auto old_e =
      racelab("merge " + (base / "e0").string() + " " +
              variant("e1", "report.json", "e-old", none) + " --out " + (base / "m-e").string());
  CHECK(old_e.code == 1);
  CHECK(old_e.out.find("merged 2 shard(s)") != std::string::npos);
  const std::string s_old = variant("s1", "summary.json", "s-old", none);
  variant("s-old", "lazy-2-drafters/report.json", "s-older", none);
  auto old_s = racelab("merge " + (base / "s0").string() + " " + (base / "s-older").string() +
                       " --out " + (base / "m-s").string());
  CHECK(old_s.code == 0);  // the scenario must find a deadlock, and does: a pass
  // A suite's merge prints what the suite prints: its verdict line, the files, the totals.
  CHECK(old_s.out.find("PASS lazy-2-drafters") != std::string::npos);
  CHECK(old_s.out.find("1 scenarios: 1 passed, 0 failed, 0 inconclusive in ") != std::string::npos);
  CHECK(read_text(base / "m-s/summary.json").rfind("{\n  \"format\": \"racelab-summary\",", 0) ==
        0);
  // replay of a report or summary says what it is and what replay takes, in one line.
  for (const char* file : {"e1/report.json", "s1/summary.json", "e-live/report.json"}) {
    auto r = racelab("replay " + (base / file).string());
    INFO(file << ": " << r.out);
    CHECK(r.code == 2);
    CHECK(lines(r.out) == 1);
    CHECK(r.out.find("this is a") != std::string::npos);
    CHECK(r.out.find("not a schedule") != std::string::npos);
    CHECK(r.out.find("replay SCHEDULE takes a schedule file") != std::string::npos);
  }
  CHECK(racelab("replay " + (base / "e1/report.json").string())
            .out.find("this is an exploration report") != std::string::npos);
  CHECK(racelab("replay " + (base / "e-live/report.json").string())
            .out.find("this is a live search report") != std::string::npos);
  fs::remove_all(base);
}
