#!/usr/bin/env python3
"""Times NVRTC on generated kernels (no GPU needed): for each example and
instance count, the whole generated file (every rank's kernel) and rank 0's
kernel alone (--rank 0, what one process of the runtime compiles). The
compiles go through `mscclc --emit=cubin`, which uses the runtime's NVRTC
set-up (mscclc/jit/Nvrtc.h: the same options and embedded headers); the
time of `--emit=cuda` for the same program is subtracted, leaving NVRTC's.
Prints a Markdown table of medians.

  bench/nvrtc_time.py [--ranks N] [--arch sm_90] [--reps 3] [NAME@K ...]
"""
import argparse
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--ranks", type=int, default=2)
parser.add_argument("--arch", default="sm_90")
parser.add_argument("--reps", type=int, default=3)
parser.add_argument("--mscclc", default=os.path.join(ROOT, "build/bin/mscclc"))
parser.add_argument("programs", nargs="*", default=[
    "allreduce_1pa", "allreduce_2pa_hb", "allreduce_2pa_hb@8",
    "allreduce_2pa_hb@32", "allgather_allpairs@16"])
args = parser.parse_args()


def seconds(cmd):
    """Median wall time of `cmd`; its output is checked, then dropped."""
    times = []
    for _ in range(args.reps):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


print(f"NVRTC time on {os.cpu_count()} cores, {args.ranks} ranks, {args.arch}, "
      f"median of {args.reps}\n")
print("| program | data loops | every rank (s) | rank 0 alone (s) |")
print("|---|---|---|---|")
for spec in args.programs:
    name, _, instances = spec.partition("@")
    cmd = [args.mscclc, os.path.join(ROOT, "stdlib", name + ".mscl"),
           "--ranks", str(args.ranks)]
    if instances:
        cmd += ["--instances", instances]
    source = subprocess.run(cmd + ["--emit=cuda"], check=True,
                            capture_output=True).stdout
    outlined = b"#define MSCCLC_OUTLINE_OPS 1" in source
    emit = seconds(cmd + ["--emit=cuda"])
    cubin = cmd + ["--emit=cubin", "--arch", args.arch]
    every = seconds(cubin) - emit
    rank0 = seconds(cubin + ["--rank", "0"]) - emit
    print(f"| {spec} | {'out of line' if outlined else 'inline'} | "
          f"{every:.2f} | {rank0:.2f} |")
