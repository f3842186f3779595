# lit configuration for the mscclc test suites.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MSCCLC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".mscl", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mscclc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%stdlib", os.path.join(config.mscclc_src_root, "stdlib")))
config.substitutions.append(("%docs", os.path.join(config.mscclc_src_root, "docs")))
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.mscclc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["mscl-opt", "mscclc", "mscclc-program-print"], tool_dirs)

# `REQUIRES: nvrtc`: tests that compile generated CUDA through NVRTC. The
# search mirrors mscclc's own (runtime/jit/Nvrtc.cpp).
def _have_nvrtc():
    import ctypes
    candidates = [os.environ.get("MSCCLC_NVRTC"), "libnvrtc.so",
                  "libnvrtc.so.13", "libnvrtc.so.12"]
    candidates += [os.path.join(os.environ[v], "lib64", "libnvrtc.so")
                   for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates.append("/usr/local/cuda/lib64/libnvrtc.so")
    for name in candidates:
        if not name:
            continue
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False

for _var in ("MSCCLC_NVRTC", "CUDA_HOME", "CUDA_PATH"):
    if _var in os.environ:
        config.environment[_var] = os.environ[_var]
if _have_nvrtc():
    config.available_features.add("nvrtc")

# `REQUIRES: hipcc`: tests that compile generated HIP for gfx90a with hipcc
# (Debian's ROCm 5.2). `REQUIRES: hip-gfx942`: the same for gfx942 with LLVM
# 22's clang, which ROCm 5.2's compiler cannot target. That clang finds no
# gfx942 device library in ROCm 5.2 (no oclc_isa_version_942), so the ones
# HIP code needs are linked by hand; and ROCm 5.2's headers still read
# __AMDGCN_WAVEFRONT_SIZE, which clang 22 no longer predefines. Both
# compile the device code only: a code object, as a loader would use.
import shutil

_hip_flags = "-std=c++17 -Werror -I" + os.path.join(config.mscclc_src_root,
                                                   "runtime", "include")
_hipcc = shutil.which("hipcc")
if _hipcc:
    config.available_features.add("hipcc")
    config.substitutions.append(
        ("%hipcc_gfx90a",
         f"{_hipcc} --offload-arch=gfx90a --cuda-device-only -c {_hip_flags}"))
_clang22 = shutil.which("clang++-22")
_bitcode = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"
_bitcode_libs = [os.path.join(_bitcode, lib + ".bc")
                 for lib in ("hip", "ockl", "opencl", "oclc_abi_version_500",
                             "oclc_wavefrontsize64_on")]
if (_clang22 and os.path.exists("/usr/lib/llvm-22/bin/ld.lld")
        and os.path.exists("/usr/include/hip/hip_runtime.h")
        and all(os.path.exists(lib) for lib in _bitcode_libs)):
    config.available_features.add("hip-gfx942")
    _link = " ".join("-Xclang -mlink-builtin-bitcode -Xclang " + lib
                     for lib in _bitcode_libs)
    config.substitutions.append(
        ("%clang_gfx942",
         f"{_clang22} -x hip --offload-arch=gfx942 --offload-device-only "
         "-mcode-object-version=5 -D__AMDGCN_WAVEFRONT_SIZE=64 -nogpulib "
         f"--rocm-path=/usr {_link} -c {_hip_flags}"))

# `REQUIRES: nvcc`: hand-written kernels that use the device library
# directly (bench/reference) compile with the toolkit's nvcc.
_nvcc = shutil.which("nvcc") or (
    "/usr/local/cuda/bin/nvcc"
    if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
if _nvcc:
    config.available_features.add("nvcc")
    config.substitutions.append(
        ("%nvcc_sm90", f"{_nvcc} -std=c++17 -arch=sm_90 -Werror all-warnings "
         "-c -I" + os.path.join(config.mscclc_src_root, "runtime", "include")))
config.substitutions.append(
    ("%bench", os.path.join(config.mscclc_src_root, "bench")))
