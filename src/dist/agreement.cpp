#include "dist/agreement.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "core/hash_mix.hpp"
#include "dist/world.hpp"
#include "numfuse/errors.hpp"

namespace nf::dist {
namespace {

// What a rank says: the call's fields, its rank, then the first kDims
// dimensions and a hash of any past them.
constexpr int kDims = 8;
enum Field {
  kCollective,
  kOp,
  kRoot,
  kDType,
  kDevice,
  kArrays,
  kLayout,
  kReady,
  kRank,
  kNdim,
  kFirstDim
};
constexpr int kFields = kFirstDim + kDims + 1;
using Said = std::array<std::int64_t, kFields>;

Said encode(const Call& c) {
  Said s{};
  s[kCollective] = static_cast<int>(c.collective);
  s[kOp] = static_cast<int>(c.op);
  s[kRoot] = c.root;
  s[kDType] = static_cast<int>(c.dtype);
  s[kDevice] = static_cast<int>(c.device);
  s[kArrays] = c.arrays;
  s[kLayout] = static_cast<std::int64_t>(c.layout);
  s[kReady] = c.ready;
  s[kRank] = rank();
  s[kNdim] = static_cast<std::int64_t>(c.shape.size());
  std::uint64_t rest = 0;
  for (std::size_t i = 0; i < c.shape.size(); ++i) {
    if (i < kDims) {
      s[kFirstDim + i] = c.shape[i];
    } else {
      rest = hash_mix(rest, static_cast<std::uint64_t>(c.shape[i]));
    }
  }
  s[kFirstDim + kDims] = static_cast<std::int64_t>(rest);
  return s;
}

// A rank's call as far as it was said (shapes past kDims axes end in "...").
std::string describe(const Said& s) {
  Call c;
  c.collective = static_cast<Collective>(s[kCollective]);
  c.op = static_cast<Op>(s[kOp]);
  c.root = static_cast<int>(s[kRoot]);
  c.dtype = static_cast<DType>(s[kDType]);
  c.device = static_cast<Device::Kind>(s[kDevice]);
  c.arrays = static_cast<int>(s[kArrays]);
  for (std::int64_t i = 0; i < std::min<std::int64_t>(s[kNdim], kDims); ++i) {
    c.shape.push_back(s[kFirstDim + i]);
  }
  std::string d = describe(c);
  // The shape's is the last parenthesis: "all_reduce(sum) of (...) f32 on cpu".
  if (s[kNdim] > kDims) d.replace(d.rfind(')'), 1, ", ...)");
  return d;
}

// "rank 0: all_reduce(sum) of (3, 4) f32 on cpu; ranks 1, 2: ...", ranks
// that said the same grouped.
std::string each_rank(const std::vector<Said>& all) {
  std::map<std::string, std::vector<std::int64_t>> by_call;
  std::vector<std::string> order;
  for (const Said& s : all) {
    std::vector<std::int64_t>& ranks = by_call[describe(s)];
    if (ranks.empty()) order.push_back(describe(s));
    ranks.push_back(s[kRank]);
  }
  std::string out;
  for (const std::string& call : order) {
    const std::vector<std::int64_t>& ranks = by_call[call];
    out += out.empty() ? "" : "; ";
    out += ranks.size() == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      out += (i ? ", " : "") + std::to_string(ranks[i]);
    }
    out += ": " + call;
  }
  return out;
}

bool same(const Said& a, const Said& b, int first, int last) {
  for (int i = first; i < last; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

[[noreturn]] void refuse(const std::vector<Said>& all) {
  const Said& first = all.front();
  for (const Said& s : all) {
    if (!same(s, first, kCollective, kDType) || !same(s, first, kDevice, kLayout)) {
      throw ValueError(
          "nf::dist: the ranks called different collectives (every rank must call the "
          "same ones in the same order, on the same kind of device): " +
          each_rank(all));
    }
  }
  for (const Said& s : all) {
    if (s[kDType] != first[kDType]) {
      throw DTypeError("nf::dist: the ranks passed different dtypes to one collective: " +
                       each_rank(all));
    }
  }
  if (first[kArrays] != 1) {
    throw ShapeError(
        "nf::dist: the ranks passed lists of arrays of different shapes to one "
        "collective: " +
        each_rank(all));
  }
  throw ShapeError("nf::dist: the ranks passed different shapes to one collective: " +
                   each_rank(all));
}

std::chrono::seconds timeout() {
  const std::optional<std::string> s = config::read(config::Var::dist_timeout);
  return std::chrono::seconds(s ? std::stoll(*s) : 300);
}

// MPI_Allgather, but a rank that never comes ends the job after the
// timeout rather than holding every other rank forever.
std::vector<Said> exchange(const Said& mine, const Call& call) {
  std::vector<Said> all(static_cast<std::size_t>(size()));
  MPI_Request request;
  MPI_Iallgather(mine.data(), kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T,
                 communicator(), &request);
  using clock = std::chrono::steady_clock;
  const clock::time_point start = clock::now();
  const std::chrono::seconds limit = timeout();
  for (long polls = 0;; ++polls) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return all;
    // Spin while the others are a moment behind; then wait more politely.
    if (polls < 4096) continue;
    if (clock::now() - start > limit) {
      end_job("waited " + std::to_string(limit.count()) + " s in " + describe(call) +
              " for ranks that have not called it (one that skipped it, or one stopped by an "
              "error of its own); NF_DIST_TIMEOUT sets the wait");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace

std::string describe(const Call& c) {
  static const char* const names[] = {"all_reduce", "broadcast", "all_gather", "reduce_scatter",
                                      "barrier"};
  static const char* const ops[] = {"sum", "mean", "max", "min"};
  std::string d = names[static_cast<int>(c.collective)];
  if (c.collective == Collective::barrier) return d;
  if (c.collective == Collective::all_reduce || c.collective == Collective::reduce_scatter) {
    d += std::string("(") + ops[static_cast<int>(c.op)] + ")";
  } else if (c.collective == Collective::broadcast) {
    d += "(root " + std::to_string(c.root) + ")";
  }
  const std::string what = c.arrays == 1 ? to_string(c.shape)
                                         : std::to_string(c.arrays) + " arrays (" +
                                               std::to_string(numel(c.shape)) + " elements)";
  return d + " of " + what + " " + std::string(name(c.dtype)) + " on " +
         (c.device == Device::Kind::cuda ? "cuda" : "cpu");
}

void agree(const Call& call) {
  const std::vector<Said> all = exchange(encode(call), call);
  const Said& first = all.front();
  for (const Said& s : all) {
    if (!same(s, first, kCollective, kReady) || !same(s, first, kNdim, kFields)) refuse(all);
  }
  if (!call.ready) return;
  for (const Said& s : all) {
    if (!s[kReady]) {
      throw ValueError("nf::dist: rank " + std::to_string(s[kRank]) + " could not take part in " +
                       describe(call) + " (its own error says why); no rank changed anything");
    }
  }
}

}  // namespace nf::dist
