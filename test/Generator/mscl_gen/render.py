"""Prints a Program as `.mscl` source.

The printing varies the surface syntax (channel `let`s, `buf[i]` for the
block's own rank, ranges and `except` in reduce sources, empty ranges) from
the program's `style` seed, so that the frontend's forms are exercised too;
the meaning never depends on it.
"""
import random

from .ir import Pipe, Ref

COLL_BUFFERS = ("input", "output")


def chan_expr(ch, rng):
    if ch.kind == "switch":
        return f"switch({ch.src}..{ch.dst})"
    args = f"{ch.src}, {ch.dst}"
    if ch.kind == "memory":
        args += f", {ch.proto}"
    if ch.cid or rng.random() < 0.2:
        args += f", {ch.cid}"
    return f"{ch.kind}({args})"


def ref_text(ref, here, rng):
    if ref.n == 1:
        idx = f"{ref.lo}"
    else:
        idx = f"{ref.lo}..{ref.lo + ref.n}"
    if ref.rank == here and rng.random() < 0.3:
        return f"{ref.buf}[{idx}]"
    return f"{ref.buf}@{ref.rank}[{idx}]"


def compress_sources(dst, srcs, rng):
    """Source texts, merging runs of consecutive sources into ranges (a
    range spanning several destination-sized runs stands for that many
    sources) and, now and then, a gap of one run into `except`."""
    m = dst.n
    runs = []  # [buf, rank, lo, count-of-runs]
    for s in srcs:
        if (runs and s.n == m and runs[-1][0] == s.buf and runs[-1][1] == s.rank
                and runs[-1][2] + runs[-1][3] * m == s.lo and rng.random() < 0.8):
            runs[-1][3] += 1
        else:
            runs.append([s.buf, s.rank, s.lo, 1 if s.n == m else 0, s])
    out = []
    i = 0
    while i < len(runs):
        r = runs[i]
        if r[3] == 0:  # an odd-sized source (an empty range), as written
            out.append(r[4])
            i += 1
            continue
        nxt = runs[i + 1] if i + 1 < len(runs) else None
        if (nxt and nxt[3] and nxt[0] == r[0] and nxt[1] == r[1]
                and nxt[2] == r[2] + (r[3] + 1) * m and rng.random() < 0.5):
            out.append(("except", Ref(r[0], r[1], r[2], (r[3] + 1 + nxt[3]) * m),
                        r[2] + r[3] * m))
            i += 2
            continue
        out.append(Ref(r[0], r[1], r[2], r[3] * m))
        i += 1
    return out


def op_text(op, here, rng, chan_names):
    def R(x):
        return ref_text(x, here, rng)

    def C():
        key = op.chan.key()
        return chan_names.get(key) or chan_expr(op.chan, rng)

    k = op.kind
    if k in ("signal", "wait", "flush"):
        return f"{C()}.{k}();"
    if k == "barrier":
        return "barrier();"
    if k in ("put", "put_signal", "put_signal_flush", "get", "read_reduce"):
        name = k
        if k == "get" and rng.random() < 0.2:
            name = "read"
        return f"{C()}.{name}({R(op.dst)}, {R(op.srcs[0])});"
    if k == "swreduce":
        return f"{C()}.reduce({R(op.dst)}, {R(op.srcs[0])});"
    if k == "swbroadcast":
        return f"{C()}.broadcast({R(op.dst)}, {R(op.srcs[0])});"
    if k == "copy":
        return f"copy({R(op.dst)}, {R(op.srcs[0])});"
    if k in ("reduce", "reduce_put"):
        parts = []
        for s in compress_sources(op.dst, op.srcs, rng):
            if isinstance(s, tuple):
                parts.append(f"{R(s[1])} except {s[2]}")
            else:
                parts.append(R(s))
        head = "reduce(" if k == "reduce" else f"{C()}.reduce_put("
        return head + ", ".join([R(op.dst)] + parts) + ");"
    raise ValueError(k)


def render(prog, lines_out=None):
    rng = random.Random(prog.style)
    out = []
    for c in prog.comment:
        out.append(f"// {c}" if c else "//")
    opts = [f"chunks = {prog.K}"]
    if prog.inplace:
        opts.append("inplace")
    if prog.coll in ("broadcast", "reduce", "gather", "scatter"):
        opts.append(f"root = {prog.root}")
    out.append(f"algorithm {prog.name} : {prog.coll}({', '.join(opts)}) {{")
    shape = f"nranks == {prog.nranks}"
    if prog.gpn:
        shape += f" && gpus_per_node == {prog.gpn}"
    out.append(f'  require {shape}, "generated for this shape";')
    for name, size in prog.scratch.items():
        out.append(f"  scratch {name}[{size}];")
    for (rank, lane), items in sorted(prog.blocks.items()):
        if not items:
            continue
        ln = prog.lanes[(rank, lane)]
        where = f"tb {ln.tb}" if ln.size == 1 else f"tbs {ln.tb}..{ln.tb + ln.size}"
        out.append(f"  on rank {rank}, {where} {{")
        chan_names = {}
        # Name a few channels with `let`, as programs written by hand do.
        if rng.random() < 0.3:
            seen = []
            for it in items:
                for op in (it.body if isinstance(it, Pipe) else [it]):
                    if op.chan is not None and op.chan.key() not in seen:
                        seen.append(op.chan.key())
                        if len(seen) <= 3:
                            nm = f"c{len(seen) - 1}"
                            chan_names[op.chan.key()] = nm
                            out.append(f"    let {nm} = {chan_expr(op.chan, rng)};")
        for it in items:
            if isinstance(it, Pipe):
                out.append(f"    pipeline(unit = {it.unit}) {{")
                for op in it.body:
                    out.append("      " + op_text(op, rank, rng, chan_names))
                out.append("    }")
            else:
                out.append("    " + op_text(it, rank, rng, chan_names))
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"
