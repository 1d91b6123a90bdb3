#include "codegen/kernel_arguments.hpp"

#include <climits>
#include <cstring>

#include "codegen/step_kernels.hpp"
#include "numfuse/errors.hpp"
#include "runtime/nf_half.h"

namespace nf::jit {
namespace {

template <class T>
void put(std::uint64_t* words, std::uint32_t slot, const T& v) {
  static_assert(sizeof(T) <= 8);
  std::memcpy(words + slot, &v, sizeof v);
}

// A constant in the compute type of its dtype; an f16 or bf16 constant holds
// what its dtype can, as on the CPU backend.
void put_scalar(std::uint64_t* words, std::uint32_t slot, const Node& n) {
  switch (n.dtype) {
    case DType::b8:
      return put(words, slot, static_cast<bool>(n.value.i != 0));
    case DType::u8:
      return put(words, slot, static_cast<unsigned char>(n.value.i));
    case DType::i32:
      return put(words, slot, static_cast<int>(n.value.i));
    case DType::i64:
      return put(words, slot, static_cast<long long>(n.value.i));
    case DType::f64:
      return put(words, slot, n.value.f);
    case DType::f16:
      return put(words, slot, nf_f16_bits_to_f32(nf_f32_to_f16_bits(float(n.value.f))));
    case DType::bf16:
      return put(words, slot, nf_bf16_bits_to_f32(nf_f32_to_bf16_bits(float(n.value.f))));
    default:
      return put(words, slot, float(n.value.f));
  }
}

// Values as the kernel's nf_idx: 8 bytes each with 64-bit indices, else 4.
void append_indices(std::vector<std::uint64_t>& words, const Strides& values, bool index64) {
  const std::size_t size = index64 ? 8 : 4;
  std::vector<char> bytes(values.size() * size);
  for (std::size_t d = 0; d < values.size(); ++d) {
    if (index64) {
      const long long v = values[d];
      std::memcpy(bytes.data() + d * 8, &v, 8);
    } else {
      if (values[d] > INT_MAX || values[d] < INT_MIN) {
        throw InternalError("kernel arguments: a 32-bit kernel got the index value " +
                            std::to_string(values[d]));
      }
      const int v = int(values[d]);
      std::memcpy(bytes.data() + d * 4, &v, 4);
    }
  }
  const std::size_t at = words.size();
  words.resize(at + (bytes.size() + 7) / 8);
  if (!bytes.empty()) std::memcpy(words.data() + at, bytes.data(), bytes.size());
}

}  // namespace

ArgumentLayout lay_out_arguments(const StepKernels& step, std::size_t i) {
  ArgumentLayout l;
  for (const KernelParam& param : step.kernels().at(i).params) {
    const auto slot = std::uint32_t(l.words.size());
    l.slots.push_back(slot);
    switch (param.kind) {
      case KernelParam::Kind::count:
      case KernelParam::Kind::dims:
      case KernelParam::Kind::strides:
      case KernelParam::Kind::extent:
        append_indices(l.words, step.fixed_values(i, param), step.index64());
        break;
      default:
        l.binds.push_back({param.kind, param.index, slot});
        l.words.push_back(0);
        break;
    }
  }
  return l;
}

void bind_arguments(const ArgumentLayout& layout, std::uint64_t* words, const Program& p,
                    const Step& step, const ValueAddresses& at, std::span<void* const> workspaces) {
  for (const ArgumentLayout::Bind& b : layout.binds) {
    switch (b.kind) {
      case KernelParam::Kind::output:
        put(words, b.slot, at.write(step.writes[b.index]));
        break;
      case KernelParam::Kind::input:
        put(words, b.slot, at.read(step.reads[b.index]));
        break;
      case KernelParam::Kind::scalar:
        put_scalar(words, b.slot, *p.nodes[b.index]);
        break;
      case KernelParam::Kind::seed:
        put(words, b.slot, p.nodes[b.index]->seed);
        break;
      case KernelParam::Kind::stream:
        put(words, b.slot, p.nodes[b.index]->stream);
        break;
      case KernelParam::Kind::workspace:
        put(words, b.slot, workspaces[b.index]);
        break;
      default:
        throw InternalError("kernel arguments: a fixed parameter among those bound at each run");
    }
  }
}

}  // namespace nf::jit
