// An elementwise walk: how the threads of a fused kernel cover its domain
// (flat groups of vector loads and stores, one element at a time, one
// element at a time through its coordinates where an array is a view). Each
// walk is a unit of its own: when it applies and its launch shape, whether
// the kernel computes coordinates, and the loops it emits through a
// SourceWriter around the element body every walk shares, which the driver
// (FusedKernel, fused_codegen.cpp) puts together with the names, the
// signature, the element function and the parameters.
//
// A new walk is a file under fused_walks/, its line below and its place in
// fused_walks(); CONTRIBUTING.md, "Adding a kernel walk".
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "codegen/fused_codegen.hpp"

namespace nf::jit {

class FusedKernel;
class SourceWriter;

class FusedWalk {
 public:
  virtual ~FusedWalk() = default;

  // Whether the walk takes a step reached as `spec` says, whose
  // vector_width is the widest vector every flat array allows; if so, sets
  // its launch shape there (vector_width, unroll). A walk that does not
  // apply leaves `spec` as it was.
  virtual bool applies(FusedSpec& spec) const = 0;

  // Whether the kernel computes the coordinates of element i (c0...): the
  // element function takes them, and the kernel the domain's dims and the
  // strides of the arrays it reaches through strides.
  virtual bool coordinates() const;
  // The kernel's comment, after its signature: how its threads cover the
  // domain, and why this walk took the step.
  virtual std::string comment(const FusedSpec& spec) const = 0;
  // The loops over the thread's elements, each around the element body.
  virtual void loop(const FusedKernel& k, SourceWriter& w) const;
};

// Whether the step computes iota, whose values are coordinates: only the
// strided-elements walk computes them.
bool computes_iota(const FusedSpec& spec);

// Parts of the walks that take vectors (fused_walk.cpp).
// Vector groups a thread loads before computing: more keep more bytes in
// flight, fewer spare registers where many arrays are loaded.
int vector_unroll(const FusedSpec& spec);
// `groups` (n / vector_width) and the grid-stride loop over each thread's
// first group g0, left open.
void open_vector_groups(const FusedKernel& k, SourceWriter& w);
// The unrolled loop over a thread's `unroll` groups g (g0 + u * blockDim.x)
// once every group is loaded: each element of a group computed from
// `read(j)` (array j's value of element k of group u), the outputs stored a
// vector at a time; groups past `groups` compute on zeros and store nothing.
void compute_vector_groups(const FusedKernel& k, SourceWriter& w,
                           const std::function<std::string(std::size_t)>& read);

// The walks, one file each under fused_walks/.
const FusedWalk& broadcast_vectors_walk();
const FusedWalk& permuted_tiles_walk();
const FusedWalk& flat_elements_walk();
const FusedWalk& flat_vectors_walk();
const FusedWalk& strided_elements_walk();

// The walks in the order make_fused_spec asks them: the first that applies
// takes the step. The last applies to every step.
const std::vector<const FusedWalk*>& fused_walks();

}  // namespace nf::jit
