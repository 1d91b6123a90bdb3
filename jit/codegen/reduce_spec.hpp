// How a reduction kernel walks its step's domain: the dims split into the
// outputs' dims (kept) and the reduced dims, each merged where every operand
// allows it, every operand's strides over both, and the launch shape, chosen
// by shape: the lanes (reduce_lanes.hpp) map threads to outputs, and the
// first walk (reduce_walk.hpp) that applies sets the rest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/memory_layout.hpp"
#include "plan/schedule.hpp"

namespace nf::jit {

class ReduceWalk;

// How an operand varies along the reduced dims.
enum class Along : std::uint8_t {
  none,     // not at all: one value per output (a row's mean, a bias)
  unit,     // one reduced dim with stride 1: each output's elements lie together
  strided,  // one reduced dim with another stride
  general,  // several reduced dims: coordinates from the reduced index
};

struct ReduceOperand {
  DType dtype;
  Along along;
  Strides kept;             // over ReduceSpec::kept
  Strides reduced;          // over ReduceSpec::reduced
  std::int64_t offset = 0;  // of its first element, in elements
};

struct ReduceSpec {
  const Program* program = nullptr;
  const Schedule* plan = nullptr;
  const Step* step = nullptr;
  Shape kept;     // the outputs' dims, merged, outer to inner (none for a full reduction)
  Shape reduced;  // the reduced dims, merged, outer to inner
  std::vector<ReduceOperand> reads;   // one per step->reads
  std::vector<ReduceOperand> writes;  // one per step->writes
  bool index64 = false;               // 64-bit indices (a domain or offsets past 2^31)
  // Threads along outputs, several sharing each output's reduced elements:
  // for reductions over other than the innermost dims, reads stay coalesced.
  bool columns = false;
  int tr = 1;   // threads sharing one output (a power of two)
  int to = 1;   // outputs per block
  int per = 0;  // groups each thread holds in registers; 0: read again for each pass
  int vec = 1;  // elements per group: one vector load where rows are contiguous
  // Contiguous rows that do not start on a vector boundary (odd widths),
  // each starting at the same place in a vector for every operand: a row's
  // groups are the `groups` whole aligned vectors from `head` elements in
  // (head from the row's address), and the `ends` elements before and after
  // them are taken one at a time in each pass.
  bool shifted = false;
  // Rows over several reduced dims whose runs along the innermost are
  // contiguous but start anywhere in a vector, at the same place for every
  // operand: each run is read as the `covering` aligned vectors of `vec`
  // elements around it, lanes outside the run left out of every pass. Held
  // rows that write no elements only (make_reduce_spec says why): it sets
  // this before choosing the lanes to ask for it, and the lanes keep it
  // where the runs allow.
  bool covered = false;
  // Rows over several reduced dims read an element at a time whose runs
  // along the innermost (contiguous in every operand that varies) are at
  // most tr long: a thread keeps one place `lane_d` along the runs and reads
  // it in every (tr / run)-th run from `lane_q`, so that no element's
  // address takes a division, and a warp reads whole runs. Held or streamed
  // rows (make_reduce_spec says where); it sets this before choosing the
  // lanes to ask for it, and the lanes keep it where few threads idle
  // (runs_as_lanes).
  bool run_lanes = false;
  // Outputs of too many elements to hold, too few to fill a device, are
  // split into `chunks` of `chunk` groups each, a block per chunk, and each
  // pass becomes a kernel: blocks write their partial results, and the next
  // kernel combines them in a fixed order before its own pass.
  std::int64_t chunks = 1;
  std::int64_t chunk = 0;
  // A split whose reads pass L2: every other kernel takes the chunks in
  // reverse order, from those the kernel before read last.
  bool reverse = false;
  // A reverse split whose step is read again (Step::read_again): the odd
  // kernels take the chunks in reverse, the first among them, so that the
  // next step starts on the chunks L2 holds.
  bool last_first = false;
  // Rows too long for one block to hold, where the device has thread block
  // clusters (sm_90): `cluster` blocks share each output, each holding
  // tr * per consecutive groups, and meet through distributed shared memory
  // after each pass. One kernel; 1: no cluster.
  int cluster = 1;
  // Held rows that fill an SM's registers: each block loops over tiles of
  // `to` outputs and copies the next tiles' elements into shared memory
  // while it reduces the current one, so that its SM keeps reading memory.
  bool prefetch = false;
  // Columns read more than once, each thread's elements held in shared
  // memory rather than registers (per may pass max_held).
  bool shared = false;
  // Shared columns whose 1- and 2-byte reads each hold, per element, the
  // aligned 4-byte word around it (held_in_words): cp.async copies 4 bytes
  // at the least, and the elements of neighbouring outputs need not share one.
  bool words = false;
  // Shared columns of 1- and 2-byte reads whose block's outputs lie together
  // along each row: each row's elements of them are copied in the 16-byte
  // units that cover them (staged_row_bytes a row): a copy moves 16 bytes
  // where an element or its word would move 2 or 4.
  bool staged = false;
  // Held rows whose every thread's groups all lie in the row (groups ==
  // cluster * tr * per): no bounds tests, which cost registers.
  bool whole = false;
  // Columns of 2-byte elements whose neighbouring outputs 2i and 2i + 1 lie
  // together on 4 bytes (pairs_fit): a thread takes both, reading the word
  // that holds their elements where a thread of one output would read 2
  // bytes, so that a warp's load reads 128 bytes of a row, not 64.
  bool pairs = false;
  // The walk that emits the kernels (reduce_walks/); the fields above are
  // its launch shape, and what its kernels' signatures name.
  const ReduceWalk* walk = nullptr;
};

// Groups of `vec` elements along each output; for run lanes, the groups of
// the thread that reads the most runs: tr for each run it reads.
std::int64_t groups_of(const ReduceSpec& spec);
// Covered rows: the aligned vectors that cover a run wherever it starts.
std::int64_t covering(const ReduceSpec& spec);
// Whether a step writes elements along the reduced dims (a reduction
// broadcast back), not only values per output.
bool writes_elements(const ReduceSpec& spec);
// The reads that vary along the reduced dims, by index among spec.reads.
std::vector<int> varying_reads(const ReduceSpec& spec);
// The size of the smallest elements of the reads that vary along the
// reduced dims (8 where none does).
std::size_t narrowest_read(const ReduceSpec& spec);
// Bytes of `per` groups of each of a block's threads of read j, and of every
// read that varies along the reduced dims.
std::int64_t held_bytes(const ReduceSpec& spec, int j, std::int64_t per);
std::int64_t held_bytes(const ReduceSpec& spec, std::int64_t per);
// Bytes a kernel reads, each read element once.
std::int64_t read_bytes(const ReduceSpec& spec);
// Whether read j is held as a 4-byte word per element (ReduceSpec::words).
bool held_in_words(const ReduceSpec& spec, int j);
// Bytes of a staged row of read j (ReduceSpec::staged): the 16-byte units
// that cover `to` elements wherever its rows start.
std::int64_t staged_row_bytes(const ReduceSpec& spec, int j);

// Whether a read's 2-byte elements of outputs 2i and 2i + 1 lie together on
// 4 bytes, wherever they are along the reduced dims: the outputs' innermost
// dim is contiguous and of even length, and every other step is even.
bool pairs_together(const ReduceSpec& spec, const ReduceOperand& read);
// Whether columns may take their outputs in pairs (ReduceSpec::pairs): every
// read that varies has 2-byte elements lying together in pairs, none is one
// value per output, and the step writes values per output alone, from
// reductions of one pass each over elements that depend on no other
// reduction: the work after the element loop is then the same for both.
bool pairs_fit(const ReduceSpec& spec);
// The outputs a launch's threads take: every output, or every pair.
std::int64_t thread_outputs(const ReduceSpec& spec);

// Bytes of a group of `vec` elements of the widest varying operand (both
// elements of a pair), and the registers it takes in a thread (4 for a
// 16-byte vector, 1 for a 1- to 4-byte element or a pair's word).
std::size_t group_bytes(const ReduceSpec& spec);
int group_registers(const ReduceSpec& spec);

// Whether an elementwise value comes from a library function (exp, log, a
// division): work enough to weigh on a kernel.
bool is_library_function(const Node& n);

// Where the walks change; tests lower them to reach every walk on small shapes.
struct ReduceLimits {
  // Groups a thread holds in registers at most (held_groups_at_most).
  int max_held = 8;
  std::int64_t split_below = 128;  // blocks of outputs too few to fill a device
  int chunk_groups = 4096;         // groups of one chunk of a split row
  int max_cluster = 8;             // blocks of a cluster at most; 1: no clusters
  int max_gathered = 16;           // partial results of a split column a thread combines
  // Held rows of a block taking at least `prefetch_from` bytes are
  // prefetched, where they fit in `prefetch_max` bytes of shared memory.
  std::int64_t prefetch_from = 64 * 1024;  // 0: never
  std::int64_t prefetch_max = 0;           // set by arch (reduce_limits_for); 0: never
  // The device's L2 cache: work that fits comes back from it sooner, and
  // walks may take a finer grain. Set by arch; 0: unknown.
  std::int64_t l2_bytes = 0;
};

// Whether rows take their groups a register or less at a time over several
// reduced dims: each group's address takes its coordinates, and a thread
// keeps more of them in flight (groups_in_flight) and holds twice max_held.
// Rows over one run lost with more a thread: x - mean(x, 1) of (4095,
// 4095) f32 at sixteen elements a thread took 42 registers and ran 59.9 us
// where four ran 49.6, of (5793, 5793) bf16 at twelve 92.1 where six ran
// 74.8 (H100, bench/RESULTS.md).
bool scalars_over_several(const ReduceSpec& spec);

// Groups a thread holds in registers at most: limits.max_held, twice as many
// for scalars_over_several, for columns of 4-byte elements, and for columns
// of narrower ones broadcast back: their groups come one to a register.
std::int64_t held_groups_at_most(const ReduceSpec& spec, const ReduceLimits& limits);

// Limits from text such as "max_held=0,split_below=128,max_cluster=1,prefetch_from=0";
// unnamed ones keep their defaults. Throws ValueError naming a bad setting.
ReduceLimits parse_reduce_limits(const std::string& text);
// This process's limits: the defaults, or those NF_REDUCE_LIMITS names, for
// benchmarks that compare walks.
const ReduceLimits& default_reduce_limits();
// `limits` for kernels compiled for `arch` ("sm_80"): no clusters before
// sm_90, no prefetching before sm_80 (cp.async), as much shared memory for
// it as a block of that arch may take, and the L2 of the arch's data-centre
// part where it was measured (sm_90's H100).
ReduceLimits reduce_limits_for(const std::string& arch,
                               ReduceLimits limits = default_reduce_limits());

ReduceSpec make_reduce_spec(const Program& p, const Schedule& s, const Step& step,
                            const std::vector<std::optional<Layout>>& layouts,
                            const std::vector<Array>& outputs, const ReduceLimits& limits);

}  // namespace nf::jit
