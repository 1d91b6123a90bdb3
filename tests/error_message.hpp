// The message of the exception of type E that f() throws; fails the test
// when f() throws nothing or something else.
#pragma once

#include <catch2/catch.hpp>
#include <exception>
#include <string>

namespace nf::test {

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("a different exception was thrown: " << e.what());
  }
  FAIL("no exception was thrown");
  return {};
}

}  // namespace nf::test
