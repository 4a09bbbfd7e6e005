// The allocator capture and the uncontrolled run of the Python bridge (bridge.h): thin C++ over
// racelab.py's start_capture/finish_capture and racelab_bridge.py's run_plain.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "live/python/bridge.h"
#include "live/python/interpreter.h"
#include "util/errors.h"
#include "util/files.h"

namespace py = pybind11;

namespace racelab::live::python {

namespace {

std::vector<std::string> search_path(const Job& job) {
  if (!job.path.empty()) return job.path;
  return {std::filesystem::absolute(job.script).parent_path().string()};
}

}  // namespace

void start_alloc_capture(const Job& job, const std::string& dir, const std::string& name) {
  start_interpreter(job.hash_seed, job.python);
  ensure_directory(dir);
  py::gil_scoped_acquire gil;
  py::module_ sys = py::module_::import("sys");
  for (const auto& p : search_path(job)) sys.attr("path").attr("insert")(0, p);
  std::string why;
  try {
    why = racelab_module().attr("start_capture")(dir, name).cast<std::string>();
  } catch (py::error_already_set& e) {
    why = python_error_text(e);
  }
  if (!why.empty()) throw InputError(fmt::format("--alloc: {}", why));
}

std::vector<std::string> finish_alloc_capture(const std::string& ended) {
  const auto text = with_gil_within(30, [ended] {
    try {
      std::string out;
      for (const auto& l :
           racelab_module().attr("finish_capture")(ended).cast<std::vector<std::string>>())
        out += l + "\n";
      return out;
    } catch (py::error_already_set& e) {
      return fmt::format("allocator capture not written: {}\n", python_error_text(e));
    }
  });
  if (!text) return {"allocator capture not written: a thread held the GIL for 30 s"};
  std::vector<std::string> lines;
  std::size_t pos = 0;
  for (std::size_t nl; (nl = text->find('\n', pos)) != std::string::npos; pos = nl + 1)
    lines.push_back(text->substr(pos, nl - pos));
  return lines;
}

PlainRun run_plain(const Job& job, double time_limit_s) {
  expect_script(job.script);
  const std::string table = interposition_table(job.interpose);
  start_interpreter(job.hash_seed, job.python);
  {
    py::gil_scoped_acquire gil;
    const std::string bad = bridge_module().attr("check_script")(job.script).cast<std::string>();
    if (!bad.empty()) throw InputError(bad);
  }
  struct State {
    std::atomic<bool> done{false};
    std::mutex m;
    PlainRun run;
    std::string error;
  };
  auto st = std::make_shared<State>();
  const auto start = std::chrono::steady_clock::now();
  const Job j = job;
  const std::vector<std::string> path = search_path(job);
  std::thread([st, j, table, path] {
    {
      py::gil_scoped_acquire gil;
      try {
        py::object parsed = py::module_::import("json").attr("loads")(table);
        auto failures = bridge_module()
                            .attr("run_plain")(j.script, j.args, parsed, path)
                            .cast<std::vector<std::pair<std::string, std::string>>>();
        std::lock_guard g(st->m);
        st->run.failures = std::move(failures);
      } catch (py::error_already_set& e) {
        std::lock_guard g(st->m);
        st->run.failures.push_back({"exception", python_error_text(e)});
      }
    }
    st->done.store(true);
  }).detach();
  while (!st->done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (time_limit_s > 0 && s >= time_limit_s) break;
  }
  std::lock_guard g(st->m);
  PlainRun out = st->run;
  out.finished = st->done.load();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace racelab::live::python
