// The command line of one `numfuse` subcommand: its words after the
// subcommand's name, split into positional arguments, options with a value
// and flags, checked against what the subcommand accepts.
#pragma once

#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace nf::tools {

// A command line the subcommand does not accept: main prints it with a
// pointer to --help and exits with 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CommandLine {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // "--arch" -> "sm_90"
  std::set<std::string> flags;                 // "--ptx"

  bool has(const std::string& flag) const { return flags.count(flag) != 0; }
  // The value of `option`, or `fallback` when it was not given.
  std::string value(const std::string& option, const std::string& fallback = "") const;
};

// `--name value`, `--name=value` and `-j N` for the options in `valued`;
// `--name` for those in `flags`. Throws UsageError for anything else that
// starts with '-', for a flag given a value, and for more than
// `max_positional` other words.
CommandLine parse_command_line(std::span<const std::string> words,
                               const std::set<std::string>& valued,
                               const std::set<std::string>& flags, std::size_t max_positional);

}  // namespace nf::tools
