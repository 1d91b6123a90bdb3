#include "codegen/fused_spec.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "codegen/fused_walk.hpp"
#include "core/shape_util.hpp"

namespace nf::jit {
namespace {

// An array that broadcasts to the domain with as many elements is the
// domain's shape but for dims of 1: contiguous, its element i is the
// domain's (a (n,) operand over (1, n) is flat).
Access access_of(const Layout& l, const Shape& domain) {
  if (numel(l.shape) == 1) return Access::scalar;
  if (numel(l.shape) == numel(domain) && l.contiguous()) return Access::flat;
  return Access::strided;
}

// Elements a walk takes over a dim of n in pieces of `piece`, the last one
// partial.
std::int64_t padded(std::int64_t n, int piece) {
  return (n + piece - 1) / piece * piece;
}

// Of tiles `edge` along a dim of `along` by a length of a power of 2 along
// the last dim of `last`, at most `elements` in all and a whole number of
// the block's trips (`trip`), the cheapest: the fewest padded elements and
// tiles, counting a tile's fixed costs as 128 elements'. A tile longer one
// way than the other costs 5% more for each factor of 2, so that of tiles
// about as costly the squarest is taken: both phases' warps then read and
// write rows as long. Of equal costs, the largest.
struct TileCost {
  std::pair<double, int> cost{0, 0};
  int edge = 0, length = 0;

  void consider(int e, std::int64_t along, std::int64_t last, int elements, int trip) {
    for (int l = kMinTileLength; l <= kMaxTileLength && e * l <= elements; l *= 2) {
      if (e * l % trip != 0) continue;
      const double tiles = double(padded(along, e) / e) * double(padded(last, l) / l);
      const double ratio = double(std::max(e, l)) / std::min(e, l);
      const std::pair<double, int> c{tiles * (double(e) * l + 128) * (1 + 0.05 * std::log2(ratio)),
                                     -e * l};
      if (edge == 0 || c < cost) {
        cost = c;
        edge = e;
        length = l;
      }
    }
  }
};

// A permuted view: unit stride along a collapsed dim before the last (the
// tile_dim), and a stride along the last that is neither 0 nor 1. Where the
// last dim holds a warp's row and the other a sector, the cheapest tile
// (TileCost): a (76, 76) face of 2-byte elements takes 16 x 32 tiles rather
// than 64 x 64, which would leave most threads idle.
void choose_tile(FusedSpec& spec, const std::vector<std::size_t>& views, int elements) {
  const Shape& dims = spec.walk_dims;
  const Strides* tiled = nullptr;  // the strides of the view that sets tile_dim
  for (std::size_t j : views) {
    const Strides& st = spec.walk_strides[j];
    if (st.back() == 0 || st.back() == 1 || dims.back() < kMinTileLength) continue;
    for (std::size_t d = 0; d + 1 < st.size() && spec.tile_dim < 0; ++d)
      if (st[d] == 1 && dims[d] >= kMinTileEdge) spec.tile_dim = int(d);
    tiled = &st;
    if (spec.tile_dim >= 0) break;
  }
  if (spec.tile_dim < 0) return;
  // Tiles of 2-byte elements move 64 bytes a warp access and keep L2 busier
  // than DRAM (86-92% of its throughput on the H100, bench/RESULTS.md). Where
  // the output steps fewer than 512 elements between neighbours along the
  // permuted dim, the sectors an element-at-a-time walk reads stay in L1
  // until the next rows use them: that walk is faster there ((76, 76, 76, 76)
  // axes (0, 1, 3, 2) 98% of copy against 70% in tiles; 552 apart, 53% against 68%).
  const auto p = std::size_t(spec.tile_dim);
  std::int64_t step = 1;
  for (std::size_t d = p + 1; d < dims.size(); ++d) step *= dims[d];
  if (elements == kNarrowTileElements && step < kNarrowTileMinStep) {
    spec.tile_dim = -1;
    return;
  }
  const std::int64_t along = dims[p], last = dims.back();
  // A tile is a whole number of the block's trips: an element a thread,
  // a pair where the elements may be taken in pairs (tiles_take_pairs).
  const int trip = elements == kNarrowTileElements ? 2 * kTileThreads : kTileThreads;
  TileCost best;
  for (int edge = kMinTileEdge; edge * kMinTileLength <= elements; edge *= 2)
    best.consider(edge, along, last, elements, trip);
  // Where the view's rows along the tiled dim lie apart and tiles of a power
  // of 2 would cut each into three pieces or more, most pieces start and end
  // mid-sector: a tile takes the whole dim instead, its rows read through by
  // the block's threads. (76, 76, 76, 76) halves reversed: 16 x 32 tiles
  // 116.0 us, 80 x 32 72.5. Where the rows follow one another, or a row is
  // one or two pieces, the power of 2 was as fast or faster (bench/RESULTS.md,
  // 2026-11-30).
  const auto whole = int(padded(along, kMinTileEdge));
  const bool apart = tiled->back() != along;
  if (apart && padded(along, best.edge) / best.edge >= 3 && whole * kMinTileLength <= elements) {
    TileCost taken_whole;
    taken_whole.consider(whole, along, last, elements, trip);
    if (taken_whole.edge != 0) best = taken_whole;
  }
  spec.tile_edge = best.edge;
  spec.tile_length = best.length;
}

// Pairs of 2-byte elements, 4 bytes an access, in both phases of a tile:
// where every array has 2-byte elements and every pair a tile reads or
// writes starts on 4 bytes: even dims along the tile, even offsets, and
// even strides of the permuted views but the unit one. 2-byte tiles were
// bound by L2's throughput at 64 bytes a warp access (bench/RESULTS.md).
bool tiles_take_pairs(const FusedSpec& spec, const std::vector<std::size_t>& views,
                      const std::vector<Layout>& all) {
  const Shape& dims = spec.walk_dims;
  const auto p = std::size_t(spec.tile_dim);
  if (dims[p] % 2 != 0 || dims.back() % 2 != 0) return false;
  for (const Layout& l : all)
    if (itemsize(l.dtype) != 2 || l.offset % 2 != 0) return false;
  for (std::size_t j : views) {
    const Strides& st = spec.walk_strides[j];
    if (st[p] != 1) continue;  // read an element at a time
    for (std::size_t d = 0; d < st.size(); ++d)
      if (d != p && st[d] % 2 != 0) return false;
  }
  return true;
}

// The domain with adjacent dims merged wherever every strided read steps
// through them as through one, dims of 1 dropped, each strided read's strides
// over it (FusedSpec::walk_dims), and the vector width along its last dim.
void collapse_dims(FusedSpec& spec, const std::vector<Layout>& all, const Shape& domain) {
  for (const OperandSpec& w : spec.writes)
    if (w.access == Access::strided) return;
  std::vector<std::size_t> views;
  for (std::size_t j = 0; j < spec.reads.size(); ++j)
    if (spec.reads[j].access == Access::strided) views.push_back(j);
  if (views.empty()) return;
  std::vector<Strides> full;  // each view's strides over the domain
  for (std::size_t j : views)
    full.push_back(broadcast_strides(all[j].shape, all[j].strides, domain));
  Shape dims;
  std::vector<Strides> strides(views.size());
  for (std::size_t d = 0; d < domain.size(); ++d) {
    if (domain[d] == 1) continue;
    bool merge = !dims.empty();
    for (std::size_t v = 0; v < views.size(); ++v)
      merge = merge && strides[v].back() == full[v][d] * domain[d];
    if (merge) dims.back() *= domain[d];
    if (!merge) dims.push_back(domain[d]);
    for (std::size_t v = 0; v < views.size(); ++v) {
      if (merge) strides[v].back() = full[v][d];
      if (!merge) strides[v].push_back(full[v][d]);
    }
  }
  if (dims.empty()) {
    dims = {1};
    for (Strides& st : strides) st = {0};
  }
  spec.walk_dims = dims;
  spec.walk_strides.assign(spec.reads.size(), {});
  for (std::size_t v = 0; v < views.size(); ++v) spec.walk_strides[views[v]] = strides[v];
  std::size_t widest_all = 1;
  for (const Layout& l : all) widest_all = std::max(widest_all, itemsize(l.dtype));
  choose_tile(spec, views, widest_all <= 2 ? kNarrowTileElements : kTileElements);
  spec.tile_pairs = spec.tile_dim >= 0 && tiles_take_pairs(spec, views, all);
  // 16-byte vectors of the widest array loaded a vector at a time: flat ones
  // and views with unit stride along the last dim, each starting on a vector
  // boundary at every coordinate.
  const std::size_t reads = spec.reads.size();
  auto vectors = [&](std::size_t j) {
    const Access a = j < reads ? spec.reads[j].access : spec.writes[j - reads].access;
    return a == Access::flat || (a == Access::strided && spec.walk_strides[j].back() == 1);
  };
  std::size_t widest = 1;
  for (std::size_t j = 0; j < all.size(); ++j)
    if (vectors(j)) widest = std::max(widest, itemsize(all[j].dtype));
  const auto width = std::int64_t(16 / widest);
  bool whole = dims.back() % width == 0;
  for (std::size_t j = 0; j < all.size(); ++j) {
    if (!vectors(j)) continue;
    whole = whole && all[j].offset % width == 0;
    if (j < reads && spec.reads[j].access == Access::strided) {
      const Strides& st = spec.walk_strides[j];
      for (std::size_t d = 0; d + 1 < st.size(); ++d) whole = whole && st[d] % width == 0;
    }
  }
  // Else the flat arrays' vectors (make_fused_spec's vector_width), which
  // may cross the last dim's end.
  spec.walk_vector_width = whole ? int(width) : spec.vector_width;
  spec.walk_wraps = !whole && spec.vector_width > 1;
}

}  // namespace

Layout write_layout(const Schedule& s, int i, const std::vector<std::optional<Layout>>& layouts,
                    const std::vector<Array>& outputs) {
  if (s.root_of[i] >= 0) {
    const Array& a = outputs[s.root_of[i]];
    return {a.dtype(), a.shape(), a.strides(), a.offset()};
  }
  return *layouts[i];
}

Shape tile_grid(const FusedSpec& spec) {
  Shape grid = spec.walk_dims;
  std::int64_t& along = grid[std::size_t(spec.tile_dim)];
  along = padded(along, spec.tile_edge) / spec.tile_edge;
  grid.back() = padded(grid.back(), spec.tile_length) / spec.tile_length;
  return grid;
}

FusedSpec make_fused_spec(const Program& p, const Schedule& s, const Step& step,
                          const std::vector<std::optional<Layout>>& layouts,
                          const std::vector<Array>& outputs) {
  FusedSpec spec;
  spec.program = &p;
  spec.plan = &s;
  spec.step = &step;
  constexpr std::int64_t kInt32Reach = std::int64_t(1) << 31;
  spec.index64 = numel(step.domain) >= kInt32Reach;
  std::vector<Layout> all;
  for (int r : step.reads) all.push_back(*layouts[r]);
  for (int w : step.writes) all.push_back(write_layout(s, w, layouts, outputs));
  std::size_t widest = 1;
  bool aligned = true;
  for (std::size_t j = 0; j < all.size(); ++j) {
    const Layout& l = all[j];
    const Access a = access_of(l, step.domain);
    (j < step.reads.size() ? spec.reads : spec.writes).push_back({l.dtype, a});
    spec.index64 = spec.index64 || l.beyond_int32();
    if (a == Access::flat) widest = std::max(widest, itemsize(l.dtype));
  }
  // 16-byte vectors for the widest dtype; every flat array must start on a
  // vector boundary (buffers themselves are 256-byte aligned).
  const std::int64_t width = std::int64_t(16 / widest);
  for (std::size_t j = 0; j < all.size(); ++j) {
    const Access a =
        j < step.reads.size() ? spec.reads[j].access : spec.writes[j - step.reads.size()].access;
    if (a == Access::flat && all[j].offset % width != 0) aligned = false;
  }
  spec.vector_width = aligned && numel(step.domain) >= width ? int(width) : 1;
  collapse_dims(spec, all, step.domain);
  // The first walk that applies takes the step and sets its launch shape.
  for (const FusedWalk* walk : fused_walks()) {
    if (walk->applies(spec)) {
      spec.walk = walk;
      break;
    }
  }
  return spec;
}

}  // namespace nf::jit
