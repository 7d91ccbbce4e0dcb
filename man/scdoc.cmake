# scdoc.cmake - builds one man page: scdoc turns the source into roff, then
# the paragraph macros scdoc 1.11 leaves where roff has nothing to separate
# (before and after a section heading, twice in a row) are dropped, and one
# that ends an indented block is moved after the block, so that the page is
# clean under `mandoc -T lint` and `groff -ww`.  SOURCE_DATE_EPOCH, when
# set, gives the page's date (reproducible builds).
# Usage: cmake -DSCDOC=scdoc -DIN=page.1.scd -DOUT=page.1 -P scdoc.cmake
execute_process(COMMAND ${SCDOC} INPUT_FILE ${IN} OUTPUT_VARIABLE roff
                ERROR_VARIABLE msg RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "scdoc failed on ${IN}: ${msg}")
endif()
foreach(pass 1 2 3)
  # a paragraph break that ends an indented block: after the block instead
  string(REGEX REPLACE "\n\\.P\n\\.RE\n" "\n.RE\n.P\n" roff "${roff}")
  # .P right before .SH, .SS, another .P, or the end
  string(REGEX REPLACE "\n\\.P\n(\\.(SH|SS|P)[ \n])" "\n\\1" roff "${roff}")
  string(REGEX REPLACE "\n\\.P\n$" "\n" roff "${roff}")
  # .P right after .SH or .SS
  string(REGEX REPLACE "(\n\\.S[HS] [^\n]*)\n\\.P\n" "\\1\n" roff "${roff}")
endforeach()
file(WRITE ${OUT}.tmp "${roff}")
file(RENAME ${OUT}.tmp ${OUT})
