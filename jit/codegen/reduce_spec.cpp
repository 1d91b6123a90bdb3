#include "codegen/reduce_spec.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "codegen/fused_spec.hpp"
#include "core/config.hpp"
#include "core/shape_util.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {
namespace {

constexpr int kBlock = 256;  // threads of a block, unless one row needs more
constexpr int kMaxRowThreads = 1024;
constexpr int kGroupsPerThread = 4;  // aim: a few vector loads in flight per thread
constexpr int kSplitThreads = 256;   // threads of a block of a split row
constexpr std::int64_t kMaxChunks = 4096;
constexpr int kMaxCluster = 8;        // the portable cluster size
constexpr int kClusterThreads = 256;  // threads of a block of a cluster

int pow2_at_least(std::int64_t v) {
  int p = 1;
  while (p < v && p < kMaxRowThreads) p *= 2;
  return p;
}

// A row too long for one block to hold (more than max_held groups a thread
// at kMaxRowThreads threads) is shared by a cluster of blocks of
// kClusterThreads threads, as many as make about kGroupsPerThread groups a
// thread, where that many blocks hold it. The cluster reads the row once,
// where a block would read it again for each pass. Returns whether the row
// is shared.
bool cluster_row(ReduceSpec& spec, std::int64_t groups, std::int64_t rows,
                 const ReduceLimits& limits) {
  if (limits.max_cluster <= 1 || limits.max_held <= 0 ||
      groups <= std::int64_t(kMaxRowThreads) * limits.max_held) {
    return false;
  }
  const std::int64_t aim = kClusterThreads * std::min(kGroupsPerThread, limits.max_held);
  const std::int64_t blocks = std::min<std::int64_t>(limits.max_cluster, (groups + aim - 1) / aim);
  const std::int64_t per = (groups + blocks * kClusterThreads - 1) / (blocks * kClusterThreads);
  if (per > limits.max_held || rows * blocks < limits.split_below) return false;
  spec.tr = kClusterThreads;
  spec.to = 1;
  spec.per = int(per);
  spec.cluster = int(blocks);
  return true;
}

// Each thread holds its share of an output's `groups` in registers where
// the share is small enough; otherwise each output's groups are split into
// chunks where the `blocks` of outputs are too few to fill a device. Returns
// whether they are.
bool hold_or_split(ReduceSpec& spec, std::int64_t groups, std::int64_t blocks,
                   const ReduceLimits& limits) {
  const std::int64_t held = (groups + spec.tr - 1) / spec.tr;
  spec.per = held <= limits.max_held ? int(std::max<std::int64_t>(held, 1)) : 0;
  if (spec.per != 0 || blocks >= limits.split_below || groups <= limits.chunk_groups) return false;
  spec.chunks = std::min((groups + limits.chunk_groups - 1) / limits.chunk_groups, kMaxChunks);
  spec.chunk = (groups + spec.chunks - 1) / spec.chunks;
  return true;
}

// Held rows of `prefetch_from` bytes or more a block take an SM's registers,
// and the SM stops reading memory while its one block works on them. Where
// that work includes library functions on every element (softmax's exp and
// division), the block prefetches its next rows meanwhile; where it does
// not (layer norm), prefetching cost more than it saved (bench/RESULTS.md).
// Each vector is copied whole, so its bytes must be a size cp.async copies.
bool prefetches(const ReduceSpec& spec, const ReduceLimits& limits) {
  if (spec.columns || spec.per == 0 || spec.vec == 1 || spec.chunks > 1 || spec.cluster > 1 ||
      limits.prefetch_from <= 0) {
    return false;
  }
  const std::int64_t elements = numel(spec.step->domain);
  const bool heavy = std::any_of(spec.step->nodes.begin(), spec.step->nodes.end(), [&](int i) {
    const Node& n = *spec.program->nodes[i];
    return numel(n.shape) == elements && is_library_function(n);
  });
  if (!heavy) return false;
  for (const ReduceOperand& r : spec.reads) {
    const std::size_t bytes = spec.vec * itemsize(r.dtype);
    if (r.along != Along::none && bytes != 4 && bytes != 8 && bytes != 16) return false;
  }
  const std::int64_t bytes = prefetch_bytes(spec);
  return bytes >= limits.prefetch_from && bytes <= limits.prefetch_max;
}

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
    } else {
      throw ValueError("NF_REDUCE_LIMITS: unknown or invalid setting \"" + item +
                       "\" (max_held, split_below, chunk_groups > 0, max_cluster 1.." +
                       std::to_string(kMaxCluster) + ", prefetch_from)");
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
  return limits;
}

bool is_library_function(const Node& n) {
  const OpInfo& info = op_info(n.op);
  return info.kind == OpKind::elementwise &&
         (info.rule == ResultRule::floating || info.rule == ResultRule::true_divide ||
          n.op == OpId::power);
}

std::int64_t prefetch_bytes(const ReduceSpec& spec, const ReduceOperand& read) {
  if (read.along == Along::none) return 0;
  return std::int64_t(spec.vec * itemsize(read.dtype)) * spec.per * spec.tr * spec.to;
}

std::int64_t prefetch_bytes(const ReduceSpec& spec) {
  std::int64_t bytes = 0;
  for (const ReduceOperand& r : spec.reads) bytes += prefetch_bytes(spec, r);
  return bytes;
}

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
    ReduceOperand o{all[j].dtype, Along::none, {}, {}};
    for (const Dim& d : dims) (d.reduced ? o.reduced : o.kept).push_back(d.strides[j]);
    o.along = along_of(o.reduced);
    (j < step.reads.size() ? spec.reads : spec.writes).push_back(std::move(o));
  }
  for (const Dim& d : dims) (d.reduced ? spec.reduced : spec.kept).push_back(d.size);

  constexpr std::int64_t kInt32Reach = std::int64_t(1) << 31;
  spec.index64 = numel(domain) >= kInt32Reach;
  for (const Layout& l : all) spec.index64 = spec.index64 || l.beyond_int32();

  const std::int64_t n = numel(spec.reduced);
  // The operand that decides the walk: the first one that varies along the
  // reduced dims. Threads follow the smaller of its strides.
  const ReduceOperand* lead = nullptr;
  for (const auto* list : {&spec.reads, &spec.writes}) {
    for (const ReduceOperand& o : *list) {
      if (!lead && o.along != Along::none) lead = &o;
    }
  }
  if (lead && !spec.kept.empty() && numel(spec.kept) > 1) {
    spec.columns = std::llabs(lead->kept.back()) < std::llabs(lead->reduced.back());
  }
  const std::int64_t rows = numel(spec.kept);
  if (spec.columns) {
    spec.to = 32;
    spec.tr = kBlock / spec.to;
    hold_or_split(spec, n, (rows + spec.to - 1) / spec.to, limits);
    return spec;
  }

  // Rows: 16-byte vector loads where every varying operand lies contiguous
  // along its rows and every row starts on a vector boundary.
  const auto operand = [&](std::size_t j) -> const ReduceOperand& {
    return j < spec.reads.size() ? spec.reads[j] : spec.writes[j - spec.reads.size()];
  };
  std::size_t widest = 1;
  bool contiguous_rows = true;
  for (std::size_t j = 0; j < all.size(); ++j) {
    const ReduceOperand& o = operand(j);
    if (o.along == Along::none) continue;
    contiguous_rows = contiguous_rows && o.along == Along::unit;
    widest = std::max(widest, itemsize(all[j].dtype));
  }
  const std::int64_t width = std::int64_t(16 / widest);
  bool aligned = contiguous_rows && n % width == 0;
  for (std::size_t j = 0; j < all.size() && aligned; ++j) {
    const ReduceOperand& o = operand(j);
    if (o.along == Along::none) continue;
    aligned = all[j].offset % width == 0;
    for (std::int64_t k : o.kept) aligned = aligned && k % width == 0;
  }
  spec.vec = aligned ? int(width) : 1;
  const std::int64_t groups = (n + spec.vec - 1) / spec.vec;
  if (!cluster_row(spec, groups, rows, limits)) {
    spec.tr = pow2_at_least((groups + kGroupsPerThread - 1) / kGroupsPerThread);
    spec.to = std::max(1, kBlock / spec.tr);
    if (hold_or_split(spec, groups, rows, limits)) {
      spec.tr = kSplitThreads;
      spec.to = 1;
    }
  }
  spec.whole = spec.per > 0 && groups == std::int64_t(spec.cluster) * spec.tr * spec.per;
  spec.prefetch = prefetches(spec, limits);
  return spec;
}

}  // namespace nf::jit
