// What the subcommands share about the kernel cache: which directory they
// work on, and how they print sizes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "tools/command_line.hpp"

namespace nf::tools {

// --cache-dir, else the directory programs using numfuse read (NF_CACHE_DIR,
// else $XDG_CACHE_HOME/numfuse, else ~/.cache/numfuse). Throws nf::Error when
// NF_CACHE turns the cache off and no --cache-dir is given.
std::filesystem::path cache_dir(const CommandLine& line);

// "1.2 MiB"
std::string human_bytes(std::uintmax_t bytes);

}  // namespace nf::tools
