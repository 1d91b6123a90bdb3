// Warnings about conditions numfuse works around (it raises errors for the
// rest): on stderr, prefixed "numfuse: ", each kind once per process so that a
// broken cache directory does not flood a training log.
#pragma once

#include <string>
#include <string_view>

namespace nf::jit {

// Prints `message` unless a warning of `kind` was printed before; returns
// whether it printed. Thread-safe.
bool warn_once(std::string_view kind, const std::string& message);

}  // namespace nf::jit
