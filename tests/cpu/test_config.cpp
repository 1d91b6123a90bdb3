// The NF_* environment variables: one table, and a value a variable does not
// allow raises nf::ValueError naming the variable, the value and what is
// allowed, at its first use, rather than running with the default.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "compile/disk_cache.hpp"
#include "core/config.hpp"
#include "numfuse/numfuse.hpp"

using Catch::Matchers::Contains;
using nf::config::Var;

namespace {

// Sets an environment variable for a scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The message config::read gives for `name=value`.
std::string refusal(Var id, const std::string& value) {
  const nf::config::Variable& v = nf::config::variable(id);
  return std::string(v.name) + "=" + value + " is not allowed: expected " + v.allowed;
}

}  // namespace

TEST_CASE("the configuration table lists every NF_ variable once", "[host][config]") {
  std::set<std::string> names;
  for (const nf::config::Variable& v : nf::config::variables()) {
    CHECK(std::string(v.name).starts_with("NF_"));
    CHECK(*v.allowed != '\0');
    CHECK(*v.when_unset != '\0');
    CHECK(*v.description != '\0');
    CHECK(&nf::config::variable(v.id) == &v);
    names.insert(v.name);
  }
  CHECK(names == std::set<std::string>{"NF_DEVICE", "NF_TARGET_ARCH", "NF_FUSION", "NF_CACHE",
                                       "NF_CACHE_DIR", "NF_KERNEL_MANIFEST", "NF_DUMP_KERNELS",
                                       "NF_REDUCE_LIMITS", "NF_LAUNCH_THREAD", "NF_DIST_TIMEOUT"});
}

TEST_CASE("a value a variable does not allow names the variable, the value and the allowed",
          "[host][config]") {
  const struct {
    Var id;
    const char* name;
    const char* value;
    const char* allowed;
  } cases[] = {
      {Var::fusion, "NF_FUSION", "banana", "on or off"},
      {Var::cache, "NF_CACHE", "maybe", "on or off"},
      {Var::device, "NF_DEVICE", "banana", "cpu, cuda or cuda:N"},
      {Var::device, "NF_DEVICE", "cuda:x", "cpu, cuda or cuda:N"},
      {Var::device, "NF_DEVICE", "cuda1", "cpu, cuda or cuda:N"},
      {Var::device, "NF_DEVICE", "cuda:99999999999", "cpu, cuda or cuda:N"},
      {Var::target_arch, "NF_TARGET_ARCH", "sm90", "sm_ and its number"},
      {Var::target_arch, "NF_TARGET_ARCH", "compute_90", "sm_ and its number"},
      {Var::reduce_limits, "NF_REDUCE_LIMITS", "max_held", "name=count"},
      {Var::reduce_limits, "NF_REDUCE_LIMITS", "max_held=8,", "name=count"},
      {Var::reduce_limits, "NF_REDUCE_LIMITS", "speed=11", "name=count"},
      {Var::reduce_limits, "NF_REDUCE_LIMITS", "max_held=-1", "name=count"},
      {Var::launch_thread, "NF_LAUNCH_THREAD", "sometimes", "on or off"},
      {Var::dist_timeout, "NF_DIST_TIMEOUT", "0", "whole seconds"},
      {Var::dist_timeout, "NF_DIST_TIMEOUT", "2.5", "whole seconds"},
      {Var::dist_timeout, "NF_DIST_TIMEOUT", "-1", "whole seconds"},
  };
  for (const auto& c : cases) {
    INFO(c.name << "=" << c.value);
    const ScopedEnv env(c.name, c.value);
    CHECK_THROWS_AS(nf::config::read(c.id), nf::ValueError);
    CHECK_THROWS_WITH(nf::config::read(c.id), refusal(c.id, c.value));
    CHECK_THROWS_WITH(nf::config::read(c.id), Contains(c.allowed));
    const nf::config::Setting s = nf::config::inspect(c.id);
    CHECK(s.source == nf::config::Source::environment);
    CHECK(s.value == c.value);
    CHECK(s.error == refusal(c.id, c.value));
  }
}

TEST_CASE("allowed values are read as given; unset or empty is the default", "[host][config]") {
  for (const char* device : {"cpu", "cuda", "cuda:0", "cuda:12"}) {
    const ScopedEnv env("NF_DEVICE", device);
    CHECK(nf::config::read(Var::device) == device);
  }
  for (const char* seconds : {"1", "30", "007"}) {
    const ScopedEnv env("NF_DIST_TIMEOUT", seconds);
    CHECK(nf::config::read(Var::dist_timeout) == seconds);
  }
  for (const char* arch : {"sm_80", "sm_90a", "sm_120"}) {
    const ScopedEnv env("NF_TARGET_ARCH", arch);
    CHECK(nf::config::read(Var::target_arch) == arch);
  }
  {
    const ScopedEnv env("NF_REDUCE_LIMITS",
                        "max_held=8,split_below=0,max_cluster=1,max_gathered=32");
    CHECK(nf::config::read(Var::reduce_limits) ==
          "max_held=8,split_below=0,max_cluster=1,max_gathered=32");
  }
  for (const std::string_view name : nf::config::kReduceLimitNames) {
    INFO(name);
    const std::string limits = std::string(name) + "=1";
    const ScopedEnv env("NF_REDUCE_LIMITS", limits.c_str());
    CHECK(nf::config::read(Var::reduce_limits));
    CHECK(std::string_view(nf::config::variable(Var::reduce_limits).allowed).find(name) !=
          std::string_view::npos);
  }
  for (const char* on : {"on", "ON", "1", "true", "Yes"}) {
    const ScopedEnv env("NF_FUSION", on);
    CHECK(nf::config::switched_on(Var::fusion, false));
  }
  for (const char* off : {"off", "Off", "0", "FALSE", "no"}) {
    const ScopedEnv env("NF_FUSION", off);
    CHECK_FALSE(nf::config::switched_on(Var::fusion, true));
  }
  const ScopedEnv empty("NF_FUSION", "");
  CHECK_FALSE(nf::config::read(Var::fusion));
  CHECK(nf::config::switched_on(Var::fusion, true));
  CHECK(nf::config::inspect(Var::fusion).source == nf::config::Source::unset);
  // Paths take any text.
  const ScopedEnv path("NF_CACHE_DIR", "/any where/at all");
  CHECK(nf::config::read(Var::cache_dir) == "/any where/at all");
}

TEST_CASE("NF_CACHE=maybe is refused where the cache is placed", "[host][config]") {
  const ScopedEnv env("NF_CACHE", "maybe");
  CHECK_THROWS_AS(nf::jit::CacheEnvironment::current(), nf::ValueError);
  CHECK_THROWS_WITH(nf::jit::CacheEnvironment::current(), refusal(Var::cache, "maybe"));
}

TEST_CASE("NF_FUSION=banana fails the statement that first plans, leaving its target", "[config]") {
  nf::Array a = nf::ones({3, 4});
  {
    const ScopedEnv env("NF_FUSION", "banana");
    CHECK_THROWS_AS(a = nf::exp(a) + 1.0f, nf::ValueError);
    CHECK_THROWS_WITH(a = nf::exp(a) + 1.0f, refusal(Var::fusion, "banana"));
  }
  CHECK(a.to_vector<float>() == std::vector<float>(12, 1.0f));
  {
    const ScopedEnv env("NF_FUSION", "off");
    a = a * 2.0f + 1.0f;
  }
  CHECK(a.to_vector<float>() == std::vector<float>(12, 3.0f));
}
