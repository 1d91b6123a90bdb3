// The C spelling of values in generated kernels, shared by every kind of
// kernel: the types values are computed and stored in, their loads and
// stores, and the expression of one node from its inputs' names.
#pragma once

#include <string>
#include <vector>

#include "graph/node.hpp"

namespace nf::jit {

// The C type a value of dtype t is computed in on the GPU.
const char* compute_ctype(DType t);
// The C type values of dtype t are stored in.
const char* storage_ctype(DType t);
// A vector of `width` stored values of dtype t (nf_vec, jit/runtime/nf_kernel.h).
std::string vector_ctype(DType t, int width);
// A stored value `ref` of dtype t as its compute type, and back.
std::string load_expr(DType t, const std::string& ref);
std::string store_expr(DType t, const std::string& value);

// What a node computes from its inputs' names. `param` names the kernel
// parameter of a constant (its value) or of a random node (the suffix of its
// seed and stream); `index` is the element's flat index, for generators.
std::string node_expr(const Node& n, const std::vector<std::string>& inputs,
                      const std::string& param, const std::string& index);

}  // namespace nf::jit
