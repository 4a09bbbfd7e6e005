// The embedded CPython bridge (see bridge.h). Every call from Python that can park at a
// scheduling point releases the GIL first, so that the thread the scheduler picks next (or a
// foreign thread) can run Python.
#include "live/python/bridge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>
#include <vector>

#include "live/python/interpreter.h"
#include "live/python/versions.h"
#include "racelab/python_embedded.h"
#include "sched/schedule.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/text.h"

namespace py = pybind11;

namespace racelab::live::python {

std::string python_error_text(const py::error_already_set& e) {
  std::string text = first_line(e.what());
  const std::string empty = ": <EMPTY MESSAGE>";
  if (text.size() >= empty.size() &&
      text.compare(text.size() - empty.size(), empty.size(), empty) == 0)
    text.resize(text.size() - empty.size());
  return text;
}

namespace {

class PyLock {
 public:
  // `python`: CPython's `_thread.lock` semantics (any thread may release it; see live.h).
  PyLock(const std::string& name, bool recursive, bool python, bool waiter) : name_(name) {
    Runtime* rt = active_runtime();
    if (rt == nullptr) throw std::runtime_error("racelab RLock made outside a live execution");
    serial_ = execution_serial();
    m_ = python      ? &rt->python_lock(name, waiter)
         : recursive ? &rt->recursive_mutex(name)
                     : &rt->mutex(name);
  }
  // acquire(blocking=False) is a try lock. So is an acquire with a timeout: the scheduler either
  // runs it while the lock is free (it succeeds) or while it is held (the timeout ran out), and
  // both are interleavings a real run can take. `waits_for` says what a blocked acquire waits for.
  bool acquire(bool blocking, double timeout, const std::string& waits_for) {
    if (blocking && timeout < 0 && timeout != -1)
      throw py::value_error("timeout value must be a non-negative number");
    check();
    py::gil_scoped_release release;
    if (!blocking || timeout >= 0) return m_->try_lock();
    m_->lock_waiting_for(waits_for);
    return true;
  }
  void release() {
    check();
    if (m_->python_lock() && !m_->locked()) throw std::runtime_error("release unlocked lock");
    py::gil_scoped_release release;
    m_->unlock();
  }
  bool locked() const {
    check();
    return m_->locked();
  }

 private:
  // The mutex lives in its execution's runtime: once that execution is over, using the lock is
  // an error (a Python exception), not a use of freed memory.
  void check() const {
    if (execution_serial() != serial_)
      throw std::runtime_error(fmt::format(
          "racelab lock {} belongs to an execution that is over (an interposed lock kept "
          "across executions?)",
          name_));
  }
  std::string name_;
  std::uint64_t serial_ = 0;
  Mutex* m_ = nullptr;
};

class PyBlocking {
 public:
  PyBlocking(std::string what, std::string served_by)
      : what_(std::move(what)), served_by_(std::move(served_by)) {}
  void enter() { b_ = std::make_unique<Blocking>(what_, served_by_); }
  void exit() {
    py::gil_scoped_release release;  // leaving the call is a scheduling point
    b_.reset();
  }

 private:
  std::string what_, served_by_;
  std::unique_ptr<Blocking> b_;
};

// A Python callable kept by a C++ thread: released with the GIL held, whichever thread drops it.
std::shared_ptr<py::object> hold(py::object fn) {
  return std::shared_ptr<py::object>(new py::object(std::move(fn)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

// Runs a Python callable on a controlled thread; a Python error becomes a C++ exception (an
// `exception` finding), unless the execution is over and the error is its unwinding.
void call_on_controlled(const std::shared_ptr<py::object>& fn) {
  py::gil_scoped_acquire gil;
  try {
    (*fn)();
  } catch (py::error_already_set& e) {
    if (stopping()) return;
    throw std::runtime_error(python_error_text(e));
  }
}

struct ExecutionOverTag {};

// _racelab.ExecutionOver: what a parking call raises in Python once its execution is over. It
// derives from BaseException, not Exception, so that library code which swallows errors
// (`except Exception:` around torch's eager backward compile) does not keep running the thread.
PyObject* g_execution_over = nullptr;

// Runs a call that may park; the runtime's unwinding becomes ExecutionOver in Python.
template <class F>
decltype(auto) parking(F&& f) {
  try {
    return f();
  } catch (py::error_already_set&) {
    throw;
  } catch (...) {
    if (!stopping()) throw;
    PyErr_SetString(g_execution_over, "racelab: the execution is over");
    throw py::error_already_set();
  }
}

}  // namespace

}  // namespace racelab::live::python

PYBIND11_EMBEDDED_MODULE(_racelab, m) {
  using namespace racelab::live;
  using racelab::live::python::parking;
  using racelab::live::python::PyBlocking;
  using racelab::live::python::PyLock;
  m.doc() = "racelab's scheduling points for the embedded Python bridge";
  py::class_<PyLock>(m, "RLock")
      .def(py::init<const std::string&, bool, bool, bool>(), py::arg("name"),
           py::arg("recursive") = true, py::arg("python") = false, py::arg("waiter") = false)
      .def(
          "acquire",
          [](PyLock& l, bool blocking, double timeout, const std::string& waits_for) {
            return parking([&] { return l.acquire(blocking, timeout, waits_for); });
          },
          py::arg("blocking") = true, py::arg("timeout") = -1.0, py::arg("waits_for") = "")
      .def("release", [](PyLock& l) { parking([&] { l.release(); }); })
      .def("locked", [](const PyLock& l) { return l.locked(); })
      .def("__enter__", [](PyLock& l) { return parking([&] { return l.acquire(true, -1, {}); }); })
      .def("__exit__", [](PyLock& l, py::args) { parking([&] { l.release(); }); });
  py::class_<PyBlocking>(m, "blocking")
      .def(py::init<std::string, std::string>(), py::arg("what"), py::arg("served_by") = "")
      .def("__enter__", [](PyBlocking& b) { b.enter(); })
      .def("__exit__", [](PyBlocking& b, py::args) { parking([&] { b.exit(); }); });
  // reads, writes: what the point stands for (live::PointAccess), for dpor; awaits: reads it
  // waits for. `guard`: a counter (count) the point waits to see at least `at_least` (live::Guard;
  // "": none), `waits_for` says what for.
  m.def(
      "point",
      [](const std::string& label, const std::vector<std::string>& reads,
         const std::vector<std::string>& writes, const std::vector<std::string>& awaits,
         const std::string& guard, std::int64_t at_least, const std::string& waits_for) {
        std::vector<PointAccess> accesses;
        for (const auto& r : reads) accesses.push_back({r, false});
        for (const auto& w : writes) accesses.push_back({w, true});
        for (const auto& a : awaits) accesses.push_back({a, false, true});
        parking([&] {
          py::gil_scoped_release release;
          if (guard.empty())
            point(label, std::move(accesses));
          else
            point(label, std::move(accesses), Guard{guard, at_least, waits_for});
        });
      },
      py::arg("label"), py::arg("reads") = std::vector<std::string>{},
      py::arg("writes") = std::vector<std::string>{},
      py::arg("awaits") = std::vector<std::string>{}, py::arg("guard") = "",
      py::arg("at_least") = 1, py::arg("waits_for") = "");
  // Not scheduling points: a guarded point's counter, and what the running step touched.
  m.def("count", [](const std::string& counter, std::int64_t delta) { count(counter, delta); });
  m.def(
      "touch",
      [](const std::string& object, bool write, bool awaited) { touch(object, write, awaited); },
      py::arg("object"), py::arg("write") = false, py::arg("awaited") = false);
  m.def("name_this_thread", [](const std::string& name) { name_this_thread(name); });
  // A finding of the bridge's own (an exception the interposition table classifies).
  m.def(
      "report",
      [](const std::string& kind, const std::string& message, bool fatal,
         const std::vector<std::tuple<std::string, int, std::string, bool>>& stack) {
        Runtime* rt = active_runtime();
        if (rt == nullptr) throw std::runtime_error("racelab report outside a live execution");
        std::vector<racelab::sched::StackFrame> frames;
        for (const auto& [file, line, function, user] : stack)
          frames.push_back(racelab::sched::StackFrame{file, line, function, user});
        py::gil_scoped_release release;
        rt->report(kind, message, fatal, std::move(frames));
      },
      py::arg("kind"), py::arg("message"), py::arg("fatal") = false,
      py::arg("stack") = std::vector<std::tuple<std::string, int, std::string, bool>>{});
  m.def("controlled", [] { return controlled(); });
  m.def("active", [] { return active_runtime() != nullptr; });
  m.def("stopping", [] { return stopping(); });
  m.def("end_execution", [] {
    Runtime* rt = active_runtime();
    if (rt == nullptr) return;
    py::gil_scoped_release release;
    rt->end_execution();
  });
  // A daemon thread does not keep the execution going (live.h): as a Python process, it ends
  // once its non-daemon threads have.
  m.def(
      "spawn",
      [](const std::string& name, py::object fn, bool daemon) {
        auto held = racelab::live::python::hold(std::move(fn));
        return spawn(
            name, [held] { racelab::live::python::call_on_controlled(held); }, daemon);
      },
      py::arg("name"), py::arg("fn"), py::arg("daemon") = false);
  m.def("join", [](int t) {
    parking([&] {
      py::gil_scoped_release release;
      join(t);
    });
  });
  static py::exception<racelab::live::python::ExecutionOverTag> over(m, "ExecutionOver",
                                                                     PyExc_BaseException);
  racelab::live::python::g_execution_over = over.ptr();
}

namespace racelab::live::python {

namespace {

std::once_flag g_started;
py::module_* g_threads = nullptr;
py::module_* g_bridge = nullptr;
py::module_* g_racelab = nullptr;

// A module made from embedded source, registered in sys.modules; `env` names a file to use
// instead of the built-in copy (for working on the bridge without rebuilding racelab).
py::module_* load_module(const char* name, const char* source, const char* env) {
  py::module_ types = py::module_::import("types");
  py::object mod = types.attr("ModuleType")(name);
  const char* dev = std::getenv(env);
  py::exec(dev != nullptr && *dev != '\0' ? read_file(dev) : std::string(source),
           mod.attr("__dict__"));
  py::module_::import("sys").attr("modules")[name] = mod;
  return new py::module_(mod.cast<py::module_>());
}

}  // namespace

// Starts the interpreter, loads the bridge's three modules (racelab_threads first, then
// racelab_sync, which imports it, then racelab_bridge; RACELAB_THREADS_PY, RACELAB_SYNC_PY and
// RACELAB_BRIDGE_PY override them) and the scripts' `racelab`
// module (RACELAB_MODULE_PY), patches threading, then releases the GIL for the threads to come.
// The interpreter lives until the process ends (racelab exits without finalizing it: foreign
// threads may still be blocked in it).
//
// Its configuration is the one pybind11's scoped_interpreter(false) makes (pybind11 2.11 on: a
// regular Python's, without parsing argv; before: an isolated one that reads the environment),
// without signal handlers, plus a fixed string hash seed: str and bytes hashes, and so the order
// of a set of strings, are the same in every process, as under PYTHONHASHSEED=N.
//
// In a virtual environment (`python`: --python ENV or $VIRTUAL_ENV) the interpreter is told it
// runs as ENV/bin/python (PyConfig.program_name): CPython then finds ENV/pyvenv.cfg and uses the
// environment's site-packages, as running that python does. Its site-packages hold extension
// modules built for one Python, so an environment of another major.minor is refused.
void start_interpreter(std::uint32_t hash_seed, const std::string& python) {
  std::string program;
  if (!python.empty()) {
    const VirtualEnv env = read_virtual_env(python, "--python");
    const std::string embedded = fmt::format("{}.{}", PY_MAJOR_VERSION, PY_MINOR_VERSION);
    if (env.version != embedded && env.version.rfind(embedded + ".", 0) != 0)
      throw InputError(fmt::format(
          "--python {}: a virtual environment of Python {}, but racelab embeds CPython {}.{}; "
          "make it with that Python ({} -m venv, or RACELAB_PYTHON=... tools/install-torch.sh)",
          python, env.version, embedded, PY_MICRO_VERSION, fmt::format("python{}", embedded)));
    program = env.program;
  }
  std::call_once(g_started, [hash_seed, program] {
    // The C library's locale as python3 sets it (LC_CTYPE from the environment, "C" coerced to
    // C.UTF-8), so that open()'s default encoding is the one a script gets under python3. The
    // isolated configuration below (pybind11 before 2.11) would leave "C", whose ASCII fails
    // torch 2.13.0's import of Inductor (a UTF-8 file read without an encoding).
    PyPreConfig pre;
    PyPreConfig_InitPythonConfig(&pre);
    pre.parse_argv = 0;
    const PyStatus pre_status = Py_PreInitialize(&pre);
    if (PyStatus_Exception(pre_status))
      throw std::runtime_error(fmt::format("python pre-initialisation: {}",
                                           pre_status.err_msg ? pre_status.err_msg : "?"));
    PyConfig config;
#if PYBIND11_VERSION_HEX >= 0x020B0000
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
#else
    PyConfig_InitIsolatedConfig(&config);
    config.isolated = 0;
    config.use_environment = 1;
#endif
    config.install_signal_handlers = 0;
    config.use_hash_seed = 1;
    config.hash_seed = hash_seed;
    if (!program.empty()) {
      const PyStatus status =
          PyConfig_SetBytesString(&config, &config.program_name, program.c_str());
      if (PyStatus_Exception(status))
        throw std::runtime_error(fmt::format("python program name {}: {}", program,
                                             status.err_msg ? status.err_msg : "?"));
    }
    new py::scoped_interpreter(&config);  // intentionally never destroyed
    g_racelab = load_module("racelab", kRacelabPy, "RACELAB_MODULE_PY");
    g_threads = load_module("racelab_threads", kThreadsPy, "RACELAB_THREADS_PY");
    load_module("racelab_sync", kSyncPy, "RACELAB_SYNC_PY");
    g_bridge = load_module("racelab_bridge", kBridgePy, "RACELAB_BRIDGE_PY");
    g_bridge->attr("patch_threading")();
    PyEval_SaveThread();
  });
}

py::module_& bridge_module() { return *g_bridge; }

std::optional<std::string> with_gil_within(double seconds, std::function<std::string()> fn) {
  struct Box {
    std::mutex m;
    std::optional<std::string> result;
  };
  auto box = std::make_shared<Box>();  // outlives this call where the helper is still waiting
  std::thread([box, fn = std::move(fn)] {
    std::string text;
    {
      py::gil_scoped_acquire gil;
      text = fn();
    }
    std::lock_guard g(box->m);
    box->result = std::move(text);
  }).detach();
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    {
      std::lock_guard g(box->m);
      if (box->result) return box->result;
    }
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}
py::module_& racelab_module() { return *g_racelab; }

namespace {

// Every thread's Python stack, taken when an execution hangs (before parked threads unwind) or,
// failing that, when the stacks are written. Taking them needs the GIL, and a thread stuck in C
// code may hold it for ever: a helper thread takes them and the caller waits a few seconds at
// most, so that a hang report is never lost to it.
std::string stacks_now() {
  const auto text = with_gil_within(5, [] {
    try {
      return g_bridge->attr("format_stacks")().cast<std::string>();
    } catch (py::error_already_set& e) {
      return fmt::format("stacks unavailable: {}\n", first_line(e.what()));
    }
  });
  return text ? *text : "stacks unavailable: a thread held the GIL for 5 s\n";
}

std::mutex g_stacks_mutex;
std::string g_stacks;  // taken at the last hang

class PythonSubject : public Subject {
 public:
  PythonSubject(Job job, std::string table, std::string identity)
      : job_(std::move(job)), table_(std::move(table)), identity_(std::move(identity)) {}
  std::string name() const override { return sched::kLivePythonSubject; }
  std::string content_hash() const override {
    std::string script;
    try {
      script = read_file(job_.script);
    } catch (const InputError&) {
    }
    return fmt::format("{:016x}", std::hash<std::string>{}(script + table_ + identity_));
  }
  void setup(Runtime& rt) override {
    crash_report_execution(rt.execution_index());
    auto job = job_;
    auto table = table_;
    rt.spawn("main", [job, table] {
      py::gil_scoped_acquire gil;
      try {
        py::object parsed = py::module_::import("json").attr("loads")(table);
        g_bridge->attr("run")(job.script, job.args, parsed, job.path);
      } catch (py::error_already_set& e) {
        if (stopping()) return;
        throw std::runtime_error(python_error_text(e));
      }
    });
  }
  void stuck() override {
    std::string text = stacks_now();
    std::lock_guard g(g_stacks_mutex);
    g_stacks = std::move(text);
  }

 private:
  Job job_;
  std::string table_;
  std::string identity_;  // job_json of the job as recorded (make_subject's recorded_script)
};

void check_table(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not JSON: {}", origin, first_line(e.what())));
  }
  if (!j.is_object() || j.value("format", "") != "racelab-interpose" || j.value("version", 0) != 1)
    throw InputError(fmt::format(
        "{}: not an interposition table (expected \"format\": \"racelab-interpose\", version 1)",
        origin));
  for (const char* key : {"locks", "blocking", "points"}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_array()) throw InputError(fmt::format("{}: {} must be a list", origin, key));
    for (const auto& e : j[key]) {
      if (!e.is_object() || !e.contains("module") || !e.contains("attr"))
        throw InputError(fmt::format("{}: every entry of {} needs module and attr", origin, key));
    }
  }
  if (j.contains("process_setup")) {
    if (!j["process_setup"].is_array())
      throw InputError(fmt::format("{}: process_setup must be a list", origin));
    for (const auto& e : j["process_setup"]) {
      if (!e.is_object() || !e.contains("call") || !e["call"].is_string() ||
          e["call"].get<std::string>().find('.') == std::string::npos)
        throw InputError(fmt::format(
            "{}: every entry of process_setup needs a call (MODULE.FUNC, a string)", origin));
      if (e.contains("skip_if") && (!e["skip_if"].is_string() ||
                                    e["skip_if"].get<std::string>().find('.') == std::string::npos))
        throw InputError(fmt::format(
            "{}: a process_setup entry's skip_if must be MODULE.FUNC (a string)", origin));
    }
  }
  if (j.contains("exceptions")) {
    if (!j["exceptions"].is_array())
      throw InputError(fmt::format("{}: exceptions must be a list", origin));
    for (const auto& e : j["exceptions"]) {
      if (!e.is_object() || !e.contains("match") || !e["match"].is_string() ||
          !e.contains("kind") || !e["kind"].is_string())
        throw InputError(fmt::format(
            "{}: every entry of exceptions needs a match and a kind (strings)", origin));
    }
  }
}

}  // namespace

bool built_with_python() { return true; }

std::string build_description() {
  return fmt::format("CPython {}.{}.{} (embedded)", PY_MAJOR_VERSION, PY_MINOR_VERSION,
                     PY_MICRO_VERSION);
}

// `--interpose none`: no table, for a script without torch (only its threads and the standard
// library's synchronisation are controlled, plus what the command line adds).
constexpr const char* kNoTable =
    R"({"format": "racelab-interpose", "version": 1, "name": "none",
        "description": "no interposition: the script's threads and synchronisation only"})";

std::string interposition_table(const std::string& name_or_path) {
  if (name_or_path == "none") return kNoTable;
  for (const auto& [name, text] : kTables) {
    if (name_or_path == name) return text;
  }
  if (std::filesystem::exists(name_or_path)) {
    std::string text = read_file(name_or_path);
    check_table(text, name_or_path);
    return text;
  }
  std::vector<std::string> names;
  for (const auto& t : kTables) names.push_back(t.first);
  names.push_back("none");
  throw InputError(fmt::format("--interpose: '{}' is neither a file nor one of: {}", name_or_path,
                               fmt::join(names, ", ")));
}

namespace {

// "mypkg.attention._cache" -> ("mypkg.attention", "_cache"); InputError naming the flag.
std::pair<std::string, std::string> split_dotted(const std::string& dotted, const char* flag) {
  const auto dot = dotted.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == dotted.size())
    throw InputError(
        fmt::format("{} {}: expected MODULE.ATTR (e.g. mypkg.attention._compiled)", flag, dotted));
  return {dotted.substr(0, dot), dotted.substr(dot + 1)};
}

// The table with the command line's entries added (Job::dicts, locks, points, blocking).
std::string with_flags(const std::string& text, const Job& job) {
  auto t = nlohmann::ordered_json::parse(text);
  auto add = [&](const char* key, nlohmann::ordered_json entry) {
    if (!t.contains(key)) t[key] = nlohmann::ordered_json::array();
    t[key].push_back(std::move(entry));
  };
  for (const auto& d : job.dicts) {
    auto [module, attr] = split_dotted(d, "--dict");
    add("dicts", {{"module", module}, {"attr", attr}, {"name", attr}});
  }
  for (const auto& l : job.locks) {
    auto [module, attr] = split_dotted(l, "--lock");
    add("locks", {{"module", module}, {"attr", attr}, {"name", attr}, {"recursive", true}});
  }
  for (const auto& p : job.points) {
    auto [module, attr] = split_dotted(p, "--point");
    add("points", {{"module", module}, {"attr", attr}, {"label", attr}});
  }
  for (const auto& b : job.blocking) {
    const auto eq = b.find('=');
    auto [module, attr] = split_dotted(b.substr(0, eq), "--blocking");
    add("blocking", {{"module", module},
                     {"attr", attr},
                     {"what", attr},
                     {"served_by", eq == std::string::npos ? "" : b.substr(eq + 1)}});
  }
  return t.dump();
}

// The command line's entries as [key, module, attr, the flag as given], so that a problem with
// one is said in the user's words ("--blocking nosuchmod.func: ...").
std::string flag_entries(const Job& job) {
  auto flags = nlohmann::json::array();
  auto add = [&](const char* key, const char* flag, const std::string& text) {
    auto [module, attr] = split_dotted(text.substr(0, text.find('=')), flag);
    flags.push_back({key, module, attr, fmt::format("{} {}", flag, text)});
  };
  for (const auto& d : job.dicts) add("dicts", "--dict", d);
  for (const auto& l : job.locks) add("locks", "--lock", l);
  for (const auto& p : job.points) add("points", "--point", p);
  for (const auto& b : job.blocking) add("blocking", "--blocking", b);
  return flags.dump();
}

// The interpreter's version and the one of the module the table's "verified" names (its
// `version_of`, imported with the script's directory on sys.path).
Versions imported_versions(const std::string& table, const std::vector<std::string>& path) {
  py::gil_scoped_acquire gil;
  py::object loads = py::module_::import("json").attr("loads");
  const auto found =
      g_bridge->attr("versions")(loads(table), path).cast<std::map<std::string, std::string>>();
  Versions v;
  const auto get = [&](const char* key) {
    const auto it = found.find(key);
    return it == found.end() ? std::string() : it->second;
  };
  v.python = get("python");
  v.torch = get("torch");
  v.torch_error = get("torch_error");
  return v;
}

}  // namespace

std::unique_ptr<Subject> make_subject(const Job& job, const std::string& recorded_script,
                                      VersionCheck* versions) {
  expect_script(job.script);
  const std::string base = interposition_table(job.interpose);
  check_table(base, job.interpose);
  std::string table = with_flags(base, job);
  Job j = job;
  if (j.path.empty())
    j.path.push_back(std::filesystem::absolute(job.script).parent_path().string());
  start_interpreter(j.hash_seed, j.python);
  {
    py::gil_scoped_acquire gil;
    const std::string bad = g_bridge->attr("check_script")(job.script).cast<std::string>();
    if (!bad.empty()) throw InputError(bad);
  }
  // A table for a library this interpreter cannot import (torch-2.11 without torch) is bad input,
  // said before the first execution rather than as an exception of the script's main thread.
  {
    py::gil_scoped_acquire gil;
    const std::string missing =
        g_bridge->attr("missing_module")(py::module_::import("json").attr("loads")(base), j.path)
            .cast<std::string>();
    if (!missing.empty())
      throw InputError(
          fmt::format("--interpose {}: cannot import {}; for a script that does not use it, try "
                      "--interpose none",
                      job.interpose, missing));
  }
  // Every entry, the table's and the command line's, checked before the first execution: a module
  // that does not import or an attribute it does not have is bad input, one line naming it.
  {
    py::gil_scoped_acquire gil;
    py::object loads = py::module_::import("json").attr("loads");
    const std::string bad = g_bridge
                                ->attr("check_entries")(loads(table), loads(flag_entries(job)),
                                                        j.path, job.script, job.interpose)
                                .cast<std::string>();
    if (!bad.empty()) throw InputError(bad);
  }
  // The torch and Python this run meets, against the range the table was verified on.
  const VersionCheck checked = check_versions(base, job.interpose, imported_versions(base, j.path));
  if (!checked.outside.empty() && job.refuse_unverified)
    throw InputError(checked.outside + " (--refuse-other-torch)");
  if (versions != nullptr) *versions = checked;
  // The table's process_setup, here: this thread started the interpreter and outlives every
  // execution, whose threads (main's included) end with it (torch-2.11: F14).
  {
    py::gil_scoped_acquire gil;
    g_bridge->attr("process_setup")(py::module_::import("json").attr("loads")(base));
  }
  Job identity = j;  // what the content hash reads: the script as recorded
  if (!recorded_script.empty()) identity.script = recorded_script;
  return std::make_unique<PythonSubject>(std::move(j), std::move(table), job_json(identity));
}

std::uint32_t hash_seed_from_environment() {
  const char* text = std::getenv("PYTHONHASHSEED");
  if (text == nullptr || *text == '\0') return 0;
  const std::string value = text;
  if (value == "random")
    throw InputError(
        "PYTHONHASHSEED=random: racelab runs a script with a fixed string hash seed, so that its "
        "executions replay in a fresh process; set PYTHONHASHSEED to an integer in "
        "[0, 4294967295], or unset it (seed 0)");
  if (value.size() <= 10 && value.find_first_not_of("0123456789") == std::string::npos) {
    const unsigned long long n = std::stoull(value);
    if (n <= 4294967295ULL) return static_cast<std::uint32_t>(n);
  }
  throw InputError(fmt::format(
      "PYTHONHASHSEED={}: must be an integer in [0, 4294967295] (or unset: seed 0)", value));
}

std::string job_json(const Job& job) {
  nlohmann::ordered_json j;
  j["script"] = job.script;
  j["args"] = job.args;
  j["interpose"] = job.interpose;
  j["path"] = job.path;
  if (!job.dicts.empty()) j["dicts"] = job.dicts;
  if (!job.locks.empty()) j["locks"] = job.locks;
  if (!job.points.empty()) j["points"] = job.points;
  if (!job.blocking.empty()) j["blocking"] = job.blocking;
  j["hash_seed"] = job.hash_seed;  // a replay's interpreter hashes strings as the run's did
  // Only where one is used: the schedules of runs without one keep their content hash.
  if (!job.python.empty()) j["python"] = job.python;
  return j.dump();
}

sched::SubjectConfig job_config(const Job& job) {
  sched::SubjectConfig c;
  c.set("script", job.script);
  c.set("args", job.args);
  c.set("interpose", job.interpose);
  c.set("path", job.path);
  if (!job.dicts.empty()) c.set("dicts", job.dicts);
  if (!job.locks.empty()) c.set("locks", job.locks);
  if (!job.points.empty()) c.set("points", job.points);
  if (!job.blocking.empty()) c.set("blocking", job.blocking);
  c.set("hash_seed", std::int64_t{job.hash_seed});
  if (!job.python.empty()) c.set("python", job.python);
  return c;
}

Job job_from_config(const sched::SubjectConfig& c) {
  Job job;
  try {
    job.script = sched::required(c.text("script"), "script");
    job.args = sched::required(c.texts("args"), "args");
    job.interpose = sched::required(c.text("interpose"), "interpose");
    job.path = c.texts("path").value_or(std::vector<std::string>{});
    job.dicts = c.texts("dicts").value_or(std::vector<std::string>{});
    job.locks = c.texts("locks").value_or(std::vector<std::string>{});
    job.points = c.texts("points").value_or(std::vector<std::string>{});
    job.blocking = c.texts("blocking").value_or(std::vector<std::string>{});
    const std::int64_t seed = c.integer("hash_seed").value_or(0);  // older schedules: 0
    if (seed < 0 || seed > 4294967295LL)
      throw InputError(fmt::format("hash_seed: {} is not in [0, 4294967295]", seed));
    job.hash_seed = static_cast<std::uint32_t>(seed);
    job.python = c.text("python").value_or(std::string());
  } catch (const InputError& e) {
    throw InputError(fmt::format("script parameters: {}", first_line(e.what())));
  }
  return job;
}

std::vector<std::tuple<std::string, bool, std::string>> describe_environment(const Job& job) {
  std::vector<std::tuple<std::string, bool, std::string>> items;
  const std::string table = interposition_table(job.interpose);
  start_interpreter(job.hash_seed, job.python);
  Versions v;
  std::map<std::string, std::string> env;
  {
    py::gil_scoped_acquire gil;
    env = g_bridge->attr("environment")().cast<std::map<std::string, std::string>>();
  }
  v = imported_versions(table, {});
  items.emplace_back("python", true,
                     fmt::format("CPython {} (embedded), {}", v.python, env["where"]));
  const bool torch_ok = !env["torch"].empty();
  items.emplace_back("torch", torch_ok,
                     torch_ok
                         ? fmt::format("{} at {}; {}", env["torch"], env["torch_path"], env["cuda"])
                         : fmt::format("does not import in that interpreter ({}); "
                                       "tools/install-torch.sh makes an environment with it",
                                       env["torch_error"]));
  const VersionCheck c = check_versions(table, job.interpose, v);
  std::string verified = "declares no verified versions";
  if (!c.verified.is_null() && c.verified.contains("torch"))
    verified = fmt::format("verified on torch {}",
                           fmt::join(c.verified["torch"].get<std::vector<std::string>>(), ", "));
  if (!v.torch_error.empty()) {  // nothing to check the table against
    items.emplace_back(
        "table", false,
        fmt::format("{} ({}): not usable here, {}", c.table, verified, v.torch_error));
    return items;
  }
  items.emplace_back("table", c.outside.empty(),
                     c.outside.empty()
                         ? fmt::format("{} ({}; racelab live python's default is torch-2.11, "
                                       "--interpose names another)",
                                       c.table, verified)
                         : c.outside);
  return items;
}

void dump_stacks(const std::string& path) {
  if (g_bridge == nullptr) return;
  std::string text;
  {
    std::lock_guard g(g_stacks_mutex);
    text = g_stacks;
  }
  if (text.empty()) text = stacks_now();
  write_file_atomic(path, text);
}

}  // namespace racelab::live::python
