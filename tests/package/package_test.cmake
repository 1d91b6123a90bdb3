# The installed-package test: install the built numfuse into a prefix in the
# build tree, then configure, build and run tests/package against it, as a user
# would. Included from tests/CMakeLists.txt, this file registers the test; the
# test runs this same file with `cmake -P`.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  # A sanitized libnumfuse needs the sanitizer runtime in the program that loads it.
  set(_nf_cxx_flags "")
  set(_nf_link_flags "")
  if(NF_SANITIZE)
    get_directory_property(_nf_cxx_flags COMPILE_OPTIONS)
    get_directory_property(_nf_link_flags LINK_OPTIONS)
    list(JOIN _nf_cxx_flags " " _nf_cxx_flags)
    list(JOIN _nf_link_flags " " _nf_link_flags)
  endif()
  add_test(NAME "package: find_package(numfuse)"
           COMMAND ${CMAKE_COMMAND}
                   -D NF_BUILD_DIR=${PROJECT_BINARY_DIR}
                   -D NF_CONFIG=$<CONFIG>
                   -D NF_GENERATOR=${CMAKE_GENERATOR}
                   -D NF_CXX_COMPILER=${CMAKE_CXX_COMPILER}
                   -D "NF_CXX_FLAGS=${_nf_cxx_flags}"
                   -D "NF_LINK_FLAGS=${_nf_link_flags}"
                   -D NF_WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/package
                   -P ${CMAKE_CURRENT_LIST_FILE})
  return()
endif()

function(nf_run)
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package test: step failed (${rc})")
  endif()
endfunction()

set(prefix ${NF_WORK_DIR}/prefix)
set(build ${NF_WORK_DIR}/build)
file(REMOVE_RECURSE ${NF_WORK_DIR})

nf_run(${CMAKE_COMMAND} --install ${NF_BUILD_DIR} --prefix ${prefix} --config ${NF_CONFIG})
# The tool installs beside the library and finds it there.
nf_run(${prefix}/bin/numfuse --version)
nf_run(${prefix}/bin/numfuse info)
nf_run(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR} -B ${build} -G ${NF_GENERATOR}
       -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${NF_CONFIG}
       -DCMAKE_CXX_COMPILER=${NF_CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${NF_CXX_FLAGS}"
       "-DCMAKE_EXE_LINKER_FLAGS=${NF_LINK_FLAGS}")
nf_run(${CMAKE_COMMAND} --build ${build} --config ${NF_CONFIG})
if(EXISTS ${build}/${NF_CONFIG}/numfuse_package_test)  # multi-config generators
  nf_run(${build}/${NF_CONFIG}/numfuse_package_test)
else()
  nf_run(${build}/numfuse_package_test)
endif()
