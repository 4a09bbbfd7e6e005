#include "sched/coverage.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace racelab::sched {

namespace {

// Object families: ids are per family, so the family goes into the key's top bits.
enum Family : std::uint64_t { kMutex = 1, kEvent, kQueue, kJob, kVar };

std::uint64_t key(Family f, std::int32_t object) {
  return (f << 32) | static_cast<std::uint32_t>(object);
}

// One word into the running hash: a multiply and a fold (the finaliser of MurmurHash3's 64-bit
// variant) rather than FNV-1a's eight byte steps. A fingerprint names a class within a run and
// between shards of one racelab version (racelab merge); nothing stores it across versions.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h = (h ^ v) * 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

// resource_key's body, 0 for none (no key is 0: families start at 1), for the fingerprint's loop
// to inline.
std::uint64_t op_key(const Op& op) {
  if (op.object < 0) return 0;
  switch (op.kind) {
    case OpKind::kLock:
    case OpKind::kTryLock:
    case OpKind::kUnlock:
      return key(kMutex, op.object);
    case OpKind::kEventSet:
    case OpKind::kEventWait:
      return key(kEvent, op.object);
    case OpKind::kSubmit:
    case OpKind::kTake:
    case OpKind::kClose:
      return key(kQueue, op.object);
    case OpKind::kComplete:
    case OpKind::kWaitJob:
      return key(kJob, op.object);
    case OpKind::kRead:
    case OpKind::kWrite:
      return key(kVar, op.object);
    case OpKind::kStart:
    case OpKind::kPoint:
    case OpKind::kJoin:  // live events carry their own resource keys (live::Event)
    case OpKind::kReturn:
      break;
  }
  return 0;
}

}  // namespace

std::optional<std::uint64_t> resource_key(const Op& op) {
  const std::uint64_t k = op_key(op);
  if (k == 0) return std::nullopt;
  return k;
}

std::uint64_t touch_key(const Touch& touch) { return key(kVar, touch.var); }

bool writes(const Op& op) {
  return op.kind != OpKind::kRead && op.kind != OpKind::kEventWait && op.kind != OpKind::kWaitJob;
}

namespace {

// Scratch reused by every fingerprint of one thread (workers fingerprint their own executions):
// the fingerprint runs once per execution, and allocating its buffers each time cost more than
// hashing (docs/performance.md, "Against Relacy").
struct FingerprintScratch {
  std::vector<Access> accesses;
  std::vector<std::uint32_t> order;   // indices into accesses, by (resource, index)
  std::vector<std::uint32_t> starts;  // counting sort: where each resource's accesses start
  std::vector<std::uint64_t> readers;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> pairs;  // the general sort's keys
};

FingerprintScratch& scratch() {
  thread_local FingerprintScratch s;
  return s;
}

// The largest object id the counting sort takes; a model's objects and jobs are numbered from 0
// and are a few dozen, a live subject's keys are hashes (they take the general sort).
constexpr std::uint64_t kDenseObjects = 1u << 16;

// Sorts the indices of `accesses` by (resource, index) into s.order: the order a stable sort by
// resource gives. Where every key is a model key (key() above: a family in the top bits, a small
// object id below), a counting sort over (family, object), a pass over the accesses and one over
// the resources; otherwise the general sort of (resource, index) pairs.
void order_by_resource(const std::vector<Access>& accesses, FingerprintScratch& s) {
  auto& order = s.order;
  order.resize(accesses.size());
  std::uint64_t max_object[kVar + 1] = {};
  bool dense = true;
  for (const Access& a : accesses) {
    const std::uint64_t family = a.resource >> 32, object = a.resource & 0xffffffffULL;
    if (family < kMutex || family > kVar || object >= kDenseObjects) {
      dense = false;
      break;
    }
    max_object[family] = std::max(max_object[family], object + 1);
  }
  if (!dense) {
    auto& pairs = s.pairs;
    pairs.clear();
    for (std::size_t i = 0; i < accesses.size(); ++i)
      pairs.emplace_back(accesses[i].resource, static_cast<std::uint32_t>(i));
    std::sort(pairs.begin(), pairs.end());
    for (std::size_t i = 0; i < pairs.size(); ++i) order[i] = pairs[i].second;
    return;
  }
  // Bucket b of family f's object o is base[f] + o; families in key order, then objects.
  std::uint64_t base[kVar + 1] = {};
  std::uint64_t buckets = 0;
  for (std::uint64_t f = kMutex; f <= kVar; ++f) {
    base[f] = buckets;
    buckets += max_object[f];
  }
  auto bucket = [&](const Access& a) {
    return base[a.resource >> 32] + (a.resource & 0xffffffffULL);
  };
  auto& starts = s.starts;
  starts.assign(buckets + 1, 0);
  for (const Access& a : accesses) ++starts[bucket(a) + 1];
  for (std::size_t b = 1; b <= buckets; ++b) starts[b] += starts[b - 1];
  for (std::size_t i = 0; i < accesses.size(); ++i)
    order[starts[bucket(accesses[i])]++] = static_cast<std::uint32_t>(i);
}

// The fingerprint of `accesses` (in execution order); the rest of `s` is scratch.
std::uint64_t fingerprint_of(const std::vector<Access>& accesses, FingerprintScratch& s) {
  // Per resource, in step order: the writers in order, a run of one thread's writes counted
  // once, and between two writes the set of threads that read (their order among themselves does
  // not matter: reads commute).
  order_by_resource(accesses, s);
  const auto& order = s.order;
  std::uint64_t h = 0xcbf29ce484222325ULL;
  constexpr std::uint64_t kNobody = ~std::uint64_t{0};
  auto& readers = s.readers;
  readers.clear();
  std::uint64_t last_writer = kNobody;
  auto flush_readers = [&] {
    if (readers.empty()) return;
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    h = mix(h, 0x5245414453ULL);  // "READS"
    for (std::uint64_t t : readers) h = mix(h, t + 1);
    readers.clear();
    last_writer = kNobody;
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Access& a = accesses[order[i]];
    if (i == 0 || a.resource != accesses[order[i - 1]].resource) {
      flush_readers();
      last_writer = kNobody;
      h = mix(h, a.resource);
    }
    if (!a.write) {
      readers.push_back(a.thread);
      continue;
    }
    flush_readers();
    if (a.thread == last_writer) continue;
    last_writer = a.thread;
    h = mix(h, a.thread + 1);
  }
  flush_readers();
  return h;
}

}  // namespace

std::uint64_t handoff_fingerprint(const Execution& exec) {
  FingerprintScratch& s = scratch();
  std::vector<Access>& accesses = s.accesses;
  accesses.clear();
  const auto& steps = exec.steps();
  const auto thread = [](ThreadId t) { return static_cast<std::uint64_t>(t); };
  for (std::uint64_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    // A queue orders its submits; a take is ordered only with the submit of the job it takes
    // (through the job), as dpor's dependence has it, and an empty take after the close.
    if (st.op.kind == OpKind::kSubmit) {
      accesses.push_back({key(kQueue, st.op.object), thread(st.thread), true});
      accesses.push_back(
          {key(kJob, static_cast<std::int32_t>(st.result)), thread(st.thread), true});
    } else if (st.op.kind == OpKind::kTake) {
      accesses.push_back(
          st.result >= 0
              ? Access{key(kJob, static_cast<std::int32_t>(st.result)), thread(st.thread), true}
              : Access{key(kQueue, st.op.object), thread(st.thread), false});
    } else if (const std::uint64_t r = op_key(st.op)) {
      accesses.push_back({r, thread(st.thread), writes(st.op)});
    }
    for (const Touch& t : exec.step_touches(i))
      accesses.push_back({touch_key(t), thread(steps[i].thread), t.write});
  }
  return fingerprint_of(accesses, s);
}

std::uint64_t handoff_fingerprint(std::vector<Access> accesses) {
  return fingerprint_of(accesses, scratch());
}

std::string coverage_line(const CoverageSummary& c, bool sampling) {
  std::string line =
      fmt::format("interleaving classes: {}{} seen in {} executions (per-resource hand-off order)",
                  c.saturated ? "at least " : "", c.classes, c.executions);
  if (!sampling || c.saturated || c.executions == 0) return line;
  return line + fmt::format(
                    "; {} seen once: next execution new with p ~ {:.3g} (Good-Turing), "
                    "~{:.0f} classes in all (Chao1), ~{:.0f} unseen",
                    c.seen_once, c.unseen_probability, c.estimated_classes,
                    c.estimated_classes - static_cast<double>(c.classes));
}

double good_turing_unseen(std::uint64_t executions, std::uint64_t seen_once) {
  return executions == 0 ? 0.0 : static_cast<double>(seen_once) / static_cast<double>(executions);
}

double chao1(std::uint64_t seen, std::uint64_t seen_once, std::uint64_t seen_twice) {
  const double f1 = static_cast<double>(seen_once);
  const double f2 = static_cast<double>(seen_twice);
  if (seen_twice > 0) return static_cast<double>(seen) + f1 * f1 / (2 * f2);
  return static_cast<double>(seen) + f1 * (f1 - 1) / 2;
}

void Coverage::add(std::uint64_t fingerprint) { add(fingerprint, 1); }

void Coverage::add(std::uint64_t fingerprint, std::uint64_t count) {
  executions_ += count;
  auto it = counts_.find(fingerprint);
  if (it != counts_.end()) {
    it->second += count;
  } else if (counts_.size() < kMaxClasses) {
    counts_.emplace(fingerprint, count);
  } else {
    saturated_ = true;
  }
}

void Coverage::merge(const Coverage& other) {
  saturated_ = saturated_ || other.saturated_;
  // Executions of classes beyond the cap were counted, not stored.
  std::uint64_t stored = 0;
  for (const auto& [fp, n] : other.counts_) {
    add(fp, n);
    stored += n;
  }
  executions_ += other.executions_ - stored;
}

CoverageSummary Coverage::summary() const {
  CoverageSummary s;
  s.executions = executions_;
  s.classes = classes();
  s.seen_once = seen_once();
  s.seen_twice = seen_twice();
  s.saturated = saturated_;
  s.unseen_probability = good_turing_unseen(s.executions, s.seen_once);
  s.estimated_classes = chao1(s.classes, s.seen_once, s.seen_twice);
  return s;
}

std::uint64_t Coverage::seen_once() const {
  std::uint64_t n = 0;
  for (const auto& [fp, c] : counts_) n += c == 1;
  return n;
}

std::uint64_t Coverage::seen_twice() const {
  std::uint64_t n = 0;
  for (const auto& [fp, c] : counts_) n += c == 2;
  return n;
}

}  // namespace racelab::sched
