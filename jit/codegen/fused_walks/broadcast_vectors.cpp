// Broadcast vectors: where arrays are read through views (a bias row, a
// column of scales, a (B, 1, C) operand over (B, T, C), a stepped slice) and
// every array written is flat, the walk takes the domain's collapsed dims
// (FusedSpec::walk_dims: adjacent dims every view steps through as one
// merged) and each thread `unroll` vectors along the last of them. A thread
// finds a vector's coordinates once, with a multiply and a shift per dim in
// place of a division (nf_coordinate), and loads a view a vector at a time
// where its stride along the last dim is 1, once where it is 0, else one
// element at a time. Where the last dim is not a multiple of the width, or
// a view is off a vector boundary, the vectors are the flat arrays' and may
// cross a row's end: the views are then read an element at a time, their
// offsets stepped as an odometer steps, and the elements past the last
// whole vector go one at a time.
//
// A row operand read again for every row stays in L2 while a row of every
// array fits there; where a row is longer, the blocks take panels of the
// last dim, each the chunk one block-wide step covers, and go down a panel's
// rows one after another, so that the operand's chunk is read from memory
// once and found in L2 for the rows after.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/expressions.hpp"
#include "codegen/fused_kernel.hpp"
#include "codegen/fused_walk.hpp"
#include "codegen/source_writer.hpp"

namespace nf::jit {
namespace {

// A row of every array along the last dim past this many bytes: its row
// operands are read in panels (a good part of an H100's 50 MB of L2: rows
// of 32 MB, f32 (8, 8388608) + (1, 8388608), ran at 72% of copy, and in
// panels at 98%; bench/RESULTS.md, 2026-11-26).
constexpr std::int64_t kPanelRowBytes = std::int64_t(32) << 20;

// Whether a read broadcast along another dim than the last, and read along
// the last, would be read from memory again for each row: where a row of
// every array that varies along the last dim takes kPanelRowBytes or more.
bool takes_panels(const FusedSpec& s) {
  const std::size_t rank = s.walk_dims.size();
  if (rank < 2 || s.walk_wraps) return false;
  bool row_operand = false;
  std::int64_t row_bytes = 0;
  for (std::size_t j = 0; j < s.reads.size(); ++j) {
    const Access a = s.reads[j].access;
    if (a == Access::scalar || a == Access::broadcast) continue;
    row_bytes += std::int64_t(itemsize(s.reads[j].dtype));
    if (a != Access::contiguous) continue;
    const Strides& st = s.walk_strides[j];
    row_operand =
        row_operand || std::any_of(st.begin(), st.end() - 1, [](auto v) { return v == 0; });
  }
  for (const OperandSpec& o : s.writes) row_bytes += std::int64_t(itemsize(o.dtype));
  return row_operand && row_bytes * s.walk_dims.back() >= kPanelRowBytes;
}

class BroadcastVectors final : public FusedWalk {
 public:
  // Steps with collapsed dims (a view read, no array written through
  // strides) that compute no iota, whose values are coordinates.
  bool applies(FusedSpec& spec) const override {
    if (spec.walk_dims.empty() || computes_iota(spec)) return false;
    spec.collapsed = true;
    spec.vector_width = spec.walk_vector_width;
    // Wrapping vectors read every view an element at a time.
    for (std::size_t j = 0; j < spec.reads.size() && !spec.walk_wraps; ++j) {
      if (spec.reads[j].access != Access::strided) continue;
      const std::int64_t last = spec.walk_strides[j].back();
      if (last == 1) spec.reads[j].access = Access::contiguous;
      if (last == 0) spec.reads[j].access = Access::broadcast;
    }
    spec.unroll = vector_unroll(spec);
    spec.panels = takes_panels(spec);
    return true;
  }

  std::string comment(const FusedSpec& s) const override {
    return "Broadcast vectors: arrays are read through views and written flat; the\n"
           "domain's dims, merged where every view steps through them as one, are " +
           std::to_string(s.walk_dims.size()) + ".\nEach thread takes " + std::to_string(s.unroll) +
           " vector(s) of " + std::to_string(s.vector_width) +
           " elements along the last dim, finds a vector's\n"
           "coordinates once (a multiply and a shift a dim, no division) and loads a\n"
           "view (contig) a vector at a time, (bcast) once, or (strided) an element\n"
           "at a time." +
           std::string(s.walk_wraps ? "\nThe vectors may cross the last dim's end (wrapping): "
                                      "the views' offsets\nstep from element to element "
                                      "without a division."
                                    : "") +
           std::string(s.panels ? "\nRows are long: blocks go down panels of the last dim, "
                                  "so that a row\noperand's chunk is read once and found in "
                                  "L2 for the other rows."
                                : "");
  }

  void loop(const FusedKernel& k, SourceWriter& w) const override {
    const FusedSpec& s = k.spec();
    const std::string W = std::to_string(s.vector_width), U = std::to_string(s.unroll);
    const int rank = int(s.walk_dims.size());
    auto vec = [&](DType t) { return vector_ctype(t, s.vector_width); };
    if (s.panels) {
      open_panels(k, w);
    } else {
      open_vector_groups(k, w);
    }
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      const Access a = s.reads[j].access;
      const std::string J = std::to_string(j);
      if (a == Access::broadcast) {
        w.line(std::string(storage_ctype(s.reads[j].dtype)) + " s_in" + J + "[" + U + "] = {};");
      } else if (a != Access::scalar) {
        w.line(vec(s.reads[j].dtype) + " v_in" + J + "[" + U + "] = {};");
      }
    }
    w.line("#pragma unroll");
    w.open("for (int u = 0; u < " + U + "; ++u)");
    w.line("const nf_idx g = g0 + (nf_idx)u * blockDim.x;");
    w.open("if (g < groups)");
    w.line("// The coordinates of the group's first element.");
    coordinates(s, "g * " + W, w);
    for (std::size_t j = 0; j < s.reads.size(); ++j) load(k, j, vec, w);
    if (s.walk_wraps) step_views(s, rank, w);
    w.close();
    w.close();
    compute_vector_groups(k, w, [&](std::size_t j) {
      const std::string J = std::to_string(j);
      switch (s.reads[j].access) {
        case Access::scalar:
          return "in" + J + "[0]";
        case Access::broadcast:
          return "s_in" + J + "[u]";
        default:
          return "v_in" + J + "[u].v[k]";
      }
    });
    w.close();
    if (s.walk_wraps) tail(k, w);
  }

 private:
  // The loop over the block-wide steps of panels, in the order of a panel's
  // rows; in each, g0 is the thread's first group and `groups` the end of
  // the step's row, the bound every group is tested against.
  static void open_panels(const FusedKernel& k, SourceWriter& w) {
    const FusedSpec& s = k.spec();
    const std::string W = std::to_string(s.vector_width), U = std::to_string(s.unroll);
    const std::string last = std::to_string(s.walk_dims.size() - 1);
    w.line("const nf_idx row = dom.d[" + last + "] / " + W + ";  // groups of a row");
    w.line("const nf_idx rows = n / " + W + " / row;");
    w.line("const nf_idx width = (nf_idx)blockDim.x * " + U + ";  // groups of a panel");
    w.line("const nf_idx panels = (row + width - 1) / width;");
    w.open("for (nf_idx q = blockIdx.x; q < panels * rows; q += gridDim.x)");
    w.line("const nf_idx panel = q / rows, start = (q - panel * rows) * row + panel * width;");
    w.line("const nf_idx g0 = start + threadIdx.x;");
    w.line("const nf_idx left = row - panel * width;  // of the row, from the panel on");
    w.line("const nf_idx groups = start + (left < width ? left : width);");
  }

  // c0..c{rank-1} of element `first`, each found without a division.
  static void coordinates(const FusedSpec& s, const std::string& first, SourceWriter& w) {
    const int rank = int(s.walk_dims.size());
    const std::string c = s.walk_wraps ? "nf_idx c" : "const nf_idx c";
    w.line("nf_idx rest = " + first + ";");
    for (int d = rank - 1; d > 0; --d) {
      w.line(c + std::to_string(d) + " = nf_coordinate(dom, " + std::to_string(d) + ", rest);");
    }
    w.line(c + "0 = rest;");
  }

  // Wrapping vectors: the views' elements one at a time, the coordinates
  // stepped as an odometer steps, with no division.
  static void step_views(const FusedSpec& s, int rank, SourceWriter& w) {
    std::vector<std::string> views;
    for (std::size_t j = 0; j < s.reads.size(); ++j)
      if (s.reads[j].access == Access::strided) views.push_back(std::to_string(j));
    w.line("#pragma unroll");
    w.open("for (int k = 0; k < " + std::to_string(s.vector_width) + "; ++k)");
    for (const std::string& J : views) w.line("v_in" + J + "[u].v[k] = in" + J + "[at" + J + "];");
    const std::string last = std::to_string(rank - 1);
    for (const std::string& J : views) w.line("at" + J + " += st_in" + J + ".d[" + last + "];");
    for (int d = rank - 1; d > 0; --d) {
      const std::string D = std::to_string(d), O = std::to_string(d - 1);
      w.open("if (++c" + D + " == dom.d[" + D + "])");
      w.line("c" + D + " = 0;");
      for (const std::string& J : views) {
        w.line("at" + J + " += st_in" + J + ".d[" + O + "] - dom.d[" + D + "] * st_in" + J + ".d[" +
               D + "];");
      }
    }
    for (int d = rank - 1; d > 0; --d) w.close();
    w.close();
  }

  // The elements past the last whole vector, one a thread.
  static void tail(const FusedKernel& k, SourceWriter& w) {
    const FusedSpec& s = k.spec();
    const std::string W = std::to_string(s.vector_width);
    w.open("for (nf_idx i = n / " + W + " * " + W + " + first; i < n; i += stride)");
    coordinates(s, "i", w);
    k.element(w, [&](std::size_t j) {
      const std::string J = std::to_string(j);
      return "in" + J + "[" + k.offset("st_in" + J, s.reads[j].access) + "]";
    });
    k.stores(w);
    w.close();
  }

  // Read j's values for group g of thread's group u.
  template <class Vec>
  static void load(const FusedKernel& k, std::size_t j, const Vec& vec, SourceWriter& w) {
    const FusedSpec& s = k.spec();
    const Access a = s.reads[j].access;
    const std::string J = std::to_string(j), W = std::to_string(s.vector_width);
    if (a == Access::scalar) return;
    if (a == Access::flat) {
      w.line("v_in" + J + "[u] = *(const " + vec(s.reads[j].dtype) + "*)(in" + J + " + g * " + W +
             ");");
      return;
    }
    w.line(std::string(s.walk_wraps ? "" : "const ") + "nf_idx at" + J + " = " +
           k.offset("st_in" + J, Access::strided) + ";");
    if (s.walk_wraps) return;
    if (a == Access::contiguous) {
      w.line("v_in" + J + "[u] = *(const " + vec(s.reads[j].dtype) + "*)(in" + J + " + at" + J +
             ");");
    } else if (a == Access::broadcast) {
      w.line("s_in" + J + "[u] = in" + J + "[at" + J + "];");
    } else {
      w.line("#pragma unroll");
      w.line("for (int k = 0; k < " + W + "; ++k) v_in" + J + "[u].v[k] = in" + J + "[at" + J +
             " + k * st_in" + J + ".d[" + std::to_string(s.walk_dims.size() - 1) + "]];");
    }
  }
};

}  // namespace

const FusedWalk& broadcast_vectors_walk() {
  static const BroadcastVectors walk;
  return walk;
}

}  // namespace nf::jit
