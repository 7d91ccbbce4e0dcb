# sanitizers.cmake - TCX_SANITIZE=address,undefined adds the sanitizers to
# every target, without recovery (a report fails the run, as in git's CI).
if(TCX_SANITIZE)
  set(_san "-fsanitize=${TCX_SANITIZE}")
  if(TCX_SANITIZE MATCHES "undefined")
    string(APPEND _san " -fno-sanitize-recover=all")
  endif()
  separate_arguments(_san_list UNIX_COMMAND "${_san}")
  add_compile_options(${_san_list} -fno-omit-frame-pointer)
  add_link_options(${_san_list})
  message(STATUS "tcx: building with ${_san}")
endif()
