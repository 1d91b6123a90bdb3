#include "codegen/gather_kernel.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "codegen/expressions.hpp"
#include "codegen/fused_spec.hpp"
#include "codegen/reduce_model.hpp"
#include "codegen/source_writer.hpp"
#include "compile/runtime_source.hpp"

namespace nf::jit {
namespace {

constexpr int kThreads = 256;

const char* mode_name(TakeMode m) {
  switch (m) {
    case TakeMode::wrap:
      return "wrap";
    case TakeMode::clip:
      return "clip";
    default:
      return "raise";
  }
}

// The element type copied: elements are moved as they lie, so one kernel
// serves every dtype of a size.
const char* element_ctype(std::size_t bytes) {
  switch (bytes) {
    case 1:
      return "unsigned char";
    case 2:
      return "unsigned short";
    case 4:
      return "unsigned int";
    case 8:
      return "unsigned long long";
    default:
      return "nf_vec<unsigned int, 4>";
  }
}

// Whether the last dim of the take's domain is one of the indices' dims
// (columns gathered) rather than one of the array's (rows gathered).
bool gathers_last_dim(const Node& t, const Shape& domain) {
  return std::size_t(t.axis) + t.inputs[1]->shape.size() == domain.size();
}

// The widest vector (16 bytes at most) whose elements lie contiguous along
// the last dim in the array and the output, every row of both starting on
// its boundary.
int vector_width(const Node& t, const Shape& domain, const GatherMap& m, const Layout& a,
                 const Layout& out) {
  const std::size_t last = domain.size() - 1;
  if (gathers_last_dim(t, domain)) return 1;
  if (m.array[last] != 1 || out.strides[last] != 1) return 1;
  int w = int(16 / itemsize(t.dtype));
  auto aligned = [&](std::int64_t x) { return x % w == 0; };
  auto fits = [&] {
    if (!aligned(domain[last]) || !aligned(a.offset) || !aligned(out.offset) ||
        !aligned(m.axis_stride)) {
      return false;
    }
    for (std::size_t d = 0; d < last; ++d) {
      if (!aligned(m.array[d]) || !aligned(out.strides[d])) return false;
    }
    return true;
  };
  while (w > 1 && !fits()) w /= 2;
  return w;
}

// A row of `row` units copied by a group of threads: a warp (a power of
// two, so that a thread finds its lane with a mask), each lane copying up to
// four, so that a thread's walk and index read buy several loads in flight.
// Rows shorter than a warp keep a thread a unit: a group would leave lanes
// idle (rows of 3 in groups of 4 ran 6-7 points of copy slower on the H200).
void size_groups(GatherSpec& s, std::int64_t row) {
  constexpr int kWarp = 32, kPerLane = 4;
  if (row < kWarp) return;
  s.group = kWarp;
  s.per_lane = int(std::min<std::int64_t>(kPerLane, (row + kWarp - 1) / kWarp));
}

// Shared memory every device gives a block without opting in.
constexpr std::int64_t kStageBytes = 48 * 1024;
// The bytes of the sector L2 serves a random read of one element with.
constexpr std::int64_t kSectorBytes = 32;

// Whether gathered columns are staged: the slice of the array along the
// axis fits in shared memory, gives each of a block's threads a load at
// least, and reading it whole moves no more bytes than the sectors random
// reads of the elements gathered from it would.
bool stages(const Node& t, const Shape& domain, const GatherMap& m) {
  const std::int64_t bytes = m.extent * std::int64_t(itemsize(t.dtype));
  const std::int64_t gathered =
      numel(Shape(domain.begin() + t.axis, domain.end()));  // elements of out a slice gives
  return bytes <= kStageBytes && m.extent >= kThreads && bytes <= gathered * kSectorBytes;
}

// The widest vector (16 bytes at most) a staged slice is loaded in: the
// slice contiguous, every one starting on the vector's boundary.
int stage_width(const Node& t, const GatherMap& m, const Layout& a) {
  if (m.axis_stride != 1) return 1;
  int w = int(16 / itemsize(t.dtype));
  auto fits = [&] {
    if (m.extent % w != 0 || a.offset % w != 0) return false;
    for (int d = 0; d < t.axis; ++d) {
      if (m.array[std::size_t(d)] % w != 0) return false;
    }
    return true;
  };
  while (w > 1 && !fits()) w /= 2;
  return w;
}

// "a[c0, index[c1, c2], c3]" for the kernel's comment.
std::string formula(const GatherSpec& s) {
  const int rank = int(s.step->domain.size());
  const int axis = s.take->axis, k = int(s.take->inputs[1]->shape.size());
  auto coords = [](int from, int to) {
    std::string c;
    for (int d = from; d < to; ++d) c += (c.empty() ? "c" : ", c") + std::to_string(d);
    return c;
  };
  std::string index = "index[" + coords(axis, axis + k) + "]";
  std::string a = coords(0, axis);
  a += (a.empty() ? "" : ", ") + index;
  const std::string after = coords(axis + k, rank);
  if (!after.empty()) a += ", " + after;
  return "out[" + coords(0, rank) + "] = a[" + a + "]";
}

class GatherKernel {
 public:
  explicit GatherKernel(const GatherSpec& spec) : s_(spec), rank_(int(spec.domain.size())) {}

  GeneratedKernel run(bool with_source) {
    const std::size_t bytes = itemsize(s_.take->dtype) * std::size_t(s_.vector);
    k_.signature = "gather;idx" + std::string(s_.index64 ? "64" : "32") + ";rank" +
                   std::to_string(rank_) + ";bytes" + std::to_string(bytes) +
                   ";index:" + std::string(name(s_.index_dtype)) + ";" + mode_name(s_.take->mode) +
                   ";axis" + std::to_string(s_.take->axis) + ";k" +
                   std::to_string(s_.take->inputs[1]->shape.size());  // the comment's formula
    if (rows()) {
      k_.signature += ";group" + std::to_string(s_.group) + "x" + std::to_string(s_.per_lane);
    }
    // Staged: the slice's loads move `bytes`, its reads and out's writes an
    // element.
    if (s_.staged) k_.signature += ";staged" + std::to_string(itemsize(s_.take->dtype));
    k_.name = kernel_name("gather", k_.signature);
    k_.threads = kThreads;
    k_.blocks = std::clamp<std::int64_t>((threads() + kThreads - 1) / kThreads, 1,
                                         std::numeric_limits<int>::max());
    if (s_.staged) {
      // A block a slice, looping over them: no more blocks than run at once.
      k_.blocks = std::clamp<std::int64_t>(slices(), 1, std::numeric_limits<int>::max());
      k_.loops_over_tiles = true;
      k_.shared_bytes =
          std::size_t((s_.map.extent * std::int64_t(itemsize(s_.take->dtype)) + 15) / 16 * 16);
    }
    // Also lists the parameters.
    const std::string text =
        s_.staged ? staged_text(element_ctype(itemsize(s_.take->dtype)), element_ctype(bytes))
                  : kernel_text(element_ctype(bytes));
    if (with_source) k_.source = std::string(runtime_prelude()) + "\n" + text;
    return std::move(k_);
  }

 private:
  bool rows() const { return s_.group > 1; }
  std::int64_t threads() const { return numel(s_.domain) * s_.group; }
  // Staged: the dims before the axis (a slice each) and the gathered dims.
  Shape outer() const { return Shape(s_.domain.begin(), s_.domain.begin() + s_.take->axis); }
  Shape gathered() const { return Shape(s_.domain.begin() + s_.take->axis, s_.domain.end()); }
  std::int64_t slices() const { return numel(outer()); }

  // out0, in0 (in `unit`s) and in1.
  KernelParams operands(const std::string& element, const std::string& unit) {
    KernelParams p;
    p.add(element + "* __restrict__ out0", {KernelParam::Kind::output, 0, s_.take->dtype});
    p.add("const " + unit + "* __restrict__ in0", {KernelParam::Kind::input, 0, s_.take->dtype});
    p.add("const " + std::string(storage_ctype(s_.index_dtype)) + "* __restrict__ in1",
          {KernelParam::Kind::input, 1, s_.index_dtype});
    return p;
  }

  std::string finish(KernelParams& p) {
    k_.params = std::move(p.params);
    k_.extents = std::move(p.extents);
    return p.text;
  }

  std::string parameters(const std::string& element) {
    KernelParams p = operands(element, element);
    p.extent("n", {threads()}, false);
    p.walk_dims("dom", s_.domain, s_.index64);
    p.extent("st_a", s_.map.array, true);
    p.extent("st_index", s_.map.indices, true);
    p.extent("st_out", s_.out_strides, true);
    p.extent("axis_stride", {s_.map.axis_stride}, false);
    p.extent("extent", {s_.map.extent}, false);
    if (rows()) {
      p.extent("row", {s_.row}, false);
      p.extent("row_a", {s_.row_stride_a}, false);
      p.extent("row_out", {s_.row_stride_out}, false);
    }
    return finish(p);
  }

  std::string staged_parameters(const std::string& element, const std::string& unit) {
    const std::size_t axis = std::size_t(s_.take->axis);
    const auto part = [](const Strides& st, std::size_t from, std::size_t to) {
      return Strides(st.begin() + std::ptrdiff_t(from), st.begin() + std::ptrdiff_t(to));
    };
    KernelParams p = operands(element, unit);
    p.extent("slices", {slices()}, false);
    if (axis > 0) {
      p.walk_dims("outer", outer(), s_.index64);
      p.extent("st_a", part(s_.map.array, 0, axis), true);
      p.extent("st_slice_out", part(s_.out_strides, 0, axis), true);
    }
    p.extent("m", {numel(gathered())}, false);
    p.walk_dims("dom", gathered(), s_.index64);
    p.extent("st_index", part(s_.map.indices, axis, s_.domain.size()), true);
    p.extent("st_out", part(s_.out_strides, axis, s_.domain.size()), true);
    p.extent("units", {s_.map.extent / s_.vector}, false);
    p.extent("axis_stride", {s_.map.axis_stride}, false);
    p.extent("extent", {s_.map.extent}, false);
    return finish(p);
  }

  // Staged columns: a block a slice of a along the axis, copied into shared
  // memory, then the elements of out it gives, each from there.
  std::string staged_text(const std::string& element, const std::string& unit) {
    const int axis = s_.take->axis, kept = int(gathered().size());
    SourceWriter w;
    w.raw("// numfuse gather kernel " + k_.name + "\n// signature: " + k_.signature + "\n//\n");
    std::string slice = "a[";
    for (int d = 0; d < axis; ++d) slice += "c" + std::to_string(d) + ", ";
    w.raw("// numpy's take along axis " + std::to_string(axis) + ": " + formula(s_) +
          ".\n// A block per slice of a along the axis (" + slice +
          ":]), looping over the slices:\n// the slice copied into shared memory " +
          (s_.vector > 1 ? std::to_string(s_.vector) + " elements a load" : "an element a load") +
          ", then each element\n// of out it gives: the index read and the element of the " +
          "slice it names,\n// a random read from shared memory rather than a 32-byte sector " +
          "of L2.\n");
    w.raw("typedef " + std::string(s_.index64 ? "long long" : "int") + " nf_idx;\n\n");
    w.open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ") " +
           k_.name + "(\n" + staged_parameters(element, unit) + ")");
    w.line("NF_DYNAMIC_SHARED(nf_shared);");
    w.line(unit + "* slice_units = (" + unit + "*)nf_shared;");
    w.line("const " + element + "* slice = (const " + element + "*)nf_shared;");
    w.line("nf_wait_for_earlier_kernels();");
    w.open("for (nf_idx r = blockIdx.x; r < slices; r += gridDim.x)");
    w.line("nf_idx at_a = 0, at_slice = 0;");
    if (axis > 0) {
      w.line("nf_idx rest = r;");
      w.line("#pragma unroll");
      w.open("for (int k = " + std::to_string(axis - 1) + "; k >= 0; --k)");
      w.line("const nf_idx c = k ? nf_coordinate(outer, k, rest) : rest;");
      w.line("at_a += c * st_a.d[k];");
      w.line("at_slice += c * st_slice_out.d[k];");
      w.close();
    }
    w.line("__syncthreads();  // the slice before is read");
    w.open("for (nf_idx x = threadIdx.x; x < units; x += blockDim.x)");
    w.line("slice_units[x] = in0[at_a + x * axis_stride];");
    w.close();
    w.line("__syncthreads();");
    w.open("for (nf_idx j = threadIdx.x; j < m; j += blockDim.x)");
    w.line("nf_idx rest = j, at_index = 0, at_out = at_slice;");
    w.line("#pragma unroll");
    w.open("for (int k = " + std::to_string(kept - 1) + "; k >= 0; --k)");
    w.line("const nf_idx c = k ? nf_coordinate(dom, k, rest) : rest;");
    w.line("at_index += c * st_index.d[k];");
    w.line("at_out += c * st_out.d[k];");
    w.close();
    w.line("const long long v = in1[at_index];");
    w.line("const nf_idx taken = (nf_idx)nf_take_" + std::string(mode_name(s_.take->mode)) +
           "(v, extent);");
    w.line("out0[at_out] = slice[taken];");
    w.close();
    w.close();
    w.close();
    return w.text();
  }

  // What a thread copies, for the kernel's comment.
  std::string plan() const {
    const bool vectors = s_.vector > 1;
    const std::string many = s_.per_lane > 1 ? "s" : "";
    const std::string unit =
        vectors ? "vector" + many + " of " + std::to_string(s_.vector) + " elements"
                : "element" + many;
    const std::string strides = vectors ? " Strides count vectors.\n" : "\n";
    if (!rows()) {
      return "// A thread per " + unit + " of out" +
             (vectors ? " along the last dim (one load, one store)" : "") +
             ":\n// its coordinates (without a division, nf_walk_dims), the index read at them,\n" +
             "// the " + (vectors ? "vector" : "element") + " of a it names." + strides;
    }
    const std::string group = std::to_string(s_.group);
    return "// A group of " + group + " threads per run of " +
           std::to_string(s_.group * s_.per_lane) + (vectors ? " vectors" : " elements") +
           " along a row of out (its last dim):\n// the run's coordinates (without a division, " +
           "nf_walk_dims) and the index read there,\n// then " + std::to_string(s_.per_lane) + " " +
           unit + " a lane, " + group + " apart, copied from the row of a it names" +
           (vectors ? "\n// (one load, one store each)." : ".") + strides;
  }

  // The coordinate walk: at_a, at_index and at_out of walk item `item`;
  // for rows also head, the first unit of the run in its row.
  void walk(SourceWriter& w, const std::string& item) {
    w.line("nf_idx rest = " + item + ", at_a = 0, at_index = 0, at_out = 0;");
    if (rows()) w.line("nf_idx head = 0;");
    w.line("#pragma unroll");
    w.open("for (int k = " + std::to_string(rank_ - 1) + "; k >= 0; --k)");
    w.line("const nf_idx c = k ? nf_coordinate(dom, k, rest) : rest;");
    if (rows()) {
      w.line("if (k == " + std::to_string(rank_ - 1) + ") head = c * " +
             std::to_string(s_.group * s_.per_lane) + ";");
    }
    w.line("at_a += c * st_a.d[k];");
    w.line("at_index += c * st_index.d[k];");
    w.line("at_out += c * st_out.d[k];");
    w.close();
    w.line("const long long v = in1[at_index];");
    w.line("const nf_idx taken = (nf_idx)nf_take_" + std::string(mode_name(s_.take->mode)) +
           "(v, extent);");
  }

  std::string kernel_text(const std::string& element) {
    SourceWriter w;
    w.raw("// numfuse gather kernel " + k_.name + "\n// signature: " + k_.signature + "\n//\n");
    w.raw("// numpy's take along axis " + std::to_string(s_.take->axis) + ": " + formula(s_) +
          ".\n" + plan());
    w.raw("typedef " + std::string(s_.index64 ? "long long" : "int") + " nf_idx;\n\n");
    w.open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ") " +
           k_.name + "(\n" + parameters(element) + ")");
    w.line("nf_wait_for_earlier_kernels();");
    w.line("const nf_idx stride = (nf_idx)gridDim.x * blockDim.x;");
    w.open("for (nf_idx i = (nf_idx)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)");
    // A copy of the whole element or vector: nvcc moves an nf_vec of 16 bytes
    // with one ld.global.v4 and one st.global.v4 (a byte-wise memcpy of it,
    // as nf_store_vector makes, took sixteen loads).
    if (rows()) {
      const std::string group = std::to_string(s_.group);
      w.line("const int lane = (int)(i & " + std::to_string(s_.group - 1) + ");");
      walk(w, "i >> " + std::to_string(std::countr_zero(unsigned(s_.group))));  // i / group
      w.line("const " + element + "* __restrict__ from = in0 + at_a + taken * axis_stride;");
      w.line(element + "* __restrict__ to = out0 + at_out;");
      // Every load before the first store, so that a lane has all of its
      // units in flight at once.
      const std::string per_lane = std::to_string(s_.per_lane);
      w.line(element + " unit[" + per_lane + "];");
      const auto each_unit = [&](const std::string& copy) {
        w.line("#pragma unroll");
        w.open("for (int u = 0; u < " + per_lane + "; ++u)");
        w.line("const nf_idx e = lane + u * " + group + ";");
        w.line("if (head + e < row) " + copy + ";");
        w.close();
      };
      each_unit("unit[u] = from[e * row_a]");
      each_unit("to[e * row_out] = unit[u]");
    } else {
      walk(w, "i");
      w.line("out0[at_out] = in0[at_a + taken * axis_stride];");
    }
    w.close();
    w.close();
    return w.text();
  }

  const GatherSpec& s_;
  const int rank_;
  GeneratedKernel k_;
};

}  // namespace

GatherSpec make_gather_spec(const Program& p, const Schedule& s, const Step& step,
                            const std::vector<std::optional<Layout>>& layouts,
                            const std::vector<Array>& outputs) {
  GatherSpec spec;
  spec.step = &step;
  spec.take = p.nodes[step.nodes[0]].get();
  const Layout& a = *layouts[step.reads[0]];
  const Layout& index = *layouts[step.reads[1]];
  const Layout out = write_layout(s, step.writes[0], layouts, outputs);
  spec.index_dtype = index.dtype;
  spec.map = gather_map(*spec.take, a.strides, index.strides);
  spec.out_strides = out.strides;
  spec.domain = step.domain;
  constexpr std::int64_t kInt32Reach = std::int64_t(1) << 31;
  spec.index64 = numel(step.domain) >= kInt32Reach || a.beyond_int32() || index.beyond_int32() ||
                 out.beyond_int32();
  spec.vector = vector_width(*spec.take, step.domain, spec.map, a, out);
  if (spec.vector > 1) {
    const std::size_t last = spec.domain.size() - 1;
    spec.domain[last] /= spec.vector;
    for (std::size_t d = 0; d < last; ++d) {
      spec.map.array[d] /= spec.vector;
      spec.out_strides[d] /= spec.vector;
    }
    spec.map.axis_stride /= spec.vector;
  }
  if (!gathers_last_dim(*spec.take, spec.domain) && numel(spec.domain) > 0) {
    const std::size_t last = spec.domain.size() - 1;
    spec.row = spec.domain[last];
    spec.row_stride_a = spec.map.array[last];
    spec.row_stride_out = spec.out_strides[last];
    size_groups(spec, spec.row);
    const std::int64_t run = spec.group * spec.per_lane;
    spec.domain[last] = (spec.row + run - 1) / run;
    spec.map.array[last] *= run;
    spec.out_strides[last] *= run;
  }
  if (gathers_last_dim(*spec.take, spec.domain) && numel(spec.domain) > 0 &&
      stages(*spec.take, spec.domain, spec.map)) {
    spec.staged = true;
    spec.vector = stage_width(*spec.take, spec.map, a);
    for (int d = 0; d < spec.take->axis; ++d) spec.map.array[std::size_t(d)] /= spec.vector;
  }
  // The walk's index: its threads, and every offset a thread reaches.
  spec.index64 = spec.index64 || numel(spec.domain) * spec.group >= kInt32Reach;
  return spec;
}

GeneratedKernel describe_gather(const GatherSpec& spec) {
  return GatherKernel(spec).run(false);
}

GeneratedKernel generate_gather(const GatherSpec& spec) {
  return GatherKernel(spec).run(true);
}

}  // namespace nf::jit
