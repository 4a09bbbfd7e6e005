#include "report/schedule_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/errors.h"
#include "util/files.h"

namespace racelab::report {

using nlohmann::json;
using sched::kScheduleFormat;
using sched::kScheduleVersion;
using sched::Schedule;

namespace {

// A configuration as JSON of either kind: ordered_json keeps the subject's order (a report's
// "parameters"), json sorts the keys (a schedule's, as the files have always had them).
template <typename J>
J subject_config_to(const sched::SubjectConfig& c) {
  J j = J::object();
  // Not a structured binding: clang before 16 cannot capture one (the sanitizer builds use 14).
  for (const auto& entry : c.entries) {
    const auto& key = entry.first;
    std::visit([&j, &key](const auto& v) { j[key] = v; }, entry.second);
  }
  return j;
}

// `strategy.parameters` as written: a model schedule's search parameters, or a live schedule's
// job configuration. Both in alphabetical key order, as the files have always had them (they were
// held as a key-sorted nlohmann::json before).
json parameters_json(const Schedule& s) {
  if (sched::is_live_subject(s.subject_name)) return subject_config_to<json>(s.live_configuration);
  return {{"depth", s.parameters.depth},
          {"iterations", s.parameters.iterations},
          {"max_preemptions", s.parameters.max_preemptions},
          {"shrunk", s.parameters.shrunk}};
}

}  // namespace

nlohmann::ordered_json subject_config_json(const sched::SubjectConfig& c) {
  return subject_config_to<nlohmann::ordered_json>(c);
}

sched::SubjectConfig subject_config_from_json(const nlohmann::json& object, const std::string& at) {
  sched::SubjectConfig c;
  for (const auto& [key, value] : object.items()) {
    const std::string where = at + "." + key;
    if (value.is_boolean()) {
      c.set(key, value.get<bool>());
    } else if (value.is_number_integer() &&
               (value.is_number_unsigned()
                    ? value.get<std::uint64_t>() <=
                          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    : true)) {
      c.set(key, value.get<std::int64_t>());
    } else if (value.is_string()) {
      c.set(key, value.get<std::string>());
    } else if (value.is_array() && std::all_of(value.begin(), value.end(),
                                               [](const json& e) { return e.is_string(); })) {
      c.set(key, value.get<std::vector<std::string>>());
    } else if (value.is_array() && std::all_of(value.begin(), value.end(), [](const json& e) {
                 return e.is_number_integer() &&
                        (!e.is_number_unsigned() ||
                         e.get<std::uint64_t>() <=
                             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
               })) {
      c.set(key, value.get<std::vector<std::int64_t>>());
    } else {
      throw InputError(fmt::format(
          "{}: a live job's setting is true or false, an integer, a string, or a list of "
          "integers or of strings; got {}",
          where, value.dump()));
    }
  }
  return c;
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
  head["strategy"]["parameters"] = parameters_json(s);
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
  std::int64_t integer(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() &&
         v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))) {
      fail(path.empty() ? key : path + "." + key, "expected an integer");
    }
    return v.get<std::int64_t>();
  }
  bool boolean(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_boolean()) fail(path.empty() ? key : path + "." + key, "expected true or false");
    return v.get<bool>();
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
  if (s.subject_name.starts_with(sched::kLiveSubjectPrefix) &&
      !sched::is_live_subject(s.subject_name)) {
    r.fail("subject.name",
           fmt::format("unknown live subject \"{}\"; racelab's are {}, {}", s.subject_name,
                       sched::kLiveTorchSubject, sched::kLivePythonSubject));
  }
  s.subject_hash = r.str(subject, "subject", "hash");
  s.subject_path = r.str(subject, "subject", "path");
  const json& strategy = r.object(doc, "", "strategy");
  s.strategy_name = r.str(strategy, "strategy", "name");
  s.strategy_description = r.str(strategy, "strategy", "description");
  s.seed = r.uint(strategy, "strategy", "seed");
  s.execution = r.uint(strategy, "strategy", "execution");
  const json& parameters = r.object(strategy, "strategy", "parameters");
  if (sched::is_live_subject(s.subject_name)) {
    // The job's configuration: the live subject reads it (live/torch from_config, live/python
    // job_from_config).
    s.live_configuration = subject_config_from_json(parameters, origin + ": strategy.parameters");
  } else {
    const std::string at = "strategy.parameters";
    s.parameters.depth = r.integer(parameters, at, "depth");
    s.parameters.iterations = r.uint(parameters, at, "iterations");
    s.parameters.max_preemptions = r.integer(parameters, at, "max_preemptions");
    s.parameters.shrunk = r.boolean(parameters, at, "shrunk");
  }
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

}  // namespace racelab::report
