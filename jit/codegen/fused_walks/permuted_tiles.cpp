// Permuted tiles: where a view is contiguous along a dim other than the last
// of the collapsed dims (a transposed or axis-permuted operand, A + A.T())
// and every array written is flat, a block takes tiles of that dim and the
// last at the same other coordinates (their sides: fused_spec.cpp). Its
// warps first read the permuted views along the dim they are contiguous in,
// into a padded shared-memory tile each; then they compute along the last
// dim, where the flat arrays and the outputs are contiguous, taking the
// permuted views from the tiles. Both the reads and the writes are coalesced.
#include <string>

#include "codegen/expressions.hpp"
#include "codegen/fused_kernel.hpp"
#include "codegen/fused_spec.hpp"
#include "codegen/fused_walk.hpp"
#include "codegen/source_writer.hpp"

namespace nf::jit {
namespace {

class PermutedTiles final : public FusedWalk {
 public:
  // Collapsed steps with a permuted view (FusedSpec::tile_dim) that compute
  // no iota; 256 threads take a tile (fused_spec.hpp), an element of it
  // each per loop trip.
  bool applies(FusedSpec& spec) const override {
    if (spec.walk_dims.empty() || spec.tile_dim < 0) return false;
    if (computes_iota(spec)) return false;
    spec.collapsed = true;
    spec.vector_width = 1;
    spec.unroll = spec.tile_edge * spec.tile_length / kTileThreads;
    for (std::size_t j = 0; j < spec.reads.size(); ++j) {
      if (spec.reads[j].access != Access::strided) continue;
      if (spec.walk_strides[j][std::size_t(spec.tile_dim)] == 1)
        spec.reads[j].access = Access::tiled;
    }
    return true;
  }

  std::string comment(const FusedSpec& s) const override {
    return "Permuted tiles: a view is contiguous along collapsed dim " +
           std::to_string(s.tile_dim) + " of " + std::to_string(s.walk_dims.size()) +
           ", not the last;\n"
           "a block takes tiles of " +
           std::to_string(s.tile_edge) + " elements along that dim by " +
           std::to_string(s.tile_length) +
           " along the last: its warps\n"
           "read the views marked tile along that dim into shared memory, then compute\n"
           "along the last, where the flat arrays are contiguous, so that reads and\n"
           "writes are coalesced." +
           whole_dim(s) +
           (prefetches(s)
                ? "\nThe flat arrays' elements are loaded before the tiles are read, beside\n"
                  "those reads, so that a tile waits for memory once."
                : "");
  }

  void loop(const FusedKernel& k, SourceWriter& w) const override {
    const FusedSpec& s = k.spec();
    const int rank = int(s.walk_dims.size()), p = s.tile_dim, last = rank - 1;
    const std::string P = std::to_string(p), L = std::to_string(last);
    const std::string E = std::to_string(s.tile_edge), N = std::to_string(s.tile_length);
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      if (s.reads[j].access != Access::tiled) continue;
      // Padding to an odd number of 4-byte words a row: a warp reading down
      // a column meets no bank twice.
      const DType t = s.reads[j].dtype;
      const std::string pad = std::to_string(itemsize(t) < 4 ? 4 / itemsize(t) : 1);
      w.line("__shared__ " + std::string(storage_ctype(t)) + " tile" + std::to_string(j) + "[" + N +
             "][" + E + " + " + pad + "];");
    }
    std::string count = "tiles.d[0]";
    for (int d = 1; d < rank; ++d) count += " * tiles.d[" + std::to_string(d) + "]";
    w.line("const nf_idx count = " + count + ";");
    // The flat index steps this much along the tiled dim (C order).
    std::string step = "dom.d[" + std::to_string(p + 1) + "]";
    for (int d = p + 2; d < rank; ++d) step += " * dom.d[" + std::to_string(d) + "]";
    w.line("const nf_idx along = " + step + ";");
    w.open("for (nf_idx u = blockIdx.x; u < count; u += gridDim.x)");
    w.line("// The tile's first element: its place in the grid of tiles.");
    w.line("nf_idx rest = u;");
    for (int d = last; d > 0; --d) {
      w.line("nf_idx c" + std::to_string(d) + " = nf_coordinate(tiles, " + std::to_string(d) +
             ", rest);");
    }
    w.line("nf_idx c0 = rest;");
    w.line("c" + P + " *= " + E + ";");
    w.line("c" + L + " *= " + N + ";");
    w.line("// The tile's last element along each dim, where it is partial.");
    w.line("const int ep = dom.d[" + P + "] - c" + P + " < " + E + " ? int(dom.d[" + P + "] - c" +
           P + ") - 1 : " + E + " - 1;");
    w.line("const int el = dom.d[" + L + "] - c" + L + " < " + N + " ? int(dom.d[" + L + "] - c" +
           L + ") - 1 : " + N + " - 1;");
    std::string first = "c0";
    for (int d = 1; d < rank; ++d) {
      if (d > 1) first = "(" + first + ")";
      first += " * dom.d[" + std::to_string(d) + "] + c" + std::to_string(d);
    }
    w.line("const nf_idx first_i = " + first + ";");
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      const Access a = s.reads[j].access;
      if (a == Access::flat || a == Access::scalar) continue;
      const std::string J = std::to_string(j);
      w.line("const nf_idx at" + J + " = " + k.offset("st_in" + J, Access::strided) + ";");
    }
    const bool prefetch = prefetches(s);
    if (prefetch) prefetch_flat(k, w);
    w.line("__syncthreads();  // the last tile's values are read");
    w.line("// Past a partial tile's end a thread loads the last element again, so");
    w.line("// that no load waits on a branch and every cell of the tile is set.");
    read_tiles(s, w);
    w.line("__syncthreads();");
    if (s.tile_pairs) {
      compute_pairs(k, w, prefetch);
    } else {
      compute(k, w, prefetch);
    }
    w.close();
  }

 private:
  // Phase 1: warps along the tiled dim, a thread an element (or a pair) of
  // each tiled view a trip, into its tile.
  static void read_tiles(const FusedSpec& s, SourceWriter& w) {
    const int pair = s.tile_pairs ? 2 : 1, across = s.tile_edge / pair;
    const std::string L = std::to_string(s.walk_dims.size() - 1);
    w.line("#pragma unroll");
    w.open("for (int k = 0; k < " + std::to_string(s.unroll / pair) + "; ++k)");
    const std::string A = std::to_string(across), twice = pair == 2 ? "2 * " : "";
    if (kTileThreads % across == 0) {
      w.line("const int a = " + twice + "(threadIdx.x % " + A + "), b = threadIdx.x / " + A +
             " + " + std::to_string(kTileThreads / across) + " * k;  // warps along the tiled dim");
    } else {
      // An edge that takes a whole dim of other than a power of 2: the
      // block's threads run on along the next rows.
      w.line("const int e = threadIdx.x + " + std::to_string(kTileThreads) + " * k;");
      w.line("const int a = " + twice + "(e % " + A + "), b = e / " + A +
             ";  // warps along the tiled dim");
    }
    // A pair's first element is even, the tile's last one odd.
    w.line(std::string("const int ca = a < ep ? a : ep") + (pair == 2 ? " - 1" : "") +
           ", cb = b < el ? b : el;");
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      if (s.reads[j].access != Access::tiled) continue;
      const std::string J = std::to_string(j);
      const std::string at = "at" + J + " + ca + cb * st_in" + J + ".d[" + L + "]";
      if (pair == 1) {
        w.line("tile" + J + "[b][a] = in" + J + "[" + at + "];");
        continue;
      }
      w.line("const unsigned int v" + J + " = *(const unsigned int*)&in" + J + "[" + at + "];");
      w.line("tile" + J + "[b][a] = (unsigned short)v" + J + ";");
      w.line("tile" + J + "[b][a + 1] = (unsigned short)(v" + J + " >> 16);");
    }
    w.close();
  }

  // A view's element at the tile's coordinates a and b + `next` (0 or 1).
  static std::string view_read(const FusedKernel& k, std::size_t j, const std::string& next) {
    const FusedSpec& s = k.spec();
    const std::string J = std::to_string(j), b = next.empty() ? "b" : "b + " + next;
    const std::string cb = next.empty() ? "cb" : "cb + " + next;
    const std::string P = std::to_string(s.tile_dim), L = std::to_string(s.walk_dims.size() - 1);
    const Access a = s.reads[j].access;
    if (a == Access::tiled) return "tile" + J + "[" + b + "][a]";
    return "in" + J + "[at" + J + " + ca * st_in" + J + ".d[" + P + "] + " + cb + " * st_in" + J +
           ".d[" + L + "]]";
  }

  // Opens phase 2's loop over a thread's trips (closed by the caller) and
  // finds where its place lies: warps along the last dim, a thread an
  // element (i) or a pair (i0, i0 + 1) a trip.
  static void open_phase2_trip(const FusedSpec& s, SourceWriter& w) {
    w.line("#pragma unroll");
    w.open("for (int k = 0; k < " + std::to_string(phase2_trips(s)) + "; ++k)");
    if (s.tile_pairs) {
      const std::string across = std::to_string(s.tile_length / 2);
      w.line("const int b = 2 * (threadIdx.x % " + across + "), a = threadIdx.x / " + across +
             " + " + std::to_string(kTileThreads / (s.tile_length / 2)) +
             " * k;  // warps along the last dim");
      w.line("const int ca = a < ep ? a : ep, cb = b < el ? b : el - 1;");
      w.line("const nf_idx i0 = first_i + ca * along + cb;");
      return;
    }
    const std::string N = std::to_string(s.tile_length);
    w.line("const int b = threadIdx.x % " + N + ", a = threadIdx.x / " + N + " + " +
           std::to_string(kTileThreads / s.tile_length) + " * k;  // warps along the last dim");
    w.line("const int ca = a < ep ? a : ep, cb = b < el ? b : el;");
    w.line("const nf_idx i = first_i + ca * along + cb;");
  }

  // A prefetched flat read j: its register of trip k. Appended, not
  // concatenated: GCC 12 takes "p" + std::to_string(j) for an overlapping
  // copy (-Wrestrict, a false positive).
  static std::string prefetched(std::size_t j) {
    std::string r = "p";
    r += std::to_string(j);
    r += "[k]";
    return r;
  }

  // Where a tile spans all of the tiled dim, say so: each row of the view
  // is then read whole by one tile (fused_spec.cpp says where tiles do).
  static std::string whole_dim(const FusedSpec& s) {
    const std::int64_t along = s.walk_dims[std::size_t(s.tile_dim)];
    if (s.tile_edge < along) return "";
    return "\nA tile spans all " + std::to_string(along) +
           " elements of that dim: each row of the view is\nread whole by one tile.";
  }

  // Phase 2's trips.
  static int phase2_trips(const FusedSpec& s) { return s.tile_pairs ? s.unroll / 2 : s.unroll; }

  // A flat read j at the thread's place in phase 2: an element, or a pair
  // in one 4-byte word.
  static std::string flat_load(const FusedSpec& s, std::size_t j) {
    const std::string J = std::to_string(j);
    return s.tile_pairs ? "*(const unsigned int*)&in" + J + "[i0]" : "in" + J + "[i]";
  }

  // Whether phase 2's flat reads are loaded before phase 1, beside the
  // tiles' reads: where every array has 1- or 2-byte elements, whether the
  // tiles move elements or pairs. Loaded after the barrier, they waited for
  // DRAM a second time each tile: x.T() + y of 5793 x 5793 halves 71.3 us,
  // 66.2 loaded first; of the 24 rows of 64 MiB whose tiles move elements,
  // 22 faster by 5-32%, none slower by more than 1%. Rows of f32 gained as
  // often as they lost (bench/RESULTS.md, 2026-11-30).
  static bool prefetches(const FusedSpec& s) {
    bool flat = false;
    for (const OperandSpec& r : s.reads) flat = flat || r.access == Access::flat;
    if (!flat) return false;
    for (const OperandSpec& r : s.reads)
      if (itemsize(r.dtype) > 2) return false;
    for (const OperandSpec& o : s.writes)
      if (itemsize(o.dtype) > 2) return false;
    return true;
  }

  // Phase 2's flat reads, a register each of a thread's places.
  static void prefetch_flat(const FusedKernel& k, SourceWriter& w) {
    const FusedSpec& s = k.spec();
    const std::string trips = std::to_string(phase2_trips(s));
    w.line("// The flat arrays' elements of phase 2, loaded while the tiles are read.");
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      if (s.reads[j].access != Access::flat) continue;
      const std::string type = s.tile_pairs ? "unsigned int" : storage_ctype(s.reads[j].dtype);
      w.line(type + " p" + std::to_string(j) + "[" + trips + "];");
    }
    open_phase2_trip(s, w);
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      if (s.reads[j].access != Access::flat) continue;
      w.line(prefetched(j) + " = " + flat_load(s, j) + ";");
    }
    w.close();
  }

  // Phase 2: warps along the last dim, a thread an element a trip; the
  // flat reads from registers where they were loaded before phase 1.
  static void compute(const FusedKernel& k, SourceWriter& w, bool prefetch) {
    const FusedSpec& s = k.spec();
    open_phase2_trip(s, w);
    k.element(w, [&](std::size_t j) {
      const Access a = s.reads[j].access;
      if (a == Access::flat) return prefetch ? prefetched(j) : flat_load(s, j);
      if (a == Access::scalar) return "in" + std::to_string(j) + "[0]";
      return view_read(k, j, "");
    });
    w.open("if (a == ca && b == cb)");
    k.stores(w);
    w.close();
    w.close();
  }

  // Phase 2 in pairs: a thread two neighbours along the last dim a trip,
  // the flat arrays loaded and stored 4 bytes at a time.
  static void compute_pairs(const FusedKernel& k, SourceWriter& w, bool prefetch) {
    const FusedSpec& s = k.spec();
    open_phase2_trip(s, w);
    for (std::size_t j = 0; j < s.reads.size(); ++j) {
      if (s.reads[j].access != Access::flat) continue;
      const std::string J = std::to_string(j);
      w.line("const unsigned int f" + J + " = " + (prefetch ? prefetched(j) : flat_load(s, j)) +
             ";");
    }
    for (std::size_t j = 0; j < s.writes.size(); ++j)
      w.line("unsigned short out" + std::to_string(j) + "_0, out" + std::to_string(j) + "_1;");
    for (const char* next : {"0", "1"}) {
      const std::string half = next;
      w.open("");
      w.line("const nf_idx i = i0 + " + half + ";");
      k.element(w, [&](std::size_t j) -> std::string {
        const std::string J = std::to_string(j);
        switch (s.reads[j].access) {
          case Access::scalar:
            return "in" + J + "[0]";
          case Access::flat:
            return half == "0" ? "(unsigned short)f" + J : "(unsigned short)(f" + J + " >> 16)";
          default:
            return view_read(k, j, half == "0" ? "" : "1");
        }
      });
      for (std::size_t j = 0; j < s.writes.size(); ++j) {
        const std::string J = std::to_string(j);
        w.line("out" + J + "_" + half + " = " + store_expr(s.writes[j].dtype, "r" + J) + ";");
      }
      w.close();
    }
    w.open("if (a == ca && b == cb)");
    for (std::size_t j = 0; j < s.writes.size(); ++j) {
      const std::string J = std::to_string(j);
      w.line("*(unsigned int*)&out" + J + "[i0] = out" + J + "_0 | (unsigned int)out" + J +
             "_1 << 16;");
    }
    w.close();
    w.close();
  }
};

}  // namespace

const FusedWalk& permuted_tiles_walk() {
  static const PermutedTiles walk;
  return walk;
}

}  // namespace nf::jit
