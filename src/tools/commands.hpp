// The subcommands of `numfuse`, each defined in its own file.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "tools/command_line.hpp"

namespace nf::tools {

struct Command {
  std::string name;     // "info", "cache verify"
  std::string summary;  // one line in `numfuse --help`
  std::string help;     // all of `numfuse NAME --help`
  std::set<std::string> valued;
  std::set<std::string> flags;
  std::size_t max_positional;  // arguments that are not options
  int (*run)(const CommandLine& line);
};

Command info_command();
Command warmup_command();
std::vector<Command> cache_commands();
Command inspect_command();

}  // namespace nf::tools
