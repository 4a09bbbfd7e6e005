#pragma once
// Which of the build's executables runs a command. They are one command line (racelab_cli,
// harness/CMakeLists.txt) linked three ways:
//
//   racelab          the core: model, scheduler, allocator, reports. It links neither LibTorch nor
//                    libpython, so a command that runs no live subject (explore, suite of model
//                    scenarios, alloc, --version) starts in milliseconds instead of a second.
//   racelab-python   the embedded Python bridge, no LibTorch: live python, doctor (it asks the
//                    interpreter), the replay of a Python schedule. Debian's LibTorch (1.13) and
//                    the wheel's torch (2.11) that a script imports define the same C++ symbols
//                    and cannot share a process.
//   racelab-torch    the LibTorch workload, no Python: live torch, live alloc, the replay of a
//                    torch schedule.
//
// A command that needs a live component calls run_with first: where this process lacks it and
// the build made the sibling that has it, the process becomes that sibling (execv, same
// arguments, argv[0] kept, so that what it prints is what racelab printed before). Where the
// build made no such sibling (RACELAB_TORCH=OFF, the sanitizer builds), the command goes on here
// and the component's stand-in says why in one line (exit 2), as it always did.
namespace racelab::cli {

enum class LiveComponent {
  kPython,  // the embedded interpreter (src/live/python/bridge.h)
  kTorch,   // the LibTorch workload (src/live/torch/workload.h)
};

// Returns where this process has `component`, or where this build has no executable with it.
// Otherwise replaces the process with the sibling executable beside this one that has it; an
// InputError (one line, exit 2) where that sibling is missing, cannot be started, or is this very
// executable built without it.
void run_with(LiveComponent component);

}  // namespace racelab::cli
