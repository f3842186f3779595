# The settings module (every environment variable, typed and checked:
# docs/settings.md) and the log it reports through. The floor of everything
# that reads the environment: the NVRTC/hipRTC set-up (mscclc_jit, also
# linked by the compiler), the runtime and the NCCL library. Included from
# the top level before runtime/jit, so it builds with or without the
# runtime; it needs fmt only (cmake/Fmt.cmake).
set(settings_dir ${CMAKE_CURRENT_LIST_DIR}/..)
add_library(mscclc_settings STATIC
  ${settings_dir}/lib/Settings.cpp
  ${settings_dir}/lib/Log.cpp)
# C++20: fmt checks format strings against their arguments at compile time
# (consteval) only from C++20 on.
set_target_properties(mscclc_settings PROPERTIES POSITION_INDEPENDENT_CODE ON
  CXX_STANDARD 20)
target_include_directories(mscclc_settings PUBLIC
  $<BUILD_INTERFACE:${settings_dir}/include>)
target_link_libraries(mscclc_settings PUBLIC mscclc_fmt)
