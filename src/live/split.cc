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
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "sched/explore.h"
#include "sched/kinds.h"
#include "sched/strategies/split.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

extern char** environ;

namespace racelab::live {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kWorkerOption = "--split-worker";
constexpr auto kPoll = std::chrono::milliseconds(50);
// The top part's depths (search_split).
constexpr std::size_t kFirstDepth = 8;
constexpr std::size_t kMaxDepth = 4096;
constexpr std::uint64_t kLiveSubtreesPerWorker = 4;
constexpr std::uint64_t kMaxSubtreesPerWorker = 16;
constexpr std::uint64_t kMaxSubtreesAtLeast = 64;

// The first execution in a process is not always like the later ones (the script's own lazy
// imports and first-use initialisation run in it, some with steps racelab sees), and one process
// runs its first execution cold and every later one warm: a subtree that a fresh worker process
// ran first was sleep-set blocked after 28 decisions where a warm one ran 42 to the end. So every
// process of a split first runs one execution that counts for nothing (one process's execution
// 0, under `strategy`) and searches warm. nullopt where it hung (threads are stuck in the
// process) or failed: the coordinator's result then, since one process stops there too.
std::optional<Result> warm_up(const LiveRunner& runner, sched::StrategyKind kind) {
  sched::StrategyParams p;
  p.kind = kind;
  const std::unique_ptr<sched::Strategy> strategy = sched::make_strategy(p);
  std::optional<Result> r = runner.run(*strategy, 0);
  if (r && (r->hung || worst_failure(*r) != r->findings.end())) return r;
  return std::nullopt;
}

// The search's splitter: dpor's (the command line refuses --jobs with a strategy that has no
// branching top part).
std::unique_ptr<sched::Splitter> splitter_for(sched::StrategyKind kind) {
  sched::StrategyParams p;
  p.kind = kind;
  return sched::make_splitter(p);
}

double now_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Creates `path` if no one has: true for the one caller that did.
bool create_exclusive(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::close(fd);
  return true;
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
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw InputError(
        fmt::format("--jobs: could not start worker process {}: {}", k, std::strerror(rc)));
  return pid;
}

// One execution of a piece, as the fold needs it.
struct PieceExecution {
  std::uint64_t steps = 0;
  std::uint64_t fingerprint = 0;
  bool redundant = false;
  std::uint64_t settled = 0;
};

// A failing execution of a piece: where, and its decisions to replay.
struct PieceFailure {
  std::uint64_t execution = 0;
  std::string kind;
  std::vector<sched::ReplayStep> steps;
};

struct Piece {
  bool present = false;   // its file was written
  bool complete = false;  // its search ran to its end
  std::vector<PieceExecution> executions;
  std::optional<PieceFailure> failure;  // the one that ended it
  std::optional<PieceFailure> other;    // --expect deadlock: another failure, searched past
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

std::string piece_text(const Piece& p) {
  Json executions = Json::array();
  for (const PieceExecution& e : p.executions)
    executions.push_back({e.steps, e.fingerprint, e.redundant ? 1 : 0, e.settled});
  return Json{{"complete", p.complete},
              {"executions", executions},
              {"failure", p.failure ? failure_json(*p.failure) : Json()},
              {"other", p.other ? failure_json(*p.other) : Json()}}
      .dump();
}

Piece piece_from(const fs::path& path) {
  Piece p;
  if (!fs::exists(path)) return p;
  try {
    const Json j = Json::parse(read_text(path));
    p.present = true;
    p.complete = j.at("complete").get<bool>();
    for (const Json& e : j.at("executions"))
      p.executions.push_back({e.at(0).get<std::uint64_t>(), e.at(1).get<std::uint64_t>(),
                              e.at(2).get<int>() != 0, e.at(3).get<std::uint64_t>()});
    if (!j.at("failure").is_null()) p.failure = failure_from(j.at("failure"));
    if (!j.at("other").is_null()) p.other = failure_from(j.at("other"));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(
        fmt::format("{}: a worker's record is damaged: {}", path.string(), e.what()));
  }
  return p;
}

PieceFailure failure_of(std::uint64_t execution, const Result& r) {
  const auto worst = worst_failure(r);
  return {execution, worst != r.findings.end() ? worst->kind : std::string("failure"),
          r.replay_steps()};
}

fs::path piece_path(const fs::path& dir, std::size_t i) {
  return dir / fmt::format("piece-{}.json", i);
}
fs::path failed_path(const fs::path& dir, std::size_t i) {
  return dir / fmt::format("failed-{}", i);
}

// Whether a subtree before `i` failed: the search stops at its first failure, so nothing after it
// counts.
bool failed_before(const fs::path& dir, std::size_t i) {
  for (std::size_t j = 0; j < i; ++j)
    if (fs::exists(failed_path(dir, j))) return true;
  return false;
}

std::uint64_t worker_progress(const fs::path& dir, unsigned jobs) {
  std::uint64_t sum = 0;
  for (unsigned k = 0; k < jobs; ++k) {
    const std::string text = read_text(dir / fmt::format("worker-{}", k) / "progress");
    if (!text.empty()) sum += std::strtoull(text.c_str(), nullptr, 10);
  }
  return sum;
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
  std::vector<pid_t> workers;
  for (unsigned k = 0; k < a.jobs; ++k) workers.push_back(spawn_worker(dir, k));
  const double deadline = a.time_limit > 0 ? now_epoch() + a.time_limit : 0;
  auto stop_workers = [&] { write_file_atomic(dir / "stop", "stop\n"); };

  // The top part: the first depth, doubling from kFirstDepth, with kLiveSubtreesPerWorker leaves
  // per worker, or whole executions as leaves. Each depth is enumerated afresh (one short
  // execution per leaf); a depth whose leaves pass kMaxSubtreesPerWorker per worker (and
  // kMaxSubtreesAtLeast) is given up for the one before it, so that the top part costs a few
  // short executions per worker. Every leaf is cut at the same depth (the model's split,
  // docs/scale.md): cut at uneven depths, by counting the decisions that branch, the search lost
  // classes on the stand-in.
  const auto splitter = splitter_for(a.strategy);
  const Options lo = runtime_options(a, false);
  const LiveRunner runner(subject, lo, "", nullptr);
  SplitSearch out{
      Outcome(StopAtFailure(a.expect == results::LiveExpect::kDeadlock, false)), {}, ""};
  std::unique_ptr<sched::TopPart> top;
  std::size_t depth = 0;
  std::uint64_t top_executions = 0;
  if (std::optional<Result> r = warm_up(runner, a.strategy)) {  // one process's execution 0
    stop_workers();
    out.outcome.add(r->choices.size(), handoff_fingerprint(*r));
    out.outcome.kept.keep(0, *r);
    out.outcome.seconds = elapsed();
    out.strategy = fmt::format("{}, split over {} worker processes, stopped at its first execution",
                               splitter->describe(0, 0), a.jobs);
    return out;
  }
  for (std::size_t d = kFirstDepth;; d *= 2) {
    std::unique_ptr<sched::TopPart> part = splitter->top_part(d);
    bool overflow = false;
    for (std::uint64_t i = 0;; ++i) {
      std::optional<Result> r = runner.run(part->enumerate(), i);
      if (!r) break;
      ++top_executions;
      if (r->hung) {  // threads are stuck in this process: this execution is the result
        stop_workers();
        out.outcome.kept.keep(0, *r);
        out.outcome.add(r->choices.size(), handoff_fingerprint(*r));
        out.outcome.seconds = elapsed();
        out.strategy = fmt::format("{}, split over {} worker processes, stopped in its top part",
                                   splitter->describe(d, 0), a.jobs);
        return out;
      }
      if (top && part->subtrees().size() >
                     std::max<std::uint64_t>(kMaxSubtreesAtLeast, kMaxSubtreesPerWorker * a.jobs)) {
        overflow = true;
        break;
      }
    }
    if (overflow) break;  // the depth before it
    top = std::move(part);
    depth = d;
    if (top->subtrees().size() >= kLiveSubtreesPerWorker * a.jobs || top->deep_enough(a.jobs) ||
        d >= kMaxDepth || (stop && stop()))
      break;
  }
  if (stop && stop()) stop_workers();
  const sched::Subtrees subtrees = top->subtrees();
  Json list = Json::array();
  for (const auto& s : subtrees) list.push_back(splitter->save(*s));
  write_file_atomic(dir / "subtrees.json",
                    Json{{"hash", info.hash},
                         {"cap", a.executions},
                         {"deadline", deadline},
                         {"expect_deadlock", a.expect == results::LiveExpect::kDeadlock},
                         {"subtrees", list}}
                        .dump());

  // Wait for the workers.
  std::vector<int> status(workers.size(), -1);
  std::size_t running = workers.size();
  bool interrupted = false;
  while (running > 0) {
    for (std::size_t k = 0; k < workers.size(); ++k) {
      if (status[k] != -1) continue;
      int st = 0;
      if (::waitpid(workers[k], &st, WNOHANG) == workers[k]) {
        status[k] = st;
        --running;
      }
    }
    if (!interrupted && stop && stop()) {
      interrupted = true;
      stop_workers();
    }
    if (progress) progress(worker_progress(dir, a.jobs), a.executions);
    if (running > 0) std::this_thread::sleep_for(kPoll);
  }

  // Fold the pieces in the single-process order.
  sched::SplitOrder order(a.executions);
  std::uint64_t redundant = 0;
  std::optional<PieceFailure> first;
  std::optional<PieceFailure> other;
  std::uint64_t first_at = 0;
  std::uint64_t other_at = 0;
  bool lost = false;
  for (std::size_t i = 0; i < subtrees.size(); ++i) {
    const Piece p = piece_from(piece_path(dir, i));
    lost = lost || !p.present;
    const std::uint64_t offset = order.add(p.executions.size(), p.complete);
    const std::uint64_t counted = std::min<std::uint64_t>(order.room(offset), p.executions.size());
    for (std::uint64_t e = 0; e < counted; ++e) {
      const PieceExecution& x = p.executions[e];
      if (p.failure && e > p.failure->execution) break;
      out.outcome.add(x.steps, x.fingerprint);
      out.outcome.kept.settled += x.settled;
      redundant += x.redundant ? 1 : 0;
    }
    if (p.other && p.other->execution < counted && !other) {
      other = p.other;
      other_at = offset + p.other->execution;
    }
    if (p.failure && p.failure->execution < counted) {
      first = p.failure;
      first_at = offset + p.failure->execution;
      break;  // one process stops at its first failure
    }
  }
  for (std::size_t k = 0; k < workers.size(); ++k) {
    if (WIFEXITED(status[k]) && WEXITSTATUS(status[k]) == 2)
      throw InputError(fmt::format("--jobs: worker process {} refused its part: {}", k,
                                   read_text(dir / fmt::format("worker-{}.log", k))));
  }
  out.classes = {out.outcome.executions - redundant, redundant, 0};
  out.strategy = fmt::format("{} ({} short executions), {} worker processes",
                             splitter->describe(depth, subtrees.size()), top_executions, a.jobs);

  // Replay the failure kept, in full, here.
  const auto replay = [&](const PieceFailure& f, std::uint64_t at) {
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
    replay(*first, first_at);
  } else if (other) {
    replay(*other, other_at);
  }
  out.outcome.kept.finish();
  out.outcome.seconds = elapsed();
  if (first) {
    out.outcome.stop = sched::StopReason::kBudget;  // the keep policy ended it
  } else if (order.exhausted() && !lost) {
    out.outcome.stop = sched::StopReason::kExhausted;
  } else if (interrupted) {
    out.outcome.stop = sched::StopReason::kInterrupted;
  } else if (deadline > 0 && now_epoch() >= deadline) {
    out.outcome.stop = sched::StopReason::kTimeLimit;
  } else {
    out.outcome.stop = sched::StopReason::kBudget;
  }
  if (lost && !interrupted && !(deadline > 0 && now_epoch() >= deadline)) {
    std::string ended;
    for (std::size_t k = 0; k < workers.size(); ++k) {
      if (WIFEXITED(status[k]) && WEXITSTATUS(status[k]) <= kExitFound) continue;
      ended += fmt::format("{}worker {} ({}, {})", ended.empty() ? "" : ", ", k,
                           WIFSIGNALED(status[k]) ? fmt::format("signal {}", WTERMSIG(status[k]))
                                                  : fmt::format("exit {}", WEXITSTATUS(status[k])),
                           (dir / fmt::format("worker-{}.log", k)).string());
    }
    fmt::print(stderr,
               "racelab: {} subtree(s) of the split were not searched ({}): the search is not "
               "exhaustive\n",
               std::count_if(subtrees.begin(), subtrees.end(),
                             [&, i = std::size_t{0}](const auto&) mutable {
                               return !fs::exists(piece_path(dir, i++));
                             }),
               ended.empty() ? "a worker process ended early" : ended);
  }
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
  // Wait for the subtrees.
  while (!fs::exists(dir / "subtrees.json")) {
    if (fs::exists(dir / "stop")) return kExitOk;
    std::this_thread::sleep_for(kPoll);
  }
  const Json plan = Json::parse(read_text(dir / "subtrees.json"));
  if (plan.at("hash").get<std::string>() != info.hash) {
    fmt::print(stderr,
               "racelab: --split-worker: the coordinator runs another subject (content hash {}, "
               "here {})\n",
               plan.at("hash").get<std::string>(), info.hash);
    return kExitBadInput;
  }
  const std::uint64_t cap = plan.at("cap").get<std::uint64_t>();
  const double deadline = plan.at("deadline").get<double>();
  const bool expect_deadlock = plan.at("expect_deadlock").get<bool>();
  const auto splitter = splitter_for(a.strategy);
  const LiveRunner runner(subject, runtime_options(a, false), "", nullptr);
  if (std::optional<Result> r = warm_up(runner, a.strategy); r && r->hung) return kExitFound;
  std::uint64_t done = 0;
  const auto& list = plan.at("subtrees");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (fs::exists(dir / "stop") || failed_before(dir, i)) break;
    if (!create_exclusive(dir / fmt::format("claim-{}", i))) continue;
    fmt::print(stderr, "racelab: worker: subtree {}\n", i);
    auto search = splitter->load(list[i].get<std::string>())->search();
    StopAtFailure keep(expect_deadlock, false);
    Piece p;
    bool hung = false;
    for (std::uint64_t e = 0;; ++e) {
      if (e >= cap || fs::exists(dir / "stop") || (deadline > 0 && now_epoch() >= deadline)) break;
      const std::uint64_t redundant_before = search->classes() ? search->classes()->redundant : 0;
      std::optional<Result> r = runner.run(*search, e);
      if (!r) {
        p.complete = true;
        break;
      }
      const std::uint64_t redundant_after = search->classes() ? search->classes()->redundant : 0;
      p.executions.push_back({r->choices.size(), handoff_fingerprint(*r),
                              redundant_after > redundant_before, r->settled});
      write_file_atomic(wdir / "progress", std::to_string(++done));
      const bool had_other = keep.other.has_value();
      const PieceFailure failure = failure_of(e, *r);
      hung = r->hung;
      if (!keep.keep(e, *r)) {
        p.failure = failure;
        break;
      }
      if (!had_other && keep.other) p.other = failure;
      if (hung) break;
    }
    write_file_atomic(piece_path(dir, i), piece_text(p));
    if (p.failure) create_exclusive(failed_path(dir, i));
    if (hung) return kExitFound;  // threads are stuck in this process
  }
  return kExitOk;
}

}  // namespace racelab::live
