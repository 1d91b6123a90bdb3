# Installs numfuse as a CMake package: users write find_package(numfuse) and
# link numfuse::numfuse. tests/package checks this from a separate project.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS numfuse EXPORT numfuseTargets)
if(TARGET numfuse_dist)
  install(TARGETS numfuse_dist EXPORT numfuseTargets)
endif()
install(TARGETS numfuse_tool RUNTIME)
install(DIRECTORY include/numfuse TYPE INCLUDE)

set(NF_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/numfuse)
install(EXPORT numfuseTargets NAMESPACE numfuse:: DESTINATION ${NF_INSTALL_CMAKEDIR})

# A shared numfuse hides its dependencies; a static one exports them as
# $<LINK_ONLY:...> items, so its config file must find them (see the .in file).
get_target_property(NF_LIBRARY_TYPE numfuse TYPE)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/numfuseConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/numfuseConfig.cmake
                              INSTALL_DESTINATION ${NF_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/numfuseConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/numfuseConfig.cmake
              ${PROJECT_BINARY_DIR}/numfuseConfigVersion.cmake
        DESTINATION ${NF_INSTALL_CMAKEDIR})
