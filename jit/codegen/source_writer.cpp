#include "codegen/source_writer.hpp"

namespace nf::jit {

void SourceWriter::line(const std::string& text) {
  if (!text.empty() && text[0] != '#') out_.append(std::size_t(2 * depth_), ' ');
  out_ += text;
  out_ += '\n';
}

void SourceWriter::lines(const std::string& text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t eol = text.find('\n', at);
    line(text.substr(at, eol - at));
    if (eol == std::string::npos) break;
    at = eol + 1;
  }
}

void SourceWriter::open(const std::string& head, const std::string& comment) {
  line((head.empty() ? "{" : head + " {") + (comment.empty() ? "" : "  // " + comment));
  ++depth_;
}

void SourceWriter::close() {
  --depth_;
  line("}");
}

void SourceWriter::raw(const std::string& text) {
  out_ += text;
}

}  // namespace nf::jit
