// Generated source as the generators write it: lines at the current depth,
// scopes opened and closed with braces, preprocessor lines at column 0.
// Blocks of statements built elsewhere (a pass's accumulations) are written
// line by line at the depth they land at, so no generator spells indentation.
#pragma once

#include <string>

namespace nf::jit {

class SourceWriter {
 public:
  // `text` at the current depth. Preprocessor lines (#pragma unroll) go at
  // column 0, as they are read; an empty line stays empty.
  void line(const std::string& text);
  // Each line of `text` (every line ending in '\n') as line() writes it.
  void lines(const std::string& text);
  // `head {` (a bare `{` where head is empty), `  // comment` after it where
  // given, then one level deeper.
  void open(const std::string& head, const std::string& comment = "");
  // One level back, and its `}`.
  void close();
  // `text` as it is: the kernel's comment and declaration.
  void raw(const std::string& text);
  // The current depth's indentation, for the second line of a statement
  // that takes two.
  std::string indent() const { return std::string(std::size_t(2 * depth_), ' '); }

  const std::string& text() const { return out_; }

 private:
  std::string out_;
  int depth_ = 0;
};

}  // namespace nf::jit
