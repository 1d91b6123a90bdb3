// Gemm steps: the product by OpenBLAS, straight from the operands' arrays and,
// where nothing follows it, straight into its output; an epilogue (bias,
// activation) or a conversion to the output's dtype then runs block by block.
#include "core/shape_util.hpp"
#include "cpu/convert.hpp"
#include "cpu/kernels.hpp"
#include "cpu/steps.hpp"

namespace nf::cpu {

void run_gemm(const Program& p, const Step& s, const Write& out, const Memory& mem) {
  const int g = s.nodes[0];
  const Node& product = *p.nodes[g];
  const DType ctype = compute_type(product.dtype);
  const Array& t = out.target;
  const Array &a = *mem[p.inputs[g][0]], &b = *mem[p.inputs[g][1]];
  // BLAS must not write where it reads (A = dot(A, B)).
  const bool direct = s.nodes.size() == 1 && t.dtype() == ctype &&
                      t.strides() == contiguous_strides(t.shape()) && t.storage() != a.storage() &&
                      t.storage() != b.storage();
  Value c = direct ? view_or_load(t) : make_value(ctype, product.shape);
  matmul(view_or_load(a), view_or_load(b), c);
  if (direct) return;
  Memory with_product = mem;
  with_product[g] = Array(c.storage, c.ctype, c.shape, c.strides, c.offset);
  std::vector<bool> epilogue(p.nodes.size(), false);
  for (std::size_t k = 1; k < s.nodes.size(); ++k) epilogue[s.nodes[k]] = true;
  run_fused(p, epilogue, {out}, product.shape, with_product);
}

}  // namespace nf::cpu
