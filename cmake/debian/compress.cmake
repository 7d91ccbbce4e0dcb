# compress.cmake - CPack's pre-build script for the Debian packages, what
# dh_compress does for a Debian source package: after CPack installed each
# package's files into its staging folder and before it packs them, every
# man page and every changelog there is compressed with `gzip -9n` (the best
# compression, no name or time stamp in the header: reproducible), as
# Debian policy 12.3 and 12.7 ask.  `cmake --install` leaves them as they are.
find_program(_gzip gzip REQUIRED)
file(GLOB_RECURSE _files LIST_DIRECTORIES false "${CPACK_TEMPORARY_DIRECTORY}/*")
foreach(f IN LISTS _files)
  if(IS_SYMLINK ${f} OR NOT f MATCHES "/share/(man/man[1-9]/[^/]+\\.[1-9]|doc/[^/]+/changelog)$")
    continue()
  endif()
  execute_process(COMMAND ${_gzip} -9nf ${f} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip -9n ${f} failed")
  endif()
endforeach()
