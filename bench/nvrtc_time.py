#!/usr/bin/env python3
"""Times NVRTC on generated kernels (no GPU needed): for each example and
instance count, the whole generated file (every rank's kernel) and rank 0's
kernel alone (-DMSCCLC_RANK=0, what one process of the runtime compiles),
with the options the runtime uses. Prints a Markdown table.

  bench/nvrtc_time.py [--ranks N] [--arch sm_90] [NAME@K ...]
"""
import argparse
import ctypes
import glob
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--ranks", type=int, default=2)
parser.add_argument("--arch", default="sm_90")
parser.add_argument("--mscclc", default=os.path.join(ROOT, "build/bin/mscclc"))
parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"))
parser.add_argument("programs", nargs="*", default=[
    "allreduce_1pa", "allreduce_2pa_hb", "allreduce_2pa_hb@8",
    "allreduce_2pa_hb@32", "allgather_allpairs@16"])
args = parser.parse_args()

libs = sorted(glob.glob(os.path.join(args.cuda, "lib64", "libnvrtc.so*")))
if not libs:
    sys.exit(f"no libnvrtc under {args.cuda}/lib64")
nvrtc = ctypes.CDLL(libs[0])


def compile_seconds(source, options):
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"kernel.cu", 0,
                                None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    start = time.perf_counter()
    result = nvrtc.nvrtcCompileProgram(prog, len(options), opts)
    seconds = time.perf_counter() - start
    if result != 0:
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        sys.exit("NVRTC failed:\n" + log.value.decode(errors="replace"))
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return seconds


base = [f"--gpu-architecture={args.arch}", "--std=c++17",
        f"-I{args.cuda}/include", "-DMSCCLC_NVRTC=1", "-DMSCCLC_DTYPE=f32",
        "-DMSCCLC_REDOP=sum"]
print(f"NVRTC time on {os.cpu_count()} cores, {args.ranks} ranks, {args.arch}\n")
print("| program | data loops | every rank (s) | rank 0 alone (s) |")
print("|---|---|---|---|")
for spec in args.programs:
    name, _, instances = spec.partition("@")
    cmd = [args.mscclc, os.path.join(ROOT, "examples", name + ".mscl"),
           "--ranks", str(args.ranks), "--emit=cuda", "--embed-headers"]
    if instances:
        cmd += ["--instances", instances]
    source = subprocess.run(cmd, check=True, capture_output=True).stdout
    outlined = b"#define MSCCLC_OUTLINE_OPS 1" in source
    every = compile_seconds(source, base)
    rank0 = compile_seconds(source, base + ["-DMSCCLC_RANK=0"])
    print(f"| {spec} | {'out of line' if outlined else 'inline'} | "
          f"{every:.2f} | {rank0:.2f} |")
