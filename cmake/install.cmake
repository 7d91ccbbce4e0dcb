# install.cmake - what `cmake --install` puts into a prefix besides the
# targets (cmd/ installs the tcx program, lib/ libtcx, man/ the man pages),
# and the Debian package CPack builds from the same rules (`cpack -G DEB`).
#
#   bin/tcx
#   lib/libtcx.so.0 (and the libtcx.so link), lib/cmake/tcx/, lib/pkgconfig/tcx.pc
#   include/tcx.h
#   share/man/man1/tcx*.1, share/man/man5/tcx-{config,logic}.5
#   share/bash-completion/completions/tcx      (bash-completion loads it on demand)
#   share/zsh/vendor-completions/_tcx          (on Debian's zsh $fpath)
#   share/fish/vendor_completions.d/tcx.fish   (fish's vendor directory)
#   share/tcx/examples/ share/tcx/schemas/ share/tcx/logic/ share/tcx/tune/
include(CMakePackageConfigHelpers)

set(TCX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tcx)

install(FILES include/tcx.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(FILES completions/bash/tcx
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES completions/zsh/_tcx DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES completions/fish/tcx.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

install(DIRECTORY share/examples share/schemas share/logic share/tune
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tcx)

# The CMake package: tcx::tcx, relocatable (paths relative to the file).
install(EXPORT tcxTargets NAMESPACE tcx:: FILE tcxTargets.cmake DESTINATION ${TCX_CMAKE_DIR})
configure_package_config_file(cmake/tcxConfig.cmake.in ${PROJECT_BINARY_DIR}/tcxConfig.cmake
                              INSTALL_DESTINATION ${TCX_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tcxConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tcxConfig.cmake ${PROJECT_BINARY_DIR}/tcxConfigVersion.cmake
        DESTINATION ${TCX_CMAKE_DIR})

# The pkg-config file names the prefix it is installed into, which
# `cmake --install --prefix` may choose at install time: it is written then.
set(TCX_PC_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(TCX_PC_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
set(prefix "@prefix@") # kept for the install-time pass
configure_file(cmake/tcx.pc.in ${PROJECT_BINARY_DIR}/tcx.pc.in @ONLY)
unset(prefix)
install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/tcx.pc.in\" \"${PROJECT_BINARY_DIR}/tcx.pc\" @ONLY)
")
install(FILES ${PROJECT_BINARY_DIR}/tcx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Debian package: cpack -G DEB in the build directory writes
# tcx_<version>_<arch>.deb.  Depends comes from dpkg-shlibdeps (libyaml,
# jansson, SQLite, the OpenCL ICD loader, libc); PoCL is recommended so
# that a machine without a GPU has a device.
set(CPACK_PACKAGE_NAME tcx)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "the tcx project")
set(CPACK_PACKAGE_CONTACT "tcx maintainers <tcx@tcx-project.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "tensor-contraction toolkit: parse, generate, tune, validate and export GPU kernels")
set(CPACK_PACKAGE_DESCRIPTION
    "tcx reads any two-operand tensor contraction in index notation
(C[ijk]=A[ilk]*B[jlk] or ilk,jlk->ijk), generates OpenCL, CUDA and HIP
kernels for it, and tunes, benchmarks and validates them on the device.
It writes library logic (which kernel to run for which problem sizes)
and a small C library an application links.
This package holds the tcx program with its man pages and shell
completions, libtcx with its header, CMake package and pkg-config file,
example tuning configs, and the JSON schemas of tcx's output.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE ${PROJECT_HOMEPAGE_URL})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pocl-opencl-icd, man-db")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, clinfo")
include(CPack)
