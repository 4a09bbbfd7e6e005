#pragma once
// Inside the Python bridge: the embedded interpreter and its modules, shared by bridge.cc (the
// live subject), capture.cc (the allocator capture and the uncontrolled run) and crash.cc (the
// crash report). Not for use outside src/live/python.
#include <pybind11/embed.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace racelab::live::python {

// Starts the interpreter once per process (see bridge.cc), its string hashing seeded with
// `hash_seed`, in the virtual environment `python` names (Job::python; "" for none); the first
// call's hold. The GIL is released when it returns. InputError for an environment of another
// Python than the one racelab embeds.
void start_interpreter(std::uint32_t hash_seed, const std::string& python);
pybind11::module_& bridge_module();   // racelab_bridge.py (it imports racelab_threads.py)
pybind11::module_& racelab_module();  // racelab.py, the module scripts import as `racelab`

// The number of the execution about to start in its search (Runtime::execution_index), for the
// crash report's "in execution N" (crash.cc).
void crash_report_execution(std::uint64_t index);

// Runs `fn` with the GIL on a helper thread and waits `seconds` at most for its result: a thread
// stuck in C code may hold the GIL for ever, and what racelab writes must not be lost to it.
// nullopt on timeout (the helper finishes later, into state it owns). `fn` must not throw.
std::optional<std::string> with_gil_within(double seconds, std::function<std::string()> fn);

// The first line of a Python error, without pybind11's "<EMPTY MESSAGE>" for a bare
// `raise KeyboardInterrupt`.
std::string python_error_text(const pybind11::error_already_set& e);

}  // namespace racelab::live::python
