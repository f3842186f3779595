# Finds Debian's MLIR/LLVM 22 and arranges for tools to link them statically,
# so that build/bin/mscclc runs on machines without LLVM installed.

if(NOT MLIR_DIR AND EXISTS /usr/lib/llvm-22/lib/cmake/mlir)
  set(MLIR_DIR /usr/lib/llvm-22/lib/cmake/mlir)
endif()

# The package config names a shared zstd target that may not exist here.
if(NOT TARGET zstd::libzstd_shared)
  add_library(zstd::libzstd_shared INTERFACE IMPORTED)
endif()

find_package(MLIR REQUIRED CONFIG)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "mscclc needs MLIR 22, found LLVM ${LLVM_VERSION_MAJOR}")
endif()
message(STATUS "Using MLIR ${MLIR_PACKAGE_VERSION} from ${MLIR_DIR}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
set(LLVM_LINK_LLVM_DYLIB OFF)
include(TableGen)
include(AddLLVM)
include(AddMLIR)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(MSCCLC_LLVM_DEFINITIONS UNIX_COMMAND "${LLVM_DEFINITIONS}")
add_definitions(${MSCCLC_LLVM_DEFINITIONS})

if(NOT LLVM_EXTERNAL_LIT)
  set(LLVM_EXTERNAL_LIT "${LLVM_TOOLS_BINARY_DIR}/lit" CACHE STRING "lit" FORCE)
endif()

# Debian builds MLIR with LLVM_LINK_LLVM_DYLIB, so its imported targets name
# the shared `LLVM` library. Swap it for the static component libraries.
llvm_map_components_to_libnames(MSCCLC_LLVM_STATIC_LIBS
  Support Demangle Remarks BitstreamReader BinaryFormat TargetParser Core)
get_property(mscclc_mlir_libs GLOBAL PROPERTY MLIR_ALL_LIBS)
foreach(lib IN LISTS mscclc_mlir_libs)
  if(TARGET ${lib})
    get_target_property(is_imported ${lib} IMPORTED)
    if(is_imported)
      get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
      if(deps)
        list(TRANSFORM deps REPLACE "^LLVM$" "${MSCCLC_LLVM_STATIC_LIBS}")
        set_target_properties(${lib} PROPERTIES INTERFACE_LINK_LIBRARIES "${deps}")
      endif()
    endif()
  endif()
endforeach()

add_link_options(-Wl,--as-needed -static-libstdc++ -static-libgcc)
