#pragma once
// Options whose word names a core type: CLI11 checks the word (one_of, so that the error message
// and --help read as for any word option) and stores the type the core uses, so that nothing past
// the command line compares the word again. The table is the core's own (its name function over
// every value), so the words and the values cannot drift apart.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "command.h"

namespace racelab::cli {

// The word's value in `table`, handed to `set`; CLI11 refuses any other word (one_of).
template <typename E, typename Set>
CLI::Option* enum_option_to(CLI::App* cmd, const std::string& name,
                            std::vector<std::pair<std::string, E>> table, const std::string& help,
                            Set set) {
  std::vector<std::string> words;
  for (const auto& [word, value] : table) words.push_back(word);
  return cmd
      ->add_option_function<std::string>(
          name,
          [set, table = std::move(table)](const std::string& word) {
            for (const auto& [w, value] : table)
              if (w == word) set(value);
          },
          help)
      ->check(one_of(std::move(words)));
}
// The word's value in `table`, stored in `target` (left as it was when the option is absent).
template <typename E>
CLI::Option* enum_option(CLI::App* cmd, const std::string& name, std::optional<E>& target,
                         std::vector<std::pair<std::string, E>> table, const std::string& help) {
  return enum_option_to(cmd, name, std::move(table), help, [&target](E v) { target = v; });
}
// The same, for an option with a default value.
template <typename E>
CLI::Option* enum_option(CLI::App* cmd, const std::string& name, E& target,
                         std::vector<std::pair<std::string, E>> table, const std::string& help) {
  return enum_option_to(cmd, name, std::move(table), help, [&target](E v) { target = v; });
}

}  // namespace racelab::cli
