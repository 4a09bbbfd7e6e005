#include "alloc/warm_phase.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace racelab::alloc {

namespace {

// "iteration 0", "iterations 0-5", "none".
std::string span(const std::vector<std::string>& labels, std::size_t rows,
                 const std::string& unit) {
  if (rows == 0) return "none";
  if (rows == 1) return fmt::format("{} {}", unit, labels.front());
  return fmt::format("{}s {}-{}", unit, labels.front(), labels[rows - 1]);
}

WarmPhase assumed(const std::vector<std::string>& labels, const std::string& unit,
                  const std::string& why) {
  WarmPhase w;
  w.source = WarmPhase::Source::kAssumed;
  w.rows = std::min<std::size_t>(1, labels.size());
  w.text = "assumed: " + span(labels, w.rows, unit);
  w.description = fmt::format(
      "assumed to be {} (a single-thread loop that warms up in its first {}): {}; --settle K "
      "sets it",
      span(labels, w.rows, unit), unit, why);
  w.reasons.assign(w.rows, "the assumed warm phase");
  return w;
}

// A thread that stepped an optimizer on the device.
struct Stepper {
  std::string name;
  std::vector<std::size_t> rows;  // the iterations holding its steps, ascending, once each
  bool drafter = false;           // took a step that was not an optimizer's first
};

}  // namespace

WarmPhase find_warm_phase(const std::vector<std::vector<Step>>& row_steps,
                          const std::vector<std::string>& labels, const std::string& unit,
                          const std::string& unknown, std::optional<std::size_t> settle) {
  const std::size_t n = labels.size();
  if (settle) {
    WarmPhase w;
    w.source = WarmPhase::Source::kSettle;
    w.rows = std::min(*settle, n);
    w.text = fmt::format("--settle {}: {}", *settle, span(labels, w.rows, unit));
    w.description = fmt::format("the first {} {}s, as --settle {} says", *settle, unit, *settle);
    w.reasons.assign(w.rows, fmt::format("inside --settle {}", *settle));
    return w;
  }
  if (!unknown.empty()) return assumed(labels, unit, unknown);

  std::vector<std::string> reasons(n);
  std::map<std::int64_t, Stepper> threads;  // by the capture's thread number
  std::vector<std::string> first_at;        // labels of optimizers' first steps
  std::size_t end = 0;                      // the warm phase is [0, end)
  bool any_step = false;
  for (std::size_t k = 0; k < n && k < row_steps.size(); ++k) {
    for (const Step& s : row_steps[k]) {
      any_step = true;
      Stepper& t = threads[s.thread_number];
      if (t.rows.empty()) t.name = s.thread;
      if (t.rows.empty() || t.rows.back() != k) t.rows.push_back(k);
      if (!s.first) {
        t.drafter = true;
        continue;
      }
      // AdamW (as every optimizer with state) allocates its state at its first step.
      if (first_at.empty() || first_at.back() != labels[k]) first_at.push_back(labels[k]);
      end = std::max(end, k + 1);
      if (reasons[k].empty())
        reasons[k] = fmt::format("first step of optimizer {} ({}, thread {})", s.optimizer,
                                 s.optimizer_class, s.thread);
    }
  }
  if (!any_step)
    return assumed(labels, unit, "the capture recorded no optimizer step on this device");

  std::vector<const Stepper*> drafters;
  for (const auto& [number, t] : threads)
    if (t.drafter) drafters.push_back(&t);
  WarmPhase w;
  w.source = WarmPhase::Source::kCapture;
  w.drafters = drafters.size();
  std::vector<std::string> notes;
  if (!first_at.empty())
    notes.push_back(fmt::format("optimizers' first steps at {} {}",
                                first_at.size() == 1 ? unit : unit + "s",
                                fmt::join(first_at, ", ")));
  if (!drafters.empty()) {
    // The row of the last drafter's first step, then each drafter's next step after it.
    std::size_t last_start = 0;
    std::size_t first_start = n;
    for (const Stepper* d : drafters) {
      last_start = std::max(last_start, d->rows.front());
      first_start = std::min(first_start, d->rows.front());
    }
    std::size_t round_end = last_start;
    std::string missing;
    if (drafters.size() > 1) {
      for (const Stepper* d : drafters) {
        auto next = std::upper_bound(d->rows.begin(), d->rows.end(), last_start);
        if (next == d->rows.end()) {
          if (missing.empty()) missing = d->name;
          continue;
        }
        round_end = std::max(round_end, *next);
      }
    }
    const std::size_t all = drafters.size();
    for (std::size_t k = first_start; k <= round_end && k < n; ++k) {
      if (!reasons[k].empty()) continue;
      if (all == 1)
        reasons[k] = fmt::format("the drafter's first step (thread {})", drafters.front()->name);
      else if (k <= last_start)
        reasons[k] = fmt::format("the {} drafters starting", all);
      else
        reasons[k] = fmt::format("the first step with all {} drafters running", all);
    }
    std::vector<std::string> names;
    for (const Stepper* d : drafters) names.push_back(d->name);
    if (all == 1) {
      notes.push_back(fmt::format("one drafter ({}), first step at {} {}", names.front(), unit,
                                  labels[last_start]));
    } else if (missing.empty()) {
      notes.push_back(fmt::format("{} drafters ({}), all running by {} {}", all,
                                  fmt::join(names, ", "), unit, labels[round_end]));
    } else {
      w.ended = false;
      notes.push_back(fmt::format(
          "{} drafters ({}); the run ended before all of them had run at once ({} took no step "
          "after {} {}, where the last drafter took its first)",
          all, fmt::join(names, ", "), missing, unit, labels[last_start]));
    }
    end = std::max(end, round_end + 1);
  } else {
    notes.push_back("no drafter: no thread stepped an optimizer a second time");
  }
  if (!w.ended) end = n;
  w.rows = std::min(end, n);
  w.text = span(labels, w.rows, unit);
  w.description = fmt::format("{} (from the capture: {})", w.text, fmt::join(notes, "; "));
  reasons.resize(w.rows);
  w.reasons = std::move(reasons);
  return w;
}

}  // namespace racelab::alloc
