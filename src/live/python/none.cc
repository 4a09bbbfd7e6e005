// Stand-in for builds without Python development files and pybind11.
#include "live/python/bridge.h"
#include "util/errors.h"

namespace racelab::live::python {

bool built_with_python() { return false; }
std::string build_description() { return {}; }

std::string interposition_table(const std::string&) {
  throw InputError(
      "this racelab was built without the Python bridge: install python3-dev and pybind11-dev "
      "and rebuild");
}

std::unique_ptr<Subject> make_subject(const Job&, const std::string&, VersionCheck*) {
  interposition_table("");
  return nullptr;
}

std::uint32_t hash_seed_from_environment() { return 0; }
std::string job_json(const Job&) { return "{}"; }
sched::SubjectConfig job_config(const Job&) { return {}; }
Job job_from_config(const sched::SubjectConfig&) { return {}; }
std::vector<std::tuple<std::string, bool, std::string>> describe_environment(const Job&) {
  const std::string why = "racelab was built without the Python bridge (python3-dev, pybind11-dev)";
  return {{"python", false, why}, {"torch", false, why}, {"table", false, why}};
}
void dump_stacks(const std::string&) {}
void arm_crash_report(const std::string&) {}
void start_alloc_capture(const Job&, const std::string&, const std::string&) {
  interposition_table("");
}
std::vector<std::string> finish_alloc_capture(const std::string&) { return {}; }
PlainRun run_plain(const Job&, double) {
  interposition_table("");
  return {};
}

}  // namespace racelab::live::python
