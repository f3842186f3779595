#!/usr/bin/env python3
"""Writes correct mscl programs of any size, for the verification tests.

usage: gen_programs.py KIND RANKS [BLOCKS]

KIND: 1pa (LL all-pairs allreduce), 2pa (HB two-phase all-pairs allreduce),
ring (HB ring allreduce: reduce-scatter then allgather), ringag (port ring
allgather with flush), switch (switch-channel allreduce). BLOCKS thread
blocks per rank each run an independent copy on their own chunks and
channels (channel id = block).
"""
import sys


def header(name, coll, n, k_in, k_out, extra=""):
    return (f"mscl.program @{name} attributes {{collective = #mscl.collective<{coll}>,\n"
            f"    ranks = {n} : i64, gpus_per_node = {n} : i64, instances = 1 : i64,\n"
            f"    chunks = {k_in} : i64, input_chunks = {k_in} : i64, "
            f"output_chunks = {k_out} : i64{extra}}} {{")


def chunk(rank, buf, idx):
    return f"<rank {rank}, {buf}[{idx}]>"


def channels(out, n, blocks, kind):
    for b in range(blocks):
        for r in range(n):
            for p in range(n):
                if p != r:
                    out.append(f"  mscl.channel @{name(kind, r, p, b)} {kind_decl(kind)} {r} -> {p} id {b}")


def kind_decl(kind):
    return {"ll": "memory LL", "hb": "memory HB", "port": "port"}[kind]


def name(kind, r, p, b):
    return f"{kind}_{r}_{p}_{b}"


def one_pa(n, blocks):
    k = blocks
    out = [header("allreduce_1pa", "allreduce", n, k, k)]
    out += ["  mscl.buffer @input input[%d]" % k, "  mscl.buffer @output output[%d]" % k,
            "  mscl.buffer @recv scratch[%d] packet" % (n * k)]
    channels(out, n, blocks, "ll")
    for r in range(n):
        out.append(f"  mscl.rank {r} {{")
        for b in range(blocks):
            out.append(f"    mscl.threadblock {b} {{")
            for p in range(n):
                if p != r:
                    out.append(f"      mscl.put @{name('ll', r, p, b)} to {chunk(p, 'recv', r * k + b)} from {chunk(r, 'input', b)}")
            # In rank order on every rank: the same bits everywhere.
            srcs = [chunk(r, "input", b) if p == r else chunk(r, "recv", p * k + b)
                    for p in range(n)]
            out.append(f"      mscl.reduce to {chunk(r, 'output', b)} from [{', '.join(srcs)}]")
            out.append("    }")
        out.append("  }")
    out.append("}")
    return out


def two_pa(n, blocks):
    # Chunk c = p * blocks + b: block b of rank p reduces it.
    k = n * blocks
    out = [header("allreduce_2pa", "allreduce", n, k, k)]
    out += ["  mscl.buffer @input input[%d]" % k, "  mscl.buffer @output output[%d]" % k,
            "  mscl.buffer @s scratch[%d]" % k]
    channels(out, n, blocks, "hb")
    for r in range(n):
        out.append(f"  mscl.rank {r} {{")
        for b in range(blocks):
            peers = [p for p in range(n) if p != r]
            chans = ", ".join("@" + name("hb", r, p, b) for p in peers)
            mine = r * blocks + b
            out.append(f"    mscl.threadblock {b} {{")
            for p in peers:
                out.append(f"      mscl.put_with_signal @{name('hb', r, p, b)} to {chunk(p, 's', r * blocks + b)} from {chunk(r, 'input', p * blocks + b)}")
            out.append(f"      mscl.wait [{chans}]")
            srcs = [chunk(r, "input", mine)] + [chunk(r, "s", p * blocks + b) for p in peers]
            out.append(f"      mscl.reduce to {chunk(r, 'output', mine)} from [{', '.join(srcs)}]")
            for p in peers:
                out.append(f"      mscl.put_with_signal @{name('hb', r, p, b)} to {chunk(p, 'output', mine)} from {chunk(r, 'output', mine)}")
            out.append(f"      mscl.wait [{chans}]")
            out.append("    }")
        out.append("  }")
    out.append("}")
    return out


def ring(n, blocks):
    # Chunk c * blocks + b travels around ring b.
    k = n * blocks
    out = [header("allreduce_ring", "allreduce", n, k, k)]
    out += ["  mscl.buffer @input input[%d]" % k, "  mscl.buffer @output output[%d]" % k,
            "  mscl.buffer @tmp scratch[%d]" % ((n - 1) * blocks)]
    for b in range(blocks):
        for r in range(n):
            nxt, prv = (r + 1) % n, (r - 1) % n
            out.append(f"  mscl.channel @{name('hb', r, nxt, b)} memory HB {r} -> {nxt} id {b}")
            if prv != nxt:
                out.append(f"  mscl.channel @{name('hb', r, prv, b)} memory HB {r} -> {prv} id {b}")
    for r in range(n):
        nxt, prv = (r + 1) % n, (r - 1) % n
        out.append(f"  mscl.rank {r} {{")
        for b in range(blocks):
            c = lambda x: (x % n) * blocks + b
            out.append(f"    mscl.threadblock {b} {{")
            for s in range(n - 1):
                src = chunk(r, "input" if s == 0 else "output", c(r - s))
                out.append(f"      mscl.put_with_signal @{name('hb', r, nxt, b)} to {chunk(nxt, 'tmp', s * blocks + b)} from {src}")
                out.append(f"      mscl.wait [@{name('hb', r, prv, b)}]")
                cin = c(r - 1 - s)
                out.append(f"      mscl.reduce to {chunk(r, 'output', cin)} from [{chunk(r, 'input', cin)}, {chunk(r, 'tmp', s * blocks + b)}]")
            for s in range(n - 1):
                cc = c(r + 1 - s)
                out.append(f"      mscl.put_with_signal @{name('hb', r, nxt, b)} to {chunk(nxt, 'output', cc)} from {chunk(r, 'output', cc)}")
                out.append(f"      mscl.wait [@{name('hb', r, prv, b)}]")
            out.append("    }")
        out.append("  }")
    out.append("}")
    return out


def ring_allgather(n, blocks):
    k = blocks
    out = [header("allgather_ring", "allgather", n, k, n * k)]
    out += ["  mscl.buffer @input input[%d]" % k, "  mscl.buffer @output output[%d]" % (n * k)]
    for b in range(blocks):
        for r in range(n):
            nxt, prv = (r + 1) % n, (r - 1) % n
            out.append(f"  mscl.channel @{name('port', r, nxt, b)} port {r} -> {nxt} id {b}")
            if prv != nxt:
                out.append(f"  mscl.channel @{name('port', r, prv, b)} port {r} -> {prv} id {b}")
    for r in range(n):
        nxt, prv = (r + 1) % n, (r - 1) % n
        out.append(f"  mscl.rank {r} {{")
        for b in range(blocks):
            out.append(f"    mscl.threadblock {b} {{")
            out.append(f"      mscl.copy to {chunk(r, 'output', r * k + b)} from {chunk(r, 'input', b)}")
            for s in range(n - 1):
                cc = ((r - s) % n) * k + b
                out.append(f"      mscl.put_with_signal @{name('port', r, nxt, b)} to {chunk(nxt, 'output', cc)} from {chunk(r, 'output', cc)}")
                out.append(f"      mscl.wait [@{name('port', r, prv, b)}]")
            out.append(f"      mscl.flush [@{name('port', r, nxt, b)}]")
            out.append("    }")
        out.append("  }")
    out.append("}")
    return out


def switch(n, blocks):
    k = n * blocks
    out = [header("allreduce_switch", "allreduce", n, k, k)]
    out += ["  mscl.buffer @input input[%d]" % k, "  mscl.buffer @output output[%d]" % k]
    channels(out, n, blocks, "hb")
    out.append(f"  mscl.switch_channel @sw ranks [{', '.join(str(r) for r in range(n))}]")
    for r in range(n):
        out.append(f"  mscl.rank {r} {{")
        for b in range(blocks):
            peers = [p for p in range(n) if p != r]
            chans = ", ".join("@" + name("hb", r, p, b) for p in peers)
            mine = r * blocks + b
            out.append(f"    mscl.threadblock {b} {{")
            out.append(f"      mscl.switch_reduce @sw to {chunk(r, 'output', mine)} from {chunk(r, 'input', mine)}")
            out.append(f"      mscl.switch_broadcast @sw to {chunk(r, 'output', mine)} from {chunk(r, 'output', mine)}")
            out.append(f"      mscl.signal [{chans}]")
            out.append(f"      mscl.wait [{chans}]")
            out.append("    }")
        out.append("  }")
    out.append("}")
    return out


KINDS = {"1pa": one_pa, "2pa": two_pa, "ring": ring, "ringag": ring_allgather,
         "switch": switch}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in KINDS:
        sys.exit(__doc__)
    blocks = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    print("\n".join(KINDS[sys.argv[1]](int(sys.argv[2]), blocks)))
