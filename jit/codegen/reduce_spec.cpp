#include "codegen/reduce_spec.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "codegen/fused_spec.hpp"
#include "codegen/reduce_lanes.hpp"
#include "codegen/reduce_walk.hpp"
#include "core/config.hpp"
#include "core/shape_util.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {
namespace {

constexpr int kMaxCluster = 8;  // the portable cluster size

bool reduced_axis(const std::vector<int>& axes, int d) {
  return std::find(axes.begin(), axes.end(), d) != axes.end();
}

Along along_of(const Strides& reduced) {
  const bool varies =
      std::any_of(reduced.begin(), reduced.end(), [](std::int64_t s) { return s != 0; });
  if (!varies) return Along::none;
  if (reduced.size() > 1) return Along::general;
  return reduced[0] == 1 ? Along::unit : Along::strided;
}

}  // namespace

ReduceLimits parse_reduce_limits(const std::string& text) {
  ReduceLimits l;
  std::string rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    char* end = nullptr;
    const long long value =
        eq == std::string::npos ? -1 : std::strtoll(item.c_str() + eq + 1, &end, 10);
    if (value < 0 || !end || *end != '\0') {
      throw ValueError("NF_REDUCE_LIMITS: expected name=count, got \"" + item + "\"");
    }
    if (key == "max_held") {
      l.max_held = int(value);
    } else if (key == "split_below") {
      l.split_below = value;
    } else if (key == "chunk_groups" && value > 0) {
      l.chunk_groups = int(value);
    } else if (key == "max_cluster" && value > 0 && value <= kMaxCluster) {
      l.max_cluster = int(value);
    } else if (key == "prefetch_from") {
      l.prefetch_from = value;
    } else if (key == "max_gathered" && value > 0) {
      l.max_gathered = int(value);
    } else {
      throw ValueError("NF_REDUCE_LIMITS: unknown or invalid setting \"" + item +
                       "\" (max_held, split_below, chunk_groups > 0, max_cluster 1.." +
                       std::to_string(kMaxCluster) + ", prefetch_from, max_gathered > 0)");
    }
  }
  return l;
}

const ReduceLimits& default_reduce_limits() {
  static const ReduceLimits limits = [] {
    const std::optional<std::string> text = config::read(config::Var::reduce_limits);
    return text ? parse_reduce_limits(*text) : ReduceLimits{};
  }();
  return limits;
}

ReduceLimits reduce_limits_for(const std::string& arch, ReduceLimits limits) {
  const int sm = arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0;
  if (sm < 90) limits.max_cluster = 1;
  // Shared memory a block may opt in to, less room for the kernel's own.
  constexpr std::int64_t KiB = 1024;
  if (sm < 80) {
    limits.prefetch_max = 0;
  } else if (sm == 80 || sm == 87) {
    limits.prefetch_max = 160 * KiB;
  } else if (sm == 90 || sm == 100 || sm == 103) {
    limits.prefetch_max = 224 * KiB;
  } else {
    limits.prefetch_max = 96 * KiB;
  }
  limits.l2_bytes = sm == 90 ? 50 * KiB * KiB : 0;
  return limits;
}

bool is_library_function(const Node& n) {
  const OpInfo& info = op_info(n.op);
  return info.kind == OpKind::elementwise &&
         (info.rule == ResultRule::floating || info.rule == ResultRule::true_divide ||
          n.op == OpId::power);
}

std::int64_t groups_of(const ReduceSpec& spec) {
  // A shifted row of n elements holds at least (n - vec + 1) / vec whole
  // groups wherever it starts: each row takes that many.
  if (spec.shifted) return (numel(spec.reduced) - spec.vec + 1) / spec.vec;
  if (spec.covered) return numel(spec.reduced) / spec.reduced.back() * covering(spec);
  if (spec.run_lanes) {
    const std::int64_t run = spec.reduced.back(), runs = numel(spec.reduced) / run;
    const std::int64_t step = spec.tr / run;  // runs the threads of an output read at once
    return (runs + step - 1) / step * spec.tr;
  }
  return (numel(spec.reduced) + spec.vec - 1) / spec.vec;
}

// A run of n elements starting at lead (0 to vec - 1) in its first vector
// ends in vector (lead + n - 1) / vec: the most, at lead vec - 1.
std::int64_t covering(const ReduceSpec& spec) {
  return (spec.reduced.back() + spec.vec - 2) / spec.vec + 1;
}

bool writes_elements(const ReduceSpec& spec) {
  return std::any_of(spec.writes.begin(), spec.writes.end(),
                     [](const ReduceOperand& o) { return o.along != Along::none; });
}

std::vector<int> varying_reads(const ReduceSpec& spec) {
  std::vector<int> reads;
  for (std::size_t j = 0; j < spec.reads.size(); ++j) {
    if (spec.reads[j].along != Along::none) reads.push_back(int(j));
  }
  return reads;
}

std::size_t narrowest_read(const ReduceSpec& spec) {
  std::size_t narrowest = 8;
  for (int j : varying_reads(spec)) narrowest = std::min(narrowest, itemsize(spec.reads[j].dtype));
  return narrowest;
}

bool pairs_together(const ReduceSpec& spec, const ReduceOperand& read) {
  if (spec.kept.empty() || spec.kept.back() % 2 != 0 || read.kept.back() != 1 ||
      read.offset % 2 != 0) {
    return false;
  }
  const auto even = [](std::int64_t s) { return s % 2 == 0; };
  return std::all_of(read.kept.begin(), read.kept.end() - 1, even) &&
         std::all_of(read.reduced.begin(), read.reduced.end(), even);
}

bool pairs_fit(const ReduceSpec& spec) {
  if (!spec.columns || writes_elements(spec) || spec.reads.empty()) return false;
  for (const ReduceOperand& read : spec.reads) {
    if (read.along == Along::none || itemsize(read.dtype) != 2 || !pairs_together(spec, read)) {
      return false;
    }
  }
  // One pass, as the model would plan it (ReduceModel::rounds, which needs
  // the spec first): values that depend on a reduction, in the step's order.
  const Program& p = *spec.program;
  std::vector<bool> after_reduction(p.nodes.size(), false);
  const std::vector<int>& reads = spec.step->reads;
  for (int i : spec.step->nodes) {
    if (std::find(reads.begin(), reads.end(), i) != reads.end()) continue;
    bool after = false;
    for (int j : p.inputs[i]) after = after || after_reduction[j];
    if (op_kind(p.nodes[i]->op) == OpKind::reduction) {
      if (after || reduction_passes(p.nodes[i]->op).size() != 1) return false;
      after = true;
    }
    after_reduction[i] = after;
  }
  return true;
}

std::int64_t thread_outputs(const ReduceSpec& spec) {
  return spec.pairs ? numel(spec.kept) / 2 : numel(spec.kept);
}

std::size_t group_bytes(const ReduceSpec& spec) {
  std::size_t widest = 1;
  for (const auto* list : {&spec.reads, &spec.writes}) {
    for (const ReduceOperand& o : *list) {
      if (o.along != Along::none) widest = std::max(widest, itemsize(o.dtype));
    }
  }
  return std::size_t(spec.vec) * widest * (spec.pairs ? 2 : 1);
}

int group_registers(const ReduceSpec& spec) {
  return int((group_bytes(spec) + 3) / 4);
}

bool scalars_over_several(const ReduceSpec& spec) {
  return !spec.columns && spec.reduced.size() > 1 && group_bytes(spec) <= 4;
}

std::int64_t held_groups_at_most(const ReduceSpec& spec, const ReduceLimits& limits) {
  // Twice max_held at most: each group comes with its own address. Columns
  // of 65 to 128 elements held ten to sixteen a thread rather than read in
  // a loop or copied to shared memory: broadcast back, halves ran a median
  // 15% faster (56 of 70 rows, none slower by more than 8%), floats 3% (two
  // rows 16% slower); floats summed 8%. Halves summed gained on large
  // arrays and lost on small ones (sum(x, 0) of (98, 20, 394, 11) f16 4.6 ->
  // 6.3 us; of (128, 1047576) 81.3 -> 104.2, 46% more instructions) and
  // keep their loop (H200, bench/RESULTS.md).
  const std::size_t bytes = group_bytes(spec);
  const bool columns = spec.columns && (bytes == 4 || (bytes < 4 && writes_elements(spec)));
  return scalars_over_several(spec) || columns ? 2 * std::int64_t(limits.max_held)
                                               : limits.max_held;
}

std::int64_t read_bytes(const ReduceSpec& spec) {
  std::int64_t bytes = 0;
  for (const ReduceOperand& r : spec.reads) {
    const std::int64_t along = r.along == Along::none ? 1 : numel(spec.reduced);
    bytes += numel(spec.kept) * along * std::int64_t(itemsize(r.dtype));
  }
  return bytes;
}

bool held_in_words(const ReduceSpec& spec, int j) {
  return spec.words && itemsize(spec.reads[j].dtype) < 4;
}

// A unit more than the elements take, but where every block's row of read j
// starts on 16 bytes: its offset, its steps along the reduced dims and the
// outer kept dims, and a block's outputs, all whole multiples of 16 bytes.
std::int64_t staged_row_bytes(const ReduceSpec& spec, int j) {
  const ReduceOperand& read = spec.reads[j];
  const std::int64_t size = std::int64_t(itemsize(read.dtype)), bytes = spec.to * size;
  const auto on16 = [&](std::int64_t elements) { return elements * size % 16 == 0; };
  bool aligned = on16(read.offset) && on16(spec.to);
  for (std::int64_t step : read.reduced) aligned = aligned && on16(step);
  for (std::size_t d = 0; d + 1 < read.kept.size(); ++d) aligned = aligned && on16(read.kept[d]);
  return ((bytes + 15) / 16 + (aligned ? 0 : 1)) * 16;
}

std::int64_t held_bytes(const ReduceSpec& spec, int j, std::int64_t per) {
  if (spec.staged) return staged_row_bytes(spec, j) * per * spec.tr;
  const std::size_t bytes = held_in_words(spec, j) ? 4 : itemsize(spec.reads[j].dtype);
  return std::int64_t(spec.vec * bytes) * per * spec.tr * spec.to;
}

std::int64_t held_bytes(const ReduceSpec& spec, std::int64_t per) {
  std::int64_t bytes = 0;
  for (int j : varying_reads(spec)) bytes += held_bytes(spec, j, per);
  return bytes;
}

namespace {

// The lanes map threads to outputs, rows or columns, with a vector width and
// a block; then the first walk that applies takes the step and sets the rest
// of the launch shape.
void choose_walk(ReduceSpec& spec, const std::vector<std::int64_t>& offsets,
                 const ReduceLimits& limits) {
  choose_lanes(spec, offsets);
  for (const ReduceWalk* walk : reduce_walks()) {
    if (walk->applies(spec, limits)) {
      spec.walk = walk;
      return;
    }
  }
}

}  // namespace

ReduceSpec make_reduce_spec(const Program& p, const Schedule& s, const Step& step,
                            const std::vector<std::optional<Layout>>& layouts,
                            const std::vector<Array>& outputs, const ReduceLimits& limits) {
  ReduceSpec spec;
  spec.program = &p;
  spec.plan = &s;
  spec.step = &step;
  const Shape& domain = step.domain;
  std::vector<Layout> all;
  for (int r : step.reads) all.push_back(*layouts[r]);
  for (int w : step.writes) all.push_back(write_layout(s, w, layouts, outputs));
  std::vector<Strides> over;  // every operand's strides over the domain
  for (const Layout& l : all) over.push_back(broadcast_strides(l.shape, l.strides, domain));

  // Dims of length 1 drop out; neighbours of one kind merge where every
  // operand steps through them as through one dim.
  struct Dim {
    std::int64_t size;
    bool reduced;
    std::vector<std::int64_t> strides;  // per operand
  };
  std::vector<Dim> dims;
  for (int d = 0; d < int(domain.size()); ++d) {
    if (domain[d] == 1) continue;
    Dim dim{domain[d], reduced_axis(step.axes, d), {}};
    for (const Strides& o : over) dim.strides.push_back(o[d]);
    if (!dims.empty() && dims.back().reduced == dim.reduced) {
      Dim& prev = dims.back();
      bool mergeable = true;
      for (std::size_t j = 0; j < over.size(); ++j) {
        mergeable = mergeable && prev.strides[j] == dim.strides[j] * dim.size;
      }
      if (mergeable) {
        prev.size *= dim.size;
        prev.strides = dim.strides;
        continue;
      }
    }
    dims.push_back(std::move(dim));
  }
  for (std::size_t j = 0; j < all.size(); ++j) {
    ReduceOperand o{all[j].dtype, Along::none, {}, {}, all[j].offset};
    for (const Dim& d : dims) (d.reduced ? o.reduced : o.kept).push_back(d.strides[j]);
    o.along = along_of(o.reduced);
    (j < step.reads.size() ? spec.reads : spec.writes).push_back(std::move(o));
  }
  for (const Dim& d : dims) (d.reduced ? spec.reduced : spec.kept).push_back(d.size);

  constexpr std::int64_t kInt32Reach = std::int64_t(1) << 31;
  spec.index64 = numel(domain) >= kInt32Reach;
  for (const Layout& l : all) spec.index64 = spec.index64 || l.beyond_int32();

  std::vector<std::int64_t> offsets;
  for (const Layout& l : all) offsets.push_back(l.offset);
  const ReduceSpec unwalked = spec;
  ReduceSpec covered = unwalked;
  covered.covered = true;
  choose_walk(spec, offsets, limits);
  // Rows read an element at a time whose runs can be covered in vectors
  // (ReduceSpec::covered) are, where that was measured faster: held by a
  // block of at most kCoveredThreads, writing no elements. Sums over (0, 3)
  // of (75, 75, 75, 75) halves went from 50.8 to 30.6 us so; taken by a
  // cluster (over (0, 2) of (323, 323, 323), 36.5 to 40.9), by a block of
  // 1024 (over (0, 3) of (1297, 16, 41, 39), 32.4 to 41.4) or broadcast back
  // in the same kernel (x - mean(x, (0, 3)) of (75, 75, 75, 75), 89.8 to
  // 221.3), they ran slower (H100, bench/RESULTS.md, 2026-11-27).
  constexpr int kCoveredThreads = 512;
  if (!spec.columns && spec.vec == 1 && spec.reduced.size() > 1) {
    choose_walk(covered, offsets, limits);
    if (covered.covered && covered.walk == &held_rows_walk() &&
        covered.tr * covered.to <= kCoveredThreads) {
      spec = std::move(covered);
    }
  }
  // Rows still read an element at a time over several reduced dims take
  // their runs as lanes where the same walk takes them so: held, or
  // streamed of 1- and 2-byte elements. Held, 31 rows of the sweep ran a
  // median 0.92 of the time (x - mean(x, (1, 3)) of (91, 91, 91, 91) f32
  // 221.8 -> 163.0 us), none slower by more than 3%; 12 rows of streamed
  // halves 0.65 to 0.97 (sum over (0, 2) of (203, 203, 203) f16 8.3 -> 5.4
  // us). Streamed floats and doubles lost up to 11% on rows of few outputs
  // (sum over (0, 1, 3) of (2070, 6, 156, 9) f32 27.8 -> 31.0) as often as
  // they gained (H200, bench/RESULTS.md).
  const bool laned_walk = spec.walk == &held_rows_walk() ||
                          (spec.walk == &streamed_rows_walk() && group_bytes(spec) <= 2);
  if (!spec.columns && spec.vec == 1 && !spec.covered && spec.reduced.size() > 1 && laned_walk) {
    ReduceSpec laned = unwalked;
    laned.run_lanes = true;
    choose_walk(laned, offsets, limits);
    if (laned.run_lanes && laned.walk == spec.walk) spec = std::move(laned);
  }
  return spec;
}

}  // namespace nf::jit
