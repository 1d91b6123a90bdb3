#include "core/config.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdlib>

#include "numfuse/errors.hpp"

namespace nf::config {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A switch's word, or nullopt when `value` is not one.
std::optional<bool> switch_word(std::string_view value) {
  const std::string word = lower(value);
  for (const char* on : {"on", "1", "true", "yes"}) {
    if (word == on) return true;
  }
  for (const char* off : {"off", "0", "false", "no"}) {
    if (word == off) return false;
  }
  return std::nullopt;
}

bool accepts_switch(std::string_view value) {
  return switch_word(value).has_value();
}

// cpu, cuda or cuda:N; an index of up to 9 digits keeps std::stoi in range.
bool accepts_device(std::string_view value) {
  if (value == "cpu" || value == "cuda") return true;
  const std::string_view index = value.substr(std::min<std::size_t>(5, value.size()));
  return value.starts_with("cuda:") && all_digits(index) && index.size() <= 9;
}

// Whole seconds, 1 to 9 digits: no wait is shorter than a second.
bool accepts_seconds(std::string_view value) {
  return all_digits(value) && value.size() <= 9 && value.find_first_not_of('0') != value.npos;
}

bool accepts_arch(std::string_view value) {
  return is_device_arch_name(value);
}

// name=count,name=count,... with the settings reduction codegen knows; it
// checks the counts' ranges itself (jit/codegen/reduce_spec.cpp).
bool accepts_reduce_limits(std::string_view value) {
  for (;;) {
    const std::size_t comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos || !all_digits(item.substr(equals + 1)) ||
        std::find(kReduceLimitNames.begin(), kReduceLimitNames.end(), item.substr(0, equals)) ==
            kReduceLimitNames.end()) {
      return false;
    }
    if (comma == std::string_view::npos) return true;
    value.remove_prefix(comma + 1);
  }
}

constexpr const char* kSwitch = "on or off (also 1/0, true/false, yes/no, in any case)";
constexpr const char* kPath = "a path";

constexpr std::array<Variable, 10> kVariables = {{
    {Var::device, "NF_DEVICE", "cpu, cuda or cuda:N", "cuda:0 where there is a GPU, else cpu",
     "the device new arrays live on", accepts_device},
    {Var::target_arch, "NF_TARGET_ARCH", "sm_ and its number, such as sm_90 or sm_90a", "sm_90",
     "the arch kernels are generated for where no GPU says (the CPU backend, the tool)",
     accepts_arch},
    {Var::fusion, "NF_FUSION", kSwitch, "on",
     "off runs one kernel per op, as an eager library would", accepts_switch},
    {Var::cache, "NF_CACHE", kSwitch, "on", "off keeps compiled kernels in memory only",
     accepts_switch},
    {Var::cache_dir, "NF_CACHE_DIR", kPath, "$XDG_CACHE_HOME/numfuse, else ~/.cache/numfuse",
     "the disk cache of compiled kernels", nullptr},
    {Var::kernel_manifest, "NF_KERNEL_MANIFEST", kPath, "not recording",
     "a file every kernel planned is recorded in, for `numfuse warmup`", nullptr},
    {Var::dump_kernels, "NF_DUMP_KERNELS", kPath, "not dumping",
     "a directory each kernel's .cu is written to as it is first used", nullptr},
    {Var::reduce_limits, "NF_REDUCE_LIMITS",
     "name=count,... of max_held, split_below, chunk_groups, max_cluster, prefetch_from, "
     "max_gathered",
     "the built-in limits", "where reduction kernels change how they walk their rows",
     accepts_reduce_limits},
    {Var::launch_thread, "NF_LAUNCH_THREAD", kSwitch, "on",
     "off makes each statement's thread launch its kernels itself, not a thread of numfuse's",
     accepts_switch},
    {Var::dist_timeout, "NF_DIST_TIMEOUT", "whole seconds, at least 1", "300",
     "how long a rank of nf::dist waits for the others at a collective before it ends the job",
     accepts_seconds},
}};

}  // namespace

std::span<const Variable> variables() {
  return kVariables;
}

const Variable& variable(Var id) {
  for (const Variable& v : kVariables) {
    if (v.id == id) return v;
  }
  throw InternalError("config: a variable missing from the table");
}

Setting inspect(Var id) {
  const Variable& v = variable(id);
  const char* text = std::getenv(v.name);
  if (!text || !*text) return {&v, Source::unset, "", ""};
  Setting s{&v, Source::environment, text, ""};
  if (v.accepts && !v.accepts(s.value)) {
    s.error = std::string(v.name) + "=" + s.value + " is not allowed: expected " + v.allowed;
  }
  return s;
}

std::optional<std::string> read(Var id) {
  // Until every variable has passed once, each read checks them all: a bad
  // value is refused even where its variable would never be read (NF_CACHE
  // on a machine without a GPU), rather than ignored.
  static std::atomic<bool> all_allowed{false};
  if (!all_allowed.load(std::memory_order_relaxed)) {
    for (const Variable& v : kVariables) {
      if (Setting s = inspect(v.id); !s.error.empty()) throw ValueError(s.error);
    }
    all_allowed = true;
  }
  Setting s = inspect(id);
  if (!s.error.empty()) throw ValueError(s.error);
  if (s.source == Source::unset) return std::nullopt;
  return std::move(s.value);
}

bool switched_on(Var id, std::string_view value) {
  const std::optional<bool> on = switch_word(value);
  if (!on) {
    const Variable& v = variable(id);
    throw ValueError(std::string(v.name) + "=" + std::string(value) + " is not allowed: expected " +
                     v.allowed);
  }
  return *on;
}

bool switched_on(Var id, bool when_unset) {
  const std::optional<std::string> value = read(id);
  return value ? switched_on(id, *value) : when_unset;
}

bool is_device_arch_name(std::string_view arch) {
  if (!arch.starts_with("sm_")) return false;
  std::string_view rest = arch.substr(3);
  if (!rest.empty() && std::islower(static_cast<unsigned char>(rest.back()))) {
    rest.remove_suffix(1);
  }
  return all_digits(rest) && (rest.size() == 2 || rest.size() == 3);
}

}  // namespace nf::config
