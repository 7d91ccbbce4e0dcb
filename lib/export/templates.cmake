# templates.cmake - tcx export-lib's templates (share/export/: the generated
# library's run time, selection code, client, CMake and pkg-config files),
# embedded into tcxobj at build time like the kernel templates.  Included
# from lib/CMakeLists.txt after tcxobj is defined.
file(GLOB TCX_EXPORT_TEMPLATES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/share/export/*)
set(TCX_EXPORT_TEMPLATES_C ${PROJECT_BINARY_DIR}/gen/tcx_export_templates.c)
add_custom_command(
  OUTPUT ${TCX_EXPORT_TEMPLATES_C}
  COMMAND ${CMAKE_COMMAND} -DOUT=${TCX_EXPORT_TEMPLATES_C}
          -DROOT=${PROJECT_SOURCE_DIR}/share/export
          -P ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  DEPENDS ${TCX_EXPORT_TEMPLATES} ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  COMMENT "embedding export-lib templates")
add_custom_target(tcx_export_templates DEPENDS ${TCX_EXPORT_TEMPLATES_C})
target_sources(tcxobj PRIVATE ${TCX_EXPORT_TEMPLATES_C})
add_dependencies(tcxobj tcx_export_templates)
