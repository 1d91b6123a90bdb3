#include "tools/command_line.hpp"

namespace nf::tools {

std::string CommandLine::value(const std::string& option, const std::string& fallback) const {
  const auto it = options.find(option);
  return it == options.end() ? fallback : it->second;
}

CommandLine parse_command_line(std::span<const std::string> words,
                               const std::set<std::string>& valued,
                               const std::set<std::string>& flags, std::size_t max_positional) {
  CommandLine line;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.size() < 2 || word[0] != '-') {
      if (line.positional.size() == max_positional) {
        throw UsageError(max_positional == 0 ? "takes no arguments, was given \"" + word + "\""
                                             : "unexpected argument \"" + word + "\"");
      }
      line.positional.push_back(word);
      continue;
    }
    const std::size_t equals = word.find('=');
    const std::string name = word.substr(0, equals);
    if (valued.count(name)) {
      if (equals != std::string::npos) {
        line.options[name] = word.substr(equals + 1);
      } else if (i + 1 < words.size()) {
        line.options[name] = words[++i];
      } else {
        throw UsageError(name + " needs a value");
      }
    } else if (flags.count(name)) {
      if (equals != std::string::npos) throw UsageError(name + " takes no value");
      line.flags.insert(word);
    } else {
      throw UsageError("unknown option " + word);
    }
  }
  return line;
}

}  // namespace nf::tools
