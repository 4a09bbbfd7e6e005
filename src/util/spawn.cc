#include "util/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "util/errors.h"
#include "util/files.h"

extern char** environ;

namespace racelab {

namespace {

// The child being waited for (0: none), and whether an interrupt came: lock-free atomics, which a
// signal handler may touch.
std::atomic<pid_t> g_child{0};
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

}  // namespace

void interrupt_children() {
  g_interrupted.store(true);
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, SIGINT);
}

int spawn_and_wait(const std::vector<std::string>& argv, const std::string& python_path,
                   const std::string& log) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("PYTHONPATH=", 0) != 0) env_text.emplace_back(*e);
  }
  const char* old = std::getenv("PYTHONPATH");
  if (!python_path.empty() || old != nullptr) {
    env_text.push_back(
        "PYTHONPATH=" + python_path +
        (old != nullptr && *old ? (python_path.empty() ? "" : ":") + std::string(old) : ""));
  }
  std::vector<char*> envp, args;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  g_child.store(pid);
  // An interrupt that came before the child was known: it stops at once all the same.
  if (g_interrupted.load()) ::kill(pid, SIGINT);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  g_child.store(0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

std::string last_line(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const InputError&) {
    return {};
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("racelab") : p.string();
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    const bool plain = !a.empty() && a.find_first_of(" '\"$\\\\*?") == std::string::npos;
    out += (out.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return out;
}

}  // namespace racelab
