// check.json (check_json.h).
#include "report/check_json.h"

#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/document.h"
#include "util/spawn.h"

namespace racelab::report {

using namespace results;  // the check's result types and the words about them

namespace {

// A traceback as check.json has always given it: each frame's keys in alphabetical order (as the
// live report's frames read back into a std::map-backed json came out).
nlohmann::ordered_json stack_json(const std::vector<sched::StackFrame>& stack) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const sched::StackFrame& f : stack)
    out.push_back({{"file", f.file}, {"function", f.function}, {"line", f.line}, {"user", f.user}});
  return out;
}

// How a search stopped, its report.json's word ("" where it gave none).
const char* stop_word(const std::optional<sched::StopReason>& stop) {
  return stop ? sched::stop_reason_name(*stop) : "";
}

}  // namespace

nlohmann::ordered_json check_json(const results::CheckResult& r, const results::CheckOptions& o) {
  nlohmann::ordered_json j;
  j["format"] = kCheckFormat;
  j["version"] = kCheckVersion;
  j["script"] = o.script;
  j["args"] = o.args;
  j["interpose"] = o.interpose;
  j["python"] =
      o.python.env.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(o.python.env);
  j["refuse_other_torch"] = o.python.refuse_other_torch;
  j["strategy"] = sched::strategy_name(o.strategy);
  j["seed"] = o.seed;
  j["executions"] = o.executions;
  j["prove"] = o.prove;
  j["proof_executions"] = o.proof_executions;
  j["native_runs"] = o.native_runs;
  j["seconds"] = r.seconds;
  j["passed"] = r.exit_code() == 0;
  // Only where an interrupt stopped the check (SIGINT, SIGTERM): the variants it never started.
  if (r.interrupted) {
    j["interrupted"] = true;
    j["not_run"] = r.not_run;
  }
  j["variants"] = nlohmann::ordered_json::array();
  for (const VariantResult& v : r.variants) {
    nlohmann::ordered_json races{
        {"verdict", race_state_name(v.races.state)},
        {"summary", race_summary(v.races)},
        {"executions", v.races.executions},
        {"stopped_by", stop_word(v.races.stopped_by)},
        {"kinds_seen", v.races.kinds},
        {"kind", v.races.kind},
        {"message", v.races.message},
        {"execution", v.races.execution},
        {"schedule", v.races.schedule},
        {"stack", stack_json(v.races.stack)},
        {"reason", v.races.reason},
        {"command", shell_line(v.races.argv)},
        {"versions_outside", v.races.outside_verified.empty()
                                 ? nlohmann::ordered_json(nullptr)
                                 : nlohmann::ordered_json(v.races.outside_verified)},
        {"seconds", v.races.seconds}};
    if (v.races.proof.ran) {
      const RaceVerdict::Proof& p = v.races.proof;
      races["proof"] = {{"strategy", sched::live_prover().name},
                        {"exhausted", p.exhausted},
                        {"executions", p.executions},
                        {"cap", p.budget},
                        {"classes", p.classes},
                        {"stopped_by", stop_word(p.stopped_by)},
                        {"covers", p.covers},
                        {"command", shell_line(p.argv)},
                        {"seconds", p.seconds}};
    } else {
      races["proof"] = nullptr;
    }
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
        {"against", v.memory.against},
        {"explanation", v.memory.explanation},
        {"command", shell_line(v.memory.argv)},
        {"seconds", v.memory.seconds}};
    nlohmann::ordered_json native{{"runs", v.native.runs},
                                  {"failed", v.native.failed},
                                  {"summary", v.native.failed == 0 ? "" : races_line(v)},
                                  {"kind", v.native.kind},
                                  {"message", v.native.message},
                                  {"why", v.native.failed == 0 ? "" : kNativeOnlyWhy},
                                  {"stack", stack_json(v.native.stack)},
                                  {"log", v.native.log},
                                  {"command", shell_line(v.native.argv)},
                                  {"seconds", v.native.seconds}};
    nlohmann::ordered_json variant{{"variant", v.name},    {"args", v.args},
                                   {"passed", v.passed()}, {"verdict", v.verdict_word()},
                                   {"dir", v.dir},         {"races", races},
                                   {"native", native},     {"memory", memory}};
    // The variant an interrupt cut short: the step it came in and the steps it left out.
    if (!v.interrupted_in.empty()) {
      variant["interrupted_in"] = v.interrupted_in;
      variant["not_run"] = v.not_run;
    }
    j["variants"].push_back(variant);
  }
  return j;
}

}  // namespace racelab::report
