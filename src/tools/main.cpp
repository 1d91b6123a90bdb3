// numfuse: the command-line tool. Warms the kernel cache ahead of time,
// inspects what runs, and manages the cache.
//
//   numfuse [--help | --version] COMMAND [ARGS...]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "numfuse/errors.hpp"
#include "tools/commands.hpp"

namespace {

using nf::tools::Command;

std::vector<Command> all_commands() {
  std::vector<Command> list = {nf::tools::info_command(), nf::tools::warmup_command()};
  for (Command& c : nf::tools::cache_commands()) list.push_back(std::move(c));
  list.push_back(nf::tools::inspect_command());
  return list;
}

void print_overview(const std::vector<Command>& commands, std::FILE* to) {
  std::fprintf(to,
               "usage: numfuse [--help | --version] COMMAND [ARGS...]\n\n"
               "numfuse compiles fused GPU kernels at run time; this tool compiles them ahead\n"
               "of time, shows what runs and manages the kernel cache.\n\ncommands:\n");
  for (const Command& c : commands) {
    std::fprintf(to, "  %-14s %s\n", c.name.c_str(), c.summary.c_str());
  }
  std::fprintf(to, "\n`numfuse COMMAND --help` says more.\n");
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Command> commands = all_commands();
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_overview(commands, stdout);
    return words.empty() ? 2 : 0;
  }
  if (words[0] == "--version") {
    std::printf("numfuse %s\n", NF_VERSION);
    return 0;
  }
  // "cache verify" is one command of two words; "cache" alone lists them.
  std::string name = words[0];
  std::size_t used = 1;
  if (name == "cache" && words.size() > 1 && words[1][0] != '-') name += " " + words[used++];
  const Command* command = nullptr;
  for (const Command& c : commands) command = c.name == name ? &c : command;
  if (name == "cache") {
    const bool help = words.size() > 1 && (words[1] == "--help" || words[1] == "-h");
    if (!help) {
      std::fprintf(stderr, "numfuse cache: name a subcommand (see numfuse cache --help)\n");
      return 2;
    }
    std::printf("usage: numfuse cache list|stats|verify|clear [--cache-dir DIR]\n\n");
    for (const Command& c : commands) {
      if (c.name.rfind("cache ", 0) == 0)
        std::printf("  %-14s %s\n", c.name.c_str(), c.summary.c_str());
    }
    return 0;
  }
  if (!command) {
    std::fprintf(stderr, "numfuse: no command \"%s\" (see numfuse --help)\n", name.c_str());
    return 2;
  }
  const std::span<const std::string> rest(words.data() + used, words.size() - used);
  for (const std::string& w : rest) {
    if (w == "--help" || w == "-h") {
      std::fputs(command->help.c_str(), stdout);
      return 0;
    }
  }
  // One line on stderr for whatever goes wrong, for scripts and their logs;
  // 2 for a command line the command does not take, 1 for a failure.
  try {
    return command->run(nf::tools::parse_command_line(rest, command->valued, command->flags,
                                                      command->max_positional));
  } catch (const nf::tools::UsageError& e) {
    std::fprintf(stderr, "numfuse %s: %s (see numfuse %s --help)\n", name.c_str(), e.what(),
                 name.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "numfuse %s: error: %s\n", name.c_str(), e.what());
    return 1;
  }
}
