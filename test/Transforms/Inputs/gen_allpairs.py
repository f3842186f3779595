#!/usr/bin/env python3
"""Writes a two-phase all-pairs all-reduce as mscl IR, for pass tests and
timing: `gen_allpairs.py RANKS [INSTANCES]`.

Per rank, one thread block: put chunk p of the input to every peer p's
scratch slot, signal, wait, reduce the received chunks into the own chunk
of the output (one reduce per peer, to exercise merging), put the result to
every peer, signal, wait, copy the received chunks into the output.
"""
import sys

n = int(sys.argv[1])
instances = int(sys.argv[2]) if len(sys.argv) > 2 else 1
out = []
w = out.append
w(f"mscl.program @allpairs attributes {{collective = #mscl.collective<allreduce>,")
w(f"    ranks = {n} : i64, gpus_per_node = {n} : i64, instances = {instances} : i64,")
w(f"    chunks = {n} : i64, input_chunks = {n} : i64, output_chunks = {n} : i64}} {{")
w(f"  mscl.buffer @input input[{n}]")
w(f"  mscl.buffer @output output[{n}]")
w(f"  mscl.buffer @recv scratch[{n}]")
w(f"  mscl.buffer @gather scratch[{n}]")
for r in range(n):
    for p in range(n):
        if p != r:
            w(f"  mscl.channel @c{r}_{p} memory HB {r} -> {p}")
for r in range(n):
    peers = [p for p in range(n) if p != r]
    w(f"  mscl.rank {r} {{")
    w(f"    mscl.threadblock 0 {{")
    for p in peers:
        w(f"      mscl.put @c{r}_{p} to <rank {p}, recv[{r}]> from <rank {r}, input[{p}]>")
    for p in peers:
        w(f"      mscl.signal [@c{r}_{p}]")
    for p in peers:
        w(f"      mscl.wait [@c{r}_{p}]")
    w(f"      mscl.copy to <rank {r}, output[{r}]> from <rank {r}, input[{r}]>")
    for p in peers:
        w(f"      mscl.reduce to <rank {r}, output[{r}]> from [<rank {r}, output[{r}]>, <rank {r}, recv[{p}]>]")
    for p in peers:
        w(f"      mscl.put @c{r}_{p} to <rank {p}, gather[{r}]> from <rank {r}, output[{r}]>")
    for p in peers:
        w(f"      mscl.signal [@c{r}_{p}]")
    for p in peers:
        w(f"      mscl.wait [@c{r}_{p}]")
    for p in peers:
        w(f"      mscl.copy to <rank {r}, output[{p}]> from <rank {r}, gather[{p}]>")
    w("    }")
    w("  }")
w("}")
print("\n".join(out))
