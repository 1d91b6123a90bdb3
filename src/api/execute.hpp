// Running a statement: schedule the roots together and hand the schedule to
// the backend of the device the outputs live on.
#pragma once

#include <span>

#include "graph/node.hpp"
#include "numfuse/array.hpp"
#include "numfuse/expr.hpp"
#include "plan/backend.hpp"
#include "plan/program.hpp"

namespace nf {

// The backend of each kind of device: the one place where a device's kind
// picks the code that runs there.
const Backend& backend_for(Device d);

// Runs program `p` into `outputs` on their device's backend, as a statement
// does once made (recorded statements too: api/recording.hpp).
void run_program(const Program& p, std::span<const Array> outputs);

// Writes roots[i] into outputs[i], which has the root's shape and dtype.
void execute(std::span<const NodePtr> roots, std::span<const Array> outputs);
// One root into one output, a statement's usual case: no vectors are made.
void execute(const NodePtr& root, const Array& output);

// `e`, or `e` evaluated into an array when it has grown deeper than one
// kernel holds: a lazy expression grown in a loop (`e = e * a + b`) is
// evaluated every few hundred iterations rather than growing without bound.
Expr within_depth_cap(Expr e);

// The device a statement of `e` runs on: its arrays', else the default.
Device device_of(const Expr& e);

// A new contiguous array, on the default device unless one is given.
Array new_array(DType dtype, const Shape& shape);
Array new_array(DType dtype, const Shape& shape, Device device);

// Bytes between host memory and a contiguous array on any device.
void copy_to_array(const Array& dst, const void* src);
void copy_from_array(void* dst, const Array& src);

}  // namespace nf
