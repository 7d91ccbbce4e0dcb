# install.cmake - what `cmake --install` puts into a prefix besides the
# targets (cmd/ installs the tcx program, lib/ libtcx, man/ the man pages),
# and the Debian packages CPack builds from the same rules (`cpack -G DEB`).
# Each rule names its component, which is the package it goes to:
#
#   program (tcx):
#     bin/tcx
#     share/man/man1/tcx*.1, share/man/man5/tcx-{config,logic}.5
#     share/bash-completion/completions/tcx      (bash-completion loads it on demand)
#     share/zsh/vendor-completions/_tcx          (on Debian's zsh $fpath)
#     share/fish/vendor_completions.d/tcx.fish   (fish's vendor directory)
#     share/tcx/examples/ share/tcx/schemas/ share/tcx/logic/ share/tcx/tune/
#     share/tcx/models/   (the planner's shipped models; the program and
#                          libtcx find them relative to their own place,
#                          lib/CMakeLists.txt)
#   runtime (libtcx0):
#     LIBDIR/libtcx.so.0 (and libtcx.so.0.1.0)
#   development (libtcx-dev):
#     include/tcx.h, LIBDIR/libtcx.so (the link),
#     LIBDIR/cmake/tcx/, LIBDIR/pkgconfig/tcx.pc
#
# LIBDIR is lib/<multiarch triplet> on Debian (see the top-level
# CMakeLists.txt), lib or lib64 elsewhere.
include(CMakePackageConfigHelpers)

set(TCX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tcx)

install(FILES include/tcx.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)

install(FILES completions/bash/tcx
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT program)
install(FILES completions/zsh/_tcx DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions
        COMPONENT program)
install(FILES completions/fish/tcx.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT program)

install(DIRECTORY share/examples share/schemas share/logic share/tune share/models
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tcx COMPONENT program)

# The CMake package: tcx::tcx, relocatable (paths relative to the file).
install(EXPORT tcxTargets NAMESPACE tcx:: FILE tcxTargets.cmake DESTINATION ${TCX_CMAKE_DIR}
        COMPONENT development)
configure_package_config_file(cmake/tcxConfig.cmake.in ${PROJECT_BINARY_DIR}/tcxConfig.cmake
                              INSTALL_DESTINATION ${TCX_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tcxConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tcxConfig.cmake ${PROJECT_BINARY_DIR}/tcxConfigVersion.cmake
        DESTINATION ${TCX_CMAKE_DIR} COMPONENT development)

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
" COMPONENT development)
install(FILES ${PROJECT_BINARY_DIR}/tcx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT development)

# The Debian packages: cpack -G DEB in the build directory writes one
# package per component, named as Debian names a program, its shared
# library and the library's development files:
#
#   tcx_<version>_<arch>.deb          the program (tcx does not link libtcx)
#   libtcx0_<version>_<arch>.deb      the shared library, by its SONAME
#   libtcx-dev_<version>_<arch>.deb   the header, link, CMake and pkg-config
#                                     files; depends on libtcx0 of its version
#
# Depends comes from dpkg-shlibdeps (libyaml, jansson, SQLite, the OpenCL
# ICD loader, libc); PoCL is recommended so that a machine without a GPU
# has a device.  Each package has the licence as a machine-readable
# /usr/share/doc/<package>/copyright and a changelog; compress.cmake
# compresses the man pages and changelogs as dh_compress would.
set(TCX_DEB_LIB libtcx${PROJECT_VERSION_MAJOR})
string(TIMESTAMP TCX_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC) # SOURCE_DATE_EPOCH if set
set(CPACK_PACKAGE_CONTACT "tcx maintainers <tcx@tcx-project.org>")
configure_file(cmake/debian/changelog.in ${PROJECT_BINARY_DIR}/debian/changelog @ONLY)
foreach(comp_pkg program:tcx runtime:${TCX_DEB_LIB} development:libtcx-dev)
  string(REPLACE ":" ";" comp_pkg ${comp_pkg})
  list(GET comp_pkg 0 comp)
  list(GET comp_pkg 1 pkg)
  # only in the packages: a plain install has no Debian doc folders
  install(FILES cmake/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg} COMPONENT ${comp} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_PACKAGE_NAME tcx)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "the tcx project")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "tensor-contraction toolkit: generate, tune and run GPU kernels")
set(_tcx_about
    "tcx reads any two-operand tensor contraction in index notation
(C[ijk]=A[ilk]*B[jlk] or ilk,jlk->ijk), generates OpenCL, CUDA and HIP
kernels for it, and tunes, benchmarks and validates them on the device.
It writes library logic (which kernel to run for which problem sizes)
and a small C library an application links.")
set(CPACK_DEBIAN_PROGRAM_DESCRIPTION "${_tcx_about}
.
This package holds the tcx program with its man pages and shell
completions, example tuning configs and library logic, an example
application, and the JSON schemas of tcx's output.")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "${_tcx_about}
.
This package holds libtcx, the shared library of tcx's C API: parsing
contractions, generating kernels, running them on a device and checking
them against the host reference.")
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION "${_tcx_about}
.
This package holds what a program needs to build against libtcx: the
header tcx.h, the link libtcx.so, the CMake package (find_package(tcx))
and the pkg-config file (pkg-config tcx).")

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL program runtime development)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debian/compress.cmake)
# 0755 for every folder CPack makes, whatever the umask; files are 0644 and
# programs 0755 (install()'s defaults), control files 0644 or 0755
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE ${PROJECT_HOMEPAGE_URL})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libtcx0's shlibs file: "libtcx 0 libtcx0 (>= version)", for the packages
# that link it
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

set(CPACK_DEBIAN_PROGRAM_PACKAGE_NAME tcx)
set(CPACK_DEBIAN_PROGRAM_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PROGRAM_PACKAGE_RECOMMENDS "pocl-opencl-icd, man-db")
set(CPACK_DEBIAN_PROGRAM_PACKAGE_SUGGESTS "bash-completion, clinfo, libtcx-dev")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${TCX_DEB_LIB})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "pocl-opencl-icd")
# ldconfig runs through dpkg's trigger, as Debian policy 8.1.1 asks (CPack
# still writes a postinst and postrm that call it too, which lintian warns
# of: maintscript-calls-ldconfig; CPack has no switch to leave them out)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/triggers)

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libtcx-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "${TCX_DEB_LIB} (= ${PROJECT_VERSION})")
include(CPack)
