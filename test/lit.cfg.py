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
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.mscclc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["mscl-opt", "mscclc"], tool_dirs)
