# fmt formats the messages and logs of the runtime, the NCCL library and
# the settings module under them (included before runtime/jit, which reads
# its settings through that module). It is used header-only
# (FMT_HEADER_ONLY), so libmscclc needs no libfmt at run time and a build
# needs fmt's headers only: from fmt's CMake package (Debian libfmt-dev), or,
# on hosts without it, from a copy of the `fmt/` header folder in the
# directory MSCCLC_FMT_INCLUDE_DIR names.
set(MSCCLC_FMT_INCLUDE_DIR "" CACHE PATH
    "Directory holding fmt/format.h, used instead of find_package(fmt)")
add_library(mscclc_fmt INTERFACE)
if(MSCCLC_FMT_INCLUDE_DIR)
  if(NOT EXISTS ${MSCCLC_FMT_INCLUDE_DIR}/fmt/format.h)
    message(FATAL_ERROR
      "MSCCLC_FMT_INCLUDE_DIR=${MSCCLC_FMT_INCLUDE_DIR} has no fmt/format.h")
  endif()
  target_include_directories(mscclc_fmt SYSTEM INTERFACE ${MSCCLC_FMT_INCLUDE_DIR})
  target_compile_definitions(mscclc_fmt INTERFACE FMT_HEADER_ONLY=1)
else()
  find_package(fmt REQUIRED)
  target_link_libraries(mscclc_fmt INTERFACE fmt::fmt-header-only)
endif()
