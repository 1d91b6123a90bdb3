// The NF_* environment variables, every one of them, in one table: its name,
// the values it allows, what applies when it is unset, and what it does.
// Every reader of the environment goes through here, so that a value numfuse
// does not accept (NF_FUSION=banana) raises an error naming the variable, the
// value and what is allowed, rather than running silently with the default;
// `numfuse info` prints the table with each variable's value and its source.
//
// Variables are read when first used, not at load time, and read anew each
// time (nothing is cached here): callers that must see one value for the life
// of the process keep what they read. The first read checks every variable,
// so that a bad value is refused even where its variable goes unused (NF_CACHE
// on a machine without a GPU).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nf::config {

enum class Var {
  device,
  target_arch,
  fusion,
  cache,
  cache_dir,
  kernel_manifest,
  dump_kernels,
  reduce_limits,
  launch_thread,
  dist_timeout,
};

struct Variable {
  Var id;
  const char* name;         // "NF_FUSION"
  const char* allowed;      // the values it takes, for messages: "on or off"
  const char* when_unset;   // what applies then: "on"
  const char* description;  // one line: what it does
  // Whether a (non-empty) value is allowed; nullptr takes any, as paths do.
  bool (*accepts)(std::string_view value);
};

// Every variable, in the order `numfuse info` and the README list them.
std::span<const Variable> variables();
const Variable& variable(Var id);

enum class Source { unset, environment };

// One variable as the environment has it now. An empty value counts as
// unset, as shells make `NF_X= prog` easy to write by accident.
struct Setting {
  const Variable* variable;
  Source source;
  std::string value;  // the environment's; empty when unset
  std::string error;  // why the value is not allowed; empty when it is
};

// Never throws: for `numfuse info`, which shows bad values beside good ones.
Setting inspect(Var id);

// The variable's value, or nullopt when unset. Throws nf::ValueError
// ("NF_FUSION=banana is not allowed: expected on or off") when the value is
// not one the variable allows, or, until all have passed once, when another
// variable's is not.
std::optional<std::string> read(Var id);

// For the on/off variables (NF_FUSION, NF_CACHE): `value` read as a switch
// (on/off, 1/0, true/false, yes/no, any case). Throws nf::ValueError naming
// the variable, the value and these when it is none of them.
bool switched_on(Var id, std::string_view value);
// The switch as the environment sets it, else `when_unset`.
bool switched_on(Var id, bool when_unset);

// The settings NF_REDUCE_LIMITS may name, each a field of jit::ReduceLimits
// that jit/codegen/reduce_spec.cpp parses: the configuration's check reads
// this list, and tests hold the parser and the variable's `allowed` to it.
inline constexpr std::array<std::string_view, 6> kReduceLimitNames = {
    "max_held", "split_below", "chunk_groups", "max_cluster", "prefetch_from", "max_gathered"};

// "sm_" and two or three digits, perhaps a lowercase letter ("sm_90a"): the
// form of NF_TARGET_ARCH and of every arch numfuse compiles for.
bool is_device_arch_name(std::string_view arch);

}  // namespace nf::config
