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

config.substitutions.append(("%examples", os.path.join(config.mscclc_src_root, "examples")))
config.substitutions.append(("%stdlib", os.path.join(config.mscclc_src_root, "stdlib")))
config.substitutions.append(("%docs", os.path.join(config.mscclc_src_root, "docs")))
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.mscclc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["mscl-opt", "mscclc", "mscclc-program-check"], tool_dirs)

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
