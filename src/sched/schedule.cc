#include "sched/schedule.h"

#include <fmt/format.h>

#include "racelab/version.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::sched {

using nlohmann::json;

std::vector<ReplayStep> replay_steps(const Execution& exec) {
  std::vector<ReplayStep> out;
  out.reserve(exec.steps().size());
  for (const Step& s : exec.steps())
    out.push_back({exec.thread_name(s.thread), exec.describe(s.op)});
  return out;
}

Schedule make_schedule(const ScheduleSource& source, std::uint64_t execution,
                       const Finding* finding, std::uint64_t preemptions,
                       std::vector<ReplayStep> steps) {
  Schedule s;
  s.racelab_version = kVersion;
  s.subject_name = source.subject_name;
  s.subject_hash = source.subject_hash;
  s.subject_path = source.subject_path;
  s.strategy_name = source.strategy_name;
  s.strategy_description = source.strategy_description;
  s.seed = source.seed;
  s.execution = execution;
  s.parameters = source.parameters;
  if (finding != nullptr) {
    s.finding_kind = finding->kind;
    s.finding_message = finding->message;
  }
  s.preemptions = preemptions;
  s.steps = std::move(steps);
  return s;
}

std::string schedule_to_json(const Schedule& s) {
  nlohmann::ordered_json head = nlohmann::ordered_json::object();
  head["format"] = kScheduleFormat;
  head["version"] = kScheduleVersion;
  head["racelab_version"] = s.racelab_version;
  head["subject"] = nlohmann::ordered_json::object();
  head["subject"]["name"] = s.subject_name;
  head["subject"]["hash"] = s.subject_hash;
  head["subject"]["path"] = s.subject_path;
  head["strategy"] = nlohmann::ordered_json::object();
  head["strategy"]["name"] = s.strategy_name;
  head["strategy"]["description"] = s.strategy_description;
  head["strategy"]["seed"] = s.seed;
  head["strategy"]["execution"] = s.execution;
  head["strategy"]["parameters"] = s.parameters;
  head["finding"] = nlohmann::ordered_json::object();
  head["finding"]["kind"] = s.finding_kind;
  head["finding"]["message"] = s.finding_message;
  head["preemptions"] = s.preemptions;
  // One step per line keeps schedules readable and diffable.
  std::string text = head.dump(2);
  text.erase(text.rfind('}'));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  text += ",\n  \"steps\": [";
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    text += i == 0 ? "\n    " : ",\n    ";
    text += "[" + json(s.steps[i].thread).dump() + ", " + json(s.steps[i].op).dump() + "]";
  }
  text += s.steps.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}

namespace {

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw InputError(fmt::format("{}: {}: {}", origin_, key, problem));
  }

  const json& field(const json& obj, const std::string& path, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(path.empty() ? key : path + "." + key, "missing");
    return *it;
  }
  std::string str(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_string()) fail(path.empty() ? key : path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  std::uint64_t uint(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
      fail(path.empty() ? key : path + "." + key, "expected a non-negative integer");
    }
    return v.get<std::uint64_t>();
  }
  const json& object(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_object()) fail(path.empty() ? key : path + "." + key, "expected an object");
    return v;
  }

 private:
  std::string origin_;
};

}  // namespace

Schedule parse_schedule(std::string_view text, const std::string& origin) {
  Reader r(origin);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(
        fmt::format("{}: not valid JSON at byte {}: {}", origin, e.byte,
                    std::string(e.what()).substr(std::string(e.what()).find(':') + 2)));
  }
  if (!doc.is_object()) r.fail("(document)", "expected a JSON object");
  if (r.str(doc, "", "format") != kScheduleFormat) {
    r.fail("format", fmt::format("expected \"{}\"", kScheduleFormat));
  }
  const std::uint64_t version = r.uint(doc, "", "version");
  if (version != kScheduleVersion) {
    r.fail("version", fmt::format("unsupported schedule version {}; this racelab reads version {}",
                                  version, kScheduleVersion));
  }
  Schedule s;
  s.racelab_version = r.str(doc, "", "racelab_version");
  const json& subject = r.object(doc, "", "subject");
  s.subject_name = r.str(subject, "subject", "name");
  s.subject_hash = r.str(subject, "subject", "hash");
  s.subject_path = r.str(subject, "subject", "path");
  const json& strategy = r.object(doc, "", "strategy");
  s.strategy_name = r.str(strategy, "strategy", "name");
  s.strategy_description = r.str(strategy, "strategy", "description");
  s.seed = r.uint(strategy, "strategy", "seed");
  s.execution = r.uint(strategy, "strategy", "execution");
  s.parameters = r.object(strategy, "strategy", "parameters");
  const json& finding = r.object(doc, "", "finding");
  s.finding_kind = r.str(finding, "finding", "kind");
  s.finding_message = r.str(finding, "finding", "message");
  s.preemptions = r.uint(doc, "", "preemptions");
  const json& steps = r.field(doc, "", "steps");
  if (!steps.is_array()) r.fail("steps", "expected an array");
  s.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json& st = steps[i];
    if (!st.is_array() || st.size() != 2 || !st[0].is_string() || !st[1].is_string()) {
      r.fail(fmt::format("steps[{}]", i), "expected [\"thread\", \"operation\"]");
    }
    s.steps.push_back({st[0].get<std::string>(), st[1].get<std::string>()});
  }
  return s;
}

Schedule read_schedule(const std::string& path) { return parse_schedule(read_file(path), path); }

ExecutionResult run_replay(Subject& subject, ReplayStrategy& replay, const std::string& origin) {
  try {
    return std::move(*run_execution(subject, replay, 0));
  } catch (const ReplayDivergence& e) {
    throw InputError(fmt::format("{}: {}", origin, e.what()));
  }
}

}  // namespace racelab::sched
