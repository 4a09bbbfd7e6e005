#include "live/split.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "sched/explore.h"
#include "sched/kinds.h"
#include "sched/speculate.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

extern char** environ;

namespace racelab::live {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kWorkerOption = "--split-worker";
// How often the coordinator looks for the workers' records, and a worker for requests: an
// execution takes a second or so on real torch.
constexpr auto kFastPoll = std::chrono::milliseconds(10);
// How long the coordinator waits for its workers to end once it is done, before it kills them.
constexpr auto kStopGrace = std::chrono::seconds(2);
// How many times a worker process that ended early is started again.
constexpr unsigned kRestarts = 8;

// The first execution in a process is not always like the later ones (the script's own lazy
// imports and first-use initialisation run in it, some with steps racelab sees), and one process
// runs its first execution cold and every later one warm: a subtree that a fresh worker process
// ran first was sleep-set blocked after 28 decisions where a warm one ran 42 to the end. So every
// process of a split first runs one execution that counts for nothing (one process's execution
// 0, under `strategy`) and searches warm. nullopt where it hung (threads are stuck in the
// process) or failed: the coordinator's result then, since one process stops there too.
// `said`, when given, gets how it went: "89 decisions (3 sleeps) in 2.1 s".
std::optional<Result> warm_up(const LiveRunner& runner, sched::StrategyKind kind,
                              std::string* said = nullptr) {
  sched::StrategyParams p;
  p.kind = kind;
  const std::unique_ptr<sched::Strategy> strategy = sched::make_strategy(p);
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<Result> r = runner.run(*strategy, 0);
  if (said != nullptr && r) {
    const auto sleeps = std::count_if(r->events.begin(), r->events.end(),
                                      [](const Event& e) { return e.text == "sleep"; });
    *said =
        fmt::format("{} decisions ({} sleeps) in {:.1f} s", r->choices.size(), sleeps,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (r && (r->hung || worst_failure(*r) != r->findings.end())) return r;
  return std::nullopt;
}

// A fresh search of `kind`, as one process's search makes it (harness/live_search.cc).
std::unique_ptr<sched::Strategy> fresh_search(sched::StrategyKind kind) {
  sched::StrategyParams p;
  p.kind = kind;
  return sched::make_strategy(p);
}

double now_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Creates `path` with `content` if no one has: true for the one caller that did.
bool create_exclusive(const fs::path& path, const std::string& content = "") {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool written = content.empty() || ::write(fd, content.data(), content.size()) ==
                                              static_cast<ssize_t>(content.size());
  ::close(fd);
  return written;
}

// This process's command line with --split-worker DIR after its `live python` or `live torch`.
std::vector<std::string> worker_argv(const std::string& dir) {
  std::vector<std::string> argv = own_command_line();
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--") break;
    if (argv[i] == "live" && (argv[i + 1] == "python" || argv[i + 1] == "torch")) {
      argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(i) + 2, {kWorkerOption, dir});
      return argv;
    }
  }
  throw InputError("--jobs: the command line names no 'live python' or 'live torch'");
}

// Starts worker `k`, its terminal output in `log`.
pid_t spawn_worker(const fs::path& dir, unsigned k) {
  std::vector<std::string> args = worker_argv((dir / fmt::format("worker-{}", k)).string());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = (dir / fmt::format("worker-{}.log", k)).string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw InputError(
        fmt::format("--jobs: could not start worker process {}: {}", k, std::strerror(rc)));
  return pid;
}

// A failing execution: where, and its decisions to replay.
struct PieceFailure {
  std::uint64_t execution = 0;
  std::string kind;
  std::vector<sched::ReplayStep> steps;
};

Json failure_json(const PieceFailure& f) {
  Json steps = Json::array();
  for (const sched::ReplayStep& s : f.steps) steps.push_back({s.thread, s.op});
  return {{"execution", f.execution}, {"kind", f.kind}, {"steps", steps}};
}

PieceFailure failure_from(const Json& j) {
  PieceFailure f;
  f.execution = j.at("execution").get<std::uint64_t>();
  f.kind = j.at("kind").get<std::string>();
  for (const Json& s : j.at("steps"))
    f.steps.push_back({s.at(0).get<std::string>(), s.at(1).get<std::string>()});
  return f;
}

PieceFailure failure_of(std::uint64_t execution, const Result& r) {
  const auto worst = worst_failure(r);
  return {execution, worst != r.findings.end() ? worst->kind : std::string("failure"),
          r.replay_steps()};
}

// One execution a worker ran for request `id`, as the coordinator needs it: what one process's
// search counts of it, whether that search stops there (StopAtFailure, from the execution
// alone), its failure, and the recording that the search is fed (speculate.h); none where the
// execution did not run to its end.
struct Ran {
  std::uint64_t steps = 0;
  std::uint64_t fingerprint = 0;
  std::uint64_t settled = 0;
  bool hung = false;
  bool stops = false;
  std::optional<PieceFailure> failure;
  std::optional<std::string> recording;
};

std::string ran_text(const Ran& r) {
  return Json{{"steps", r.steps},
              {"fingerprint", r.fingerprint},
              {"settled", r.settled},
              {"hung", r.hung},
              {"stops", r.stops},
              {"failure", r.failure ? failure_json(*r.failure) : Json()},
              {"recording", r.recording ? Json(*r.recording) : Json()}}
      .dump();
}

Ran ran_from(const fs::path& path) {
  try {
    const Json j = Json::parse(read_text(path));
    Ran r;
    r.steps = j.at("steps").get<std::uint64_t>();
    r.fingerprint = j.at("fingerprint").get<std::uint64_t>();
    r.settled = j.at("settled").get<std::uint64_t>();
    r.hung = j.at("hung").get<bool>();
    r.stops = j.at("stops").get<bool>();
    if (!j.at("failure").is_null()) r.failure = failure_from(j.at("failure"));
    if (!j.at("recording").is_null()) r.recording = j.at("recording").get<std::string>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: a worker's record is damaged: {}", path.string(), e.what()));
  }
}

// Request files: req-ID.json, req-ID-root.json for the one the search waits for (workers take
// those first); claim-ID (created exclusively, then holds the worker's number); ran-ID.json.
fs::path request_path(const fs::path& dir, std::uint64_t id, bool root) {
  return dir / fmt::format("req-{}{}.json", id, root ? "-root" : "");
}
fs::path claim_path(const fs::path& dir, std::uint64_t id) {
  return dir / fmt::format("claim-{}", id);
}
fs::path ran_path(const fs::path& dir, std::uint64_t id) {
  return dir / fmt::format("ran-{}.json", id);
}

// Runs request `id` (one execution from search state `state`, "" for the first) as execution
// number `index` (what a crash report inside it says) and says what ran; `result`, when given,
// gets the execution itself.
Ran run_request(const LiveRunner& runner, sched::StrategyKind kind, bool expect_deadlock,
                std::uint64_t id, std::uint64_t index, const std::string& state,
                std::optional<Result>* result) {
  const std::unique_ptr<sched::Strategy> search = fresh_search(kind);
  if (!state.empty() && !search->resumable()->take_over(state))
    throw InputError(fmt::format("{} cannot take request {} over", search->describe(), id));
  sched::RecordingStrategy recorder(*search);
  std::optional<Result> r = runner.run(recorder, index);
  Ran ran;
  if (r) {
    ran.steps = r->choices.size();
    ran.fingerprint = handoff_fingerprint(*r);
    ran.settled = r->settled;
    ran.hung = r->hung;
    if (worst_failure(*r) != r->findings.end()) ran.failure = failure_of(id, *r);
    StopAtFailure keep(expect_deadlock, false);
    Result kept = *r;  // keep() takes what it keeps
    ran.stops = !keep.keep(0, kept);
    // A deadlock leaves threads stuck, but the strategy saw the execution to its end.
    sched::Recording rec = recorder.take();
    if (rec.ended) ran.recording = sched::recording_text(rec);
  }
  if (result != nullptr) *result = std::move(r);
  return ran;
}

}  // namespace

SplitSearch search_split(const SearchOptions& a, const JobInfo& info, Subject& subject,
                         const std::function<bool()>& stop,
                         const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const fs::path dir = fs::path(a.out) / "split";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  write_file_atomic(dir / "coordinator.pid", std::to_string(::getpid()));
  const double deadline = a.time_limit > 0 ? now_epoch() + a.time_limit : 0;
  const bool expect_deadlock = a.expect == results::LiveExpect::kDeadlock;
  write_file_atomic(
      dir / "plan.json",
      Json{{"hash", info.hash}, {"deadline", deadline}, {"expect_deadlock", expect_deadlock}}
          .dump());
  std::vector<pid_t> workers;
  for (unsigned k = 0; k < a.jobs; ++k) workers.push_back(spawn_worker(dir, k));
  auto stop_workers = [&] { write_file_atomic(dir / "stop", "stop\n"); };
  const sched::Speculation::Factory make = [kind = a.strategy] { return fresh_search(kind); };
  const std::string described = make()->describe();

  const LiveRunner runner(subject, runtime_options(a, false), "", nullptr);
  SplitSearch out{Outcome(StopAtFailure(expect_deadlock, false)), {}, ""};
  if (std::optional<Result> r = warm_up(runner, a.strategy)) {  // one process's execution 0
    stop_workers();
    out.outcome.add(r->choices.size(), handoff_fingerprint(*r));
    out.outcome.kept.keep(0, *r);
    out.outcome.seconds = elapsed();
    out.strategy = fmt::format("{}, over {} worker processes, stopped at its first execution",
                               described, a.jobs);
    return out;
  }
  // The workers warm up now, on what this execution left in the on-disk compile caches (torch's
  // inductor and triton caches): a dozen cold compiles at once took a minute on 16 cores.
  write_file_atomic(dir / "warm", "warm\n");
  const double warm_s = elapsed();
  double ready_s = -1;     // when the first worker was ready
  std::uint64_t here = 0;  // executions run in this process meanwhile
  double planning_s = 0;   // in the search and its branches (Speculation's take and arrived)
  const auto planning = [&](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    planning_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  // The search, fed with what the workers run (sched/speculate.h).
  sched::Speculation spec(make);
  std::set<std::uint64_t> outstanding;               // requests written, not yet back
  std::set<std::uint64_t> roots_out;                 // ... of them, the search's own
  std::map<std::uint64_t, std::string> root_states;  // ... their states
  std::optional<sched::Speculation::Request> rerun;  // to run here next
  bool alone = false;  // every worker ended for good: the search runs here
  std::map<std::uint64_t, Ran> back;
  std::uint64_t folded = 0;  // the search's executions counted so far
  std::optional<PieceFailure> first, other;
  std::uint64_t first_at = 0, other_at = 0;
  std::uint64_t first_id = 0, other_id = 0;
  std::map<std::uint64_t, Result> mine;  // failing executions this process ran (no replay)
  std::vector<unsigned> restarts(workers.size(), 0);
  std::string lost;  // why the search could not go on, where a worker process ended early
  bool interrupted = false, capped = false;
  bool ready = false;  // some worker has started
  // One execution of the search: counted as one process counts it; true where it stops there.
  const auto fold = [&](std::uint64_t id) {
    const Ran& r = back.at(id);
    const std::uint64_t at = folded++;
    out.outcome.add(r.steps, r.fingerprint);
    out.outcome.kept.settled += r.settled;
    if (r.stops) {
      if (r.failure) {
        first = r.failure;
        first_at = at;
        first_id = id;
      }
      return true;
    }
    if (r.failure && !other) {
      other = r.failure;
      other_at = at;
      other_id = id;
    }
    return false;
  };
  for (bool ended = false; !ended;) {
    if (stop && stop()) {
      interrupted = true;
      break;
    }
    if (deadline > 0 && now_epoch() >= deadline) break;
    // Hand out what the search and its branches want: one request per live worker, and the
    // search's own at once, which the workers take first; until a worker is ready (torch's import
    // and a first execution take a while in each), the search's own runs here.
    const auto live = static_cast<std::size_t>(
        std::count_if(workers.begin(), workers.end(), [](pid_t p) { return p > 0; }));
    const std::size_t spec_out = outstanding.size() - roots_out.size();
    if (!ready && !alone) {
      for (unsigned k = 0; k < a.jobs && !ready; ++k)
        ready = fs::exists(dir / fmt::format("ready-{}", k));
      if (ready) ready_s = elapsed();
    }
    // Before a worker is ready, no branch's request: the search would wait for one whose first
    // choices are its next execution's, which nobody runs yet, instead of running it here (on an
    // H100, 4 executions here in the workers' first 28 s).
    const std::size_t free = ready && live > spec_out ? live - spec_out : 0;
    // The search's own execution whose worker process ended in it (a crash of the program's
    // kills the process) runs here next, as one process would run it: a crash then ends this
    // process with its report, at the search's execution number.
    std::optional<sched::Speculation::Request> own = std::move(rerun);
    rerun.reset();
    std::vector<sched::Speculation::Request> wanted;
    planning([&] { wanted = spec.take(free + (spec.root_needs() ? 1 : 0)); });
    for (sched::Speculation::Request& q : wanted) {
      if (q.root && !ready) {
        own = std::move(q);
        continue;
      }
      if (q.root) root_states[q.id] = q.state;
      write_file_atomic(request_path(dir, q.id, q.root),
                        Json{{"id", q.id}, {"state", q.state}}.dump());
      outstanding.insert(q.id);
      if (q.root) roots_out.insert(q.id);
    }
    bool any = false;
    if (own) {
      std::optional<Result> result;
      Ran r = run_request(runner, a.strategy, expect_deadlock, own->id, spec.sequence().size(),
                          own->state, &result);
      std::optional<sched::Recording> rec;
      if (r.recording) rec = sched::recording_from(*r.recording);
      if (result && (r.stops || r.failure)) mine.emplace(own->id, std::move(*result));
      back.emplace(own->id, std::move(r));
      planning([&] { spec.arrived(own->id, std::move(rec)); });
      ++here;
      any = true;
    }
    // Take in what came back, then count the search's executions in its order.
    for (auto it = outstanding.begin(); it != outstanding.end();) {
      const std::uint64_t id = *it;
      if (!fs::exists(ran_path(dir, id))) {
        ++it;
        continue;
      }
      Ran r = ran_from(ran_path(dir, id));
      std::optional<sched::Recording> rec;
      if (r.recording) rec = sched::recording_from(*r.recording);
      back.emplace(id, std::move(r));
      it = outstanding.erase(it);
      roots_out.erase(id);
      planning([&] { spec.arrived(id, std::move(rec)); });
      any = true;
    }
    while (!ended && folded < spec.sequence().size()) {
      if (folded >= a.executions) {
        capped = ended = true;
        break;
      }
      ended = fold(spec.sequence()[folded]);
    }
    if (ended) break;
    if (folded >= a.executions && !spec.exhausted()) {  // the cap, reached with this execution
      capped = true;
      break;
    }
    if (const auto id = spec.root_lost()) {
      // The search's own execution did not run to its end (a hang) or ran otherwise than its
      // recording said (not deterministic): one process's search ends there too.
      const auto was = back.find(*id);
      if (was == back.end()) {
        lost = "a worker process ended while it ran the search's own execution (its log is in " +
               dir.string() + ")";
      } else if (folded < a.executions) {
        const Ran& r = was->second;
        fold(*id);
        if (!first && r.failure) {
          first = r.failure;
          first_at = folded - 1;
          first_id = *id;
        }
        if (!r.failure)
          lost =
              "the search's own execution did not replay in a worker process (the program "
              "is not deterministic there)";
      } else {
        capped = true;
      }
      break;
    }
    if (spec.exhausted()) break;
    if (progress) progress(folded, a.executions);
    // Workers that ended (a hang leaves threads stuck in one: it ends after its record): their
    // requests in hand come back empty, and another process takes their place.
    for (std::size_t k = 0; k < workers.size(); ++k) {
      int st = 0;
      if (workers[k] <= 0 || ::waitpid(workers[k], &st, WNOHANG) != workers[k]) continue;
      workers[k] = -1;
      for (auto it = outstanding.begin(); it != outstanding.end();) {
        const std::uint64_t id = *it;
        if (fs::exists(ran_path(dir, id)) || read_text(claim_path(dir, id)) != std::to_string(k)) {
          ++it;
          continue;
        }
        it = outstanding.erase(it);
        if (roots_out.erase(id) != 0) {
          rerun = sched::Speculation::Request{id, root_states.at(id), true};
        } else {
          spec.arrived(id, std::nullopt);
        }
        any = true;
      }
      if (WIFEXITED(st) && WEXITSTATUS(st) == kExitBadInput)
        throw InputError(fmt::format("--jobs: worker process {} refused its part: {}", k,
                                     read_text(dir / fmt::format("worker-{}.log", k))));
      // A worker whose execution hung ends by design (kExitFound); any other end counts.
      const bool hung_out = WIFEXITED(st) && WEXITSTATUS(st) == kExitFound;
      if (hung_out || restarts[k]++ < kRestarts)
        workers[k] = spawn_worker(dir, static_cast<unsigned>(k));
    }
    if (!alone && std::all_of(workers.begin(), workers.end(), [](pid_t p) { return p <= 0; })) {
      // No worker left, and none to start: the search goes on here alone, as one process's,
      // with what nobody ran given up by its branches or, the search's own, run here.
      alone = true;
      ready = false;
      for (const std::uint64_t id : outstanding) {
        if (roots_out.count(id) != 0) {
          rerun = sched::Speculation::Request{id, root_states.at(id), true};
        } else {
          spec.arrived(id, std::nullopt);
        }
      }
      outstanding.clear();
      roots_out.clear();
      fmt::print(stderr,
                 "racelab: --jobs: every worker process ended early (their logs are in {}): the "
                 "search goes on in this process alone\n",
                 dir.string());
      any = true;
    }
    if (!any) std::this_thread::sleep_for(kFastPoll);
  }
  // The workers look for `stop` between executions; one in the middle of an execution (or of
  // torch's import) is not waited for beyond a short grace: what it runs counts for nothing now.
  stop_workers();
  const auto grace = std::chrono::steady_clock::now() + kStopGrace;
  for (pid_t& p : workers) {
    while (p > 0) {
      int st = 0;
      if (::waitpid(p, &st, WNOHANG) == p) break;
      if (std::chrono::steady_clock::now() >= grace) {
        ::kill(p, SIGKILL);
        ::waitpid(p, &st, 0);
        break;
      }
      std::this_thread::sleep_for(kFastPoll);
    }
    p = -1;
  }
  out.classes = spec.classes_after(folded);
  out.strategy = fmt::format("{}, over {} worker processes ({} executions run for {})", described,
                             a.jobs, spec.recordings(), folded);
  // Where the time went, for --jobs's tuning (docs/live.md, "Many processes").
  fmt::print(
      stderr,
      "racelab: --jobs: first execution {:.1f} s, first worker ready {}, {} of {} executions "
      "run in this process, {:.1f} s planning them; {}\n",
      warm_s, ready_s < 0 ? std::string("never") : fmt::format("at {:.1f} s", ready_s), here,
      spec.recordings(), planning_s, spec.waste());

  // The failure kept, in full: run here, or replayed here.
  const auto replay = [&](const PieceFailure& f, std::uint64_t at, std::uint64_t id) {
    if (const auto it = mine.find(id); it != mine.end()) {
      out.outcome.kept.keep(at, it->second);
      return;
    }
    sched::ReplayStrategy strategy(f.steps, sched::OnDivergence::kFail, nullptr);
    const LiveRunner replayer(subject, runtime_options(a, true), "", nullptr);
    std::optional<Result> r;
    try {
      r = replayer.run(strategy, at);
    } catch (const InputError& e) {
      throw std::runtime_error(
          fmt::format("--jobs: the {} a worker found at execution {} did not replay here: {}",
                      f.kind, at, e.what()));
    }
    if (r) out.outcome.kept.keep(at, *r);
  };
  if (first) {
    replay(*first, first_at, first_id);
  } else if (other) {
    replay(*other, other_at, other_id);
  }
  out.outcome.kept.finish();
  out.outcome.seconds = elapsed();
  if (first) {
    out.outcome.stop = sched::StopReason::kBudget;  // the keep policy ended it
  } else if (spec.exhausted() && lost.empty() && !capped && folded == spec.sequence().size()) {
    out.outcome.stop = sched::StopReason::kExhausted;
  } else if (interrupted) {
    out.outcome.stop = sched::StopReason::kInterrupted;
  } else if (!capped && deadline > 0 && now_epoch() >= deadline) {
    out.outcome.stop = sched::StopReason::kTimeLimit;
  } else {
    out.outcome.stop = sched::StopReason::kBudget;
  }
  if (!lost.empty())
    fmt::print(stderr, "racelab: the split search stopped: {}: it is not exhaustive\n", lost);
  return out;
}

int split_worker(const SearchOptions& a, const JobInfo& info, Subject& subject) {
  const fs::path wdir = a.split_worker;
  const fs::path dir = wdir.parent_path();
  fs::create_directories(wdir);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::string pid = read_text(dir / "coordinator.pid");
  if (pid.empty() || std::to_string(::getppid()) != pid) {
    fmt::print(stderr, "racelab: --split-worker: not started by the coordinator of {}\n",
               dir.string());
    return kExitBadInput;
  }
  const Json plan = Json::parse(read_text(dir / "plan.json"));
  if (plan.at("hash").get<std::string>() != info.hash) {
    fmt::print(stderr,
               "racelab: --split-worker: the coordinator runs another subject (content hash {}, "
               "here {})\n",
               plan.at("hash").get<std::string>(), info.hash);
    return kExitBadInput;
  }
  const bool expect_deadlock = plan.at("expect_deadlock").get<bool>();
  const std::string self = wdir.filename().string().substr(std::string("worker-").size());
  const LiveRunner runner(subject, runtime_options(a, false), "", nullptr);
  // The coordinator's first execution fills the compile caches this one then reads.
  while (!fs::exists(dir / "warm")) {
    if (fs::exists(dir / "stop")) return kExitOk;
    std::this_thread::sleep_for(kFastPoll);
  }
  std::string said;
  if (std::optional<Result> r = warm_up(runner, a.strategy, &said); r && r->hung) return kExitFound;
  // How long its first execution took, and whether it waited (time.sleep) on something.
  fmt::print(stderr, "racelab: worker: first execution: {}\n", said);
  write_file_atomic(dir / fmt::format("ready-{}", self), "ready\n");
  std::uint64_t done = 0;
  while (!fs::exists(dir / "stop")) {
    // The request to take: the search's own first, then the oldest.
    std::optional<std::pair<bool, std::uint64_t>> best;  // (not the root's, id): least first
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      // Not a file still being written (write_file_atomic's NAME.tmp.PID).
      if (name.rfind("req-", 0) != 0 || !name.ends_with(".json")) continue;
      const bool root = name.find("-root") != std::string::npos;
      const std::uint64_t id = std::strtoull(name.c_str() + 4, nullptr, 10);
      if (fs::exists(claim_path(dir, id))) continue;
      const std::pair<bool, std::uint64_t> key{!root, id};
      if (!best || key < *best) best = key;
    }
    if (!best) {
      std::this_thread::sleep_for(kFastPoll);
      continue;
    }
    const std::uint64_t id = best->second;
    if (!create_exclusive(claim_path(dir, id), self)) continue;
    const Json request = Json::parse(read_text(request_path(dir, id, !best->first)));
    const std::string state = request.at("state").get<std::string>();
    std::optional<Result> r;
    Ran ran;
    try {
      ran = run_request(runner, a.strategy, expect_deadlock, id, id, state, &r);
    } catch (const InputError& e) {
      fmt::print(stderr, "racelab: --split-worker: {}\n", e.what());
      return kExitBadInput;
    }
    write_file_atomic(ran_path(dir, id), ran_text(ran));
    write_file_atomic(wdir / "progress", std::to_string(++done));
    fmt::print(stderr, "racelab: worker: request {} ran ({} decisions)\n", id, ran.steps);
    if (r && r->hung) return kExitFound;  // threads are stuck in this process
  }
  return kExitOk;
}

}  // namespace racelab::live
