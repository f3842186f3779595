"""The defect catalogue: one defect per broken program.

A defect is a function that takes a correct Program and a random source
and returns the broken Program and a line saying what it did, or None when
the program offers no place for it. `expect` is what every oracle should
conclude: "reject" (the program is wrong; at least the proof must refuse
it) or "consistent" (whether the program is wrong depends on a choice issue
39 leaves open; the proof and the simulator must then agree). `data` marks
defects whose harm the generator's symbolic run can see (it then checks
that the mutant really is wrong before calling it broken).

Adding a class: write `def d_name(prog, rng)` below and list it in
CATALOGUE with its expectation; `pins` are generation parameters the
defect needs (a skeleton, a transport), `plan` a defect made while
lowering (a Plan attribute set to True).
"""
from dataclasses import dataclass, field

from .ir import DATA_OPS, Chan, Lane, Op, Pipe, Ref


@dataclass
class Defect:
    name: str
    fn: object
    expect: str = "reject"
    data: bool = False
    pins: dict = field(default_factory=dict)
    plan: str = ""
    doc: str = ""


# -- walking the program -----------------------------------------------
def sites(prog, pred):
    """(block key, list holding the op, index) for every op matching."""
    out = []
    for key in sorted(prog.blocks):
        items = prog.blocks[key]
        for i, it in enumerate(items):
            if isinstance(it, Pipe):
                for j, op in enumerate(it.body):
                    if pred(op):
                        out.append((key, it.body, j))
            elif pred(it):
                out.append((key, items, i))
    return out


def pick(rng, xs):
    return rng.choice(xs) if xs else None


def packet_bufs(prog):
    res = set()
    for items in prog.blocks.values():
        for it in items:
            for op in (it.body if isinstance(it, Pipe) else [it]):
                if op.kind in ("put", "reduce_put") and op.chan is not None and op.chan.proto == "LL":
                    res.add(op.dst.buf)
    return res


# -- the defects ----------------------------------------------------------
def d_drop_wait(prog, rng):
    s = pick(rng, sites(prog, lambda o: o.kind == "wait"))
    if not s:
        return None
    key, lst, i = s
    op = lst.pop(i)
    return f"dropped the wait on {name(op.chan)} ({op.tag}) of rank {key[0]}"


def d_drop_signal(prog, rng):
    s = pick(rng, sites(prog, lambda o: o.kind in ("signal", "put_signal", "put_signal_flush")
                         and o.chan.kind != "switch"))
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    if op.kind == "signal":
        lst.pop(i)
    elif op.kind == "put_signal":
        op.kind = "put"
    else:
        op.kind = "put"
        lst.insert(i + 1, Op("flush", op.chan, tag="flush"))
    return f"dropped the signal on {name(op.chan)} ({op.tag or 'data'}) of rank {key[0]}"


def d_wrong_peer(prog, rng):
    if prog.nranks < 3:
        return None
    s = pick(rng, sites(prog, lambda o: o.kind == "signal" and o.chan.kind != "switch"))
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    peers = [x for x in range(prog.nranks) if x not in (op.chan.src, op.chan.dst)
             and (op.chan.kind == "port" or prog.node(x) == prog.node(op.chan.src))]
    if not peers:
        return None
    x = rng.choice(peers)
    old = op.chan
    op.chan = Chan(old.kind, old.src, x, old.proto, old.cid)
    # the channel may be new on this rank; it must not belong to another block
    if owner_conflict(prog, op.chan, key):
        op.chan = old
        return None
    return f"rank {key[0]} signals rank {x} instead of rank {old.dst} on {name(old)}"


def owner_conflict(prog, chan, key):
    for k2, items in prog.blocks.items():
        if k2 == key or k2[0] != key[0]:
            continue
        for it in items:
            for op in (it.body if isinstance(it, Pipe) else [it]):
                if op.chan is not None and op.chan.key() == chan.key():
                    return True
    return False


def buffer_chunks(prog, buf, kin, kout):
    if buf == "input":
        return kin
    if buf == "output":
        return kout
    return prog.scratch[buf]


def d_wrong_chunk(prog, rng):
    from .layout import chunk_counts
    kin, kout = chunk_counts(prog.coll, prog.nranks, prog.K)
    s = pick(rng, sites(prog, lambda o: o.kind in DATA_OPS and o.kind not in ("swreduce", "swbroadcast")))
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    refs = [("dst", None)] + [("src", j) for j in range(len(op.srcs)) if op.srcs[j].n]
    which, j = rng.choice(refs)
    ref = op.dst if which == "dst" else op.srcs[j]
    total = buffer_chunks(prog, ref.buf, kin, kout)
    choices = [lo for lo in range(0, total - ref.n + 1) if lo != ref.lo]
    if not choices:
        return None
    new = Ref(ref.buf, ref.rank, rng.choice(choices), ref.n)
    if which == "dst":
        op.dst = new
    else:
        srcs = list(op.srcs)
        srcs[j] = new
        op.srcs = tuple(srcs)
    return f"rank {key[0]}: {op.kind} uses {fmt(new)} instead of {fmt(ref)}"


def d_wrong_buffer(prog, rng):
    from .layout import chunk_counts
    kin, kout = chunk_counts(prog.coll, prog.nranks, prog.K)
    s = pick(rng, sites(prog, lambda o: o.kind in ("copy", "reduce", "put", "put_signal",
                                                    "put_signal_flush", "reduce_put", "get")))
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    j = rng.randrange(len(op.srcs))
    ref = op.srcs[j]
    if ref.n == 0:
        return None
    bufs = ["input", "output"] + sorted(prog.scratch)
    cands = [b for b in bufs if b != ref.buf and buffer_chunks(prog, b, kin, kout) >= ref.lo + ref.n]
    if not cands:
        return None
    b = rng.choice(cands)
    srcs = list(op.srcs)
    srcs[j] = Ref(b, ref.rank, ref.lo, ref.n)
    op.srcs = tuple(srcs)
    return f"rank {key[0]}: {op.kind} reads {fmt(srcs[j])} instead of {fmt(ref)}"


def covering_puts(prog, wait):
    """Chunks written by the puts a data wait covers (the puts on its
    other end's channel)."""
    other = wait.chan.other_end().key()
    refs = []
    for items in prog.blocks.values():
        for it in items:
            for op in (it.body if isinstance(it, Pipe) else [it]):
                if op.chan is not None and op.chan.key() == other and op.kind in (
                        "put", "put_signal", "put_signal_flush", "reduce_put"):
                    refs += op.dst.chunks()
    return refs


def d_read_before_wait(prog, rng):
    cands = []
    for key, lst, i in sites(prog, lambda o: o.kind == "wait" and o.tag == "data"):
        landed = set(covering_puts(prog, lst[i]))
        for j in range(i + 1, len(lst)):
            op = lst[j]
            if isinstance(op, Pipe):
                break
            if op.kind in ("copy", "reduce", "put", "put_signal", "reduce_put") and any(
                    c in landed for s in op.srcs for c in s.chunks()):
                cands.append((key, lst, i, j))
                break
    c = pick(rng, cands)
    if not c:
        return None
    key, lst, i, j = c
    op = lst.pop(j)
    lst.insert(i, op)
    return f"rank {key[0]}: {op.kind} moved before the wait on {name(lst[i + 1].chan)} that covers its data"


def d_race_two_blocks(prog, rng):
    s = pick(rng, sites(prog, lambda o: o.kind in ("copy", "reduce")))
    if not s:
        return None
    key, lst, i = s
    op = lst[i].copy()
    others = [k for k in prog.blocks if k[0] == key[0] and k != key]
    if others and rng.random() < 0.7:
        k2 = rng.choice(others)
    else:
        lane = max(l for (_, l) in prog.lanes) + 1
        k2 = (key[0], lane)
        top = max(ln.tb + ln.size for (r, _), ln in prog.lanes.items() if r == key[0])
        prog.lanes[k2] = Lane(top + 1, 1)
        prog.blocks[k2] = []
    prog.blocks[k2].append(op)
    return f"rank {key[0]}: {op.kind} into {fmt(op.dst)} also in another block"


def d_port_source(prog, rng):
    """A port put's source written again before the flush: the flushes of
    its channel dropped until after that write."""
    cands = []
    for key, lst, i in sites(prog, lambda o: o.chan is not None and o.chan.kind == "port" and o.kind in (
            "put", "put_signal", "put_signal_flush")):
        op = lst[i]
        src = set(op.srcs[0].chunks())
        for j in range(i + 1, len(lst)):
            o2 = lst[j]
            # a wait in between may show that the data landed (its signal
            # followed the transfer), which frees the source too
            if isinstance(o2, Pipe) or o2.kind == "wait":
                break
            if o2.kind in ("copy", "reduce") and any(c in src for c in o2.dst.chunks()):
                cands.append((key, lst, i, j))
                break
    c = pick(rng, cands)
    if not c:
        return None
    key, lst, i, j = c
    op = lst[i]
    ch = op.chan
    if op.kind == "put_signal_flush":
        op.kind = "put_signal"
    removed = 0
    for k in range(j - 1, i, -1):
        if lst[k].kind == "flush" and lst[k].chan == ch:
            lst.pop(k)
            removed += 1
        elif lst[k].kind == "put_signal_flush" and lst[k].chan == ch:
            lst[k].kind = "put_signal"
    # flush after the write instead, so that only the reuse is wrong
    pos = lst.index(next(o for o in lst[i + 1:] if o.kind in ("copy", "reduce")
                         and any(c in set(op.srcs[0].chunks()) for c in o.dst.chunks())))
    lst.insert(pos + 1, Op("flush", ch, tag="flush"))
    return f"rank {key[0]}: the source {fmt(op.srcs[0])} of a put on {name(ch)} is overwritten before its flush"


def reduce_sites(prog, min_srcs=2):
    return sites(prog, lambda o: o.kind in ("reduce", "reduce_put")
                 and sum(1 for s in o.srcs if s.n) >= min_srcs)


def d_missing_contribution(prog, rng):
    cands = reduce_sites(prog, 2) + sites(prog, lambda o: o.kind == "read_reduce")
    s = pick(rng, cands)
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    if op.kind == "read_reduce":
        # its done signal stays: only the contribution goes
        lst.pop(i)
        return f"rank {key[0]}: dropped the read_reduce of {fmt(op.srcs[0])} into {fmt(op.dst)}"
    srcs = [s for s in op.srcs if s.n]
    j = rng.randrange(len(srcs))
    gone = srcs.pop(j)
    if len(srcs) == 1 and op.kind == "reduce":
        op.kind = "copy"
    op.srcs = tuple(srcs)
    return f"rank {key[0]}: {fmt(gone)} left out of the {op.kind} into {fmt(op.dst)}"


def d_double_contribution(prog, rng):
    s = pick(rng, reduce_sites(prog, 1))
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    srcs = [s for s in op.srcs if s.n]
    x = rng.choice(srcs)
    srcs.insert(rng.randrange(len(srcs) + 1), x)
    op.srcs = tuple(srcs)
    return f"rank {key[0]}: {fmt(x)} counted twice in the {op.kind} into {fmt(op.dst)}"


def tree_changes(srcs, perm):
    """Does listing srcs as perm change the reduction tree (the first two
    are unordered: IEEE addition is commutative)?"""
    return set(perm[:2]) != set(srcs[:2]) or perm[2:] != srcs[2:]


def d_order_one_rank(prog, rng):
    """Class 6: one rank lists an all-reduce sum's sources in another order."""
    if prog.coll != "allreduce":
        return None
    cands = [s for s in sites(prog, lambda o: o.kind == "reduce" and o.dst.buf == "output"
                              and sum(1 for x in o.srcs if x.n) >= 3)]
    s = pick(rng, cands)
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    srcs = [x for x in op.srcs if x.n]
    for _ in range(20):
        perm = list(srcs)
        rng.shuffle(perm)
        if tree_changes(srcs, perm):
            op.srcs = tuple(perm)
            return f"rank {key[0]}: the sum into {fmt(op.dst)} lists its sources in another order"
    return None


def d_own_first(prog, rng):
    """Class 6: every rank sums its own input first (a 1PA written that
    way), so ranks past the first reduce in different orders."""
    if prog.coll != "allreduce":
        return None
    cands = sites(prog, lambda o: o.kind == "reduce" and o.dst.buf == "output"
                  and sum(1 for x in o.srcs if x.n) >= 3)
    changed = 0
    for key, lst, i in cands:
        op = lst[i]
        srcs = [x for x in op.srcs if x.n]
        own = [x for x in srcs if x.buf in ("input", "output") and x.rank == key[0]]
        if not own:
            continue
        perm = own[:1] + [x for x in srcs if x is not own[0]]
        if tree_changes(srcs, perm):
            changed += 1
        op.srcs = tuple(perm)
    if not changed:
        return None
    return "every rank adds its own input first"


def d_missing_handshake(prog, rng):
    """The ready signal (and its wait) that orders a peer's write or read
    after this rank's use of the chunk, in this launch or the previous."""
    if prog.single_launch:
        return None
    # only a ready signal the lowering found needed: a handshake's may be
    # covered by another signal, and leaving it out is then no defect
    s = pick(rng, sites(prog, lambda o: o.kind == "signal" and o.tag == "ready"))
    if not s:
        return None
    key, lst, i = s
    sig = lst[i]
    # the matching wait: same index among the waits on the other end
    sigs = sites(prog, lambda o: o.chan is not None and o.chan == sig.chan and o.kind in (
        "signal", "put_signal", "put_signal_flush"))
    nth = [j for j, (_, l2, k) in enumerate(sigs) if l2 is lst and k == i][0]
    waits = sites(prog, lambda o: o.kind == "wait" and o.chan == sig.chan.other_end())
    if nth >= len(waits):
        return None
    _, wl, wi = waits[nth]
    if wl[wi].tag != "ready":
        return None
    for l2, j in sorted([(wl, wi), (lst, i)], key=lambda t: (id(t[0]), -t[1])):
        l2.pop(j)
    return f"dropped the ready signal rank {key[0]} sends on {name(sig.chan)}, and its wait"


def d_ll_no_put(prog, rng):
    pk = packet_bufs(prog)
    if not pk:
        return None
    if rng.random() < 0.5:
        s = pick(rng, sites(prog, lambda o: o.kind in ("put", "reduce_put") and o.chan is not None
                            and o.chan.proto == "LL"))
        if not s:
            return None
        key, lst, i = s
        op = lst.pop(i)
        return f"rank {key[0]}: dropped the LL put into {fmt(op.dst)}"
    s = pick(rng, sites(prog, lambda o: o.kind in ("copy", "reduce", "put", "reduce_put")
                        and any(x.buf in pk for x in o.srcs)))
    if not s:
        return None
    key, lst, i = s
    op = lst[i]
    j = [k for k, x in enumerate(op.srcs) if x.buf in pk][0]
    ref = op.srcs[j]
    idx = prog.scratch[ref.buf]
    prog.scratch[ref.buf] = idx + ref.n
    srcs = list(op.srcs)
    srcs[j] = Ref(ref.buf, ref.rank, idx, ref.n)
    op.srcs = tuple(srcs)
    return f"rank {key[0]}: {op.kind} reads packets {fmt(srcs[j])}, which no LL put writes"


def d_none(prog, rng):
    return "built with the defect"


CATALOGUE = [
    Defect("drop-wait", d_drop_wait, doc="a wait left out"),
    Defect("drop-signal", d_drop_signal, doc="a signal left out (put_signal becomes put)"),
    Defect("wrong-peer", d_wrong_peer, doc="a signal sent to another rank"),
    Defect("wrong-chunk", d_wrong_chunk, data=True, doc="an operand's chunk index changed"),
    Defect("wrong-buffer", d_wrong_buffer, data=True, doc="a source read from another buffer"),
    Defect("read-before-wait", d_read_before_wait, doc="a use of pushed data moved before its wait",
           pins={"transports": ("choice", [["push-HB"], ["push-port"], ["push-HB", "push-port"]])}),
    Defect("race-two-blocks", d_race_two_blocks, doc="a local write repeated in another block"),
    Defect("port-source-reuse", d_port_source, pins={"transports": ["push-port"]},
           doc="a port put's source overwritten before its flush"),
    Defect("missing-contribution", d_missing_contribution, data=True,
           pins={"coll_in": ["allreduce", "reducescatter", "reduce"]}, doc="a reduce source left out"),
    Defect("double-contribution", d_double_contribution, data=True,
           pins={"coll_in": ["allreduce", "reducescatter", "reduce"]}, doc="a reduce source listed twice"),
    Defect("order-one-rank", d_order_one_rank, data=True,
           pins={"coll": "allreduce", "skeleton": "1pa", "sum_style": "one", "pull_accumulate": False},
           doc="one rank sums an all-reduce chunk in another order (class 6)"),
    Defect("own-input-first", d_own_first, data=True,
           pins={"coll": "allreduce", "skeleton": "1pa", "sum_style": "one", "pull_accumulate": False},
           doc="every rank sums its own input first (class 6)"),
    Defect("missing-handshake", d_missing_handshake, pins={"single_launch": False},
           doc="a needed ready signal and its wait left out"),
    Defect("ll-no-put", d_ll_no_put, pins={"transports": ["push-LL"]},
           doc="an LL packet chunk read that no put writes"),
    Defect("parked-other-size", d_none, data=True,
           pins={"park": True, "coll": "allreduce", "inplace": False, "reduce_put": False,
                 },
           doc="a chunk parked in a user slot of another index (class 1)"),
    Defect("ll-then-get", d_none, expect="consistent", plan="ll_covers_writes",
           pins={"coll": "allgather", "skeleton": "ll-then-get", "inplace": False},
           doc="a get of a peer's earlier plain writes ordered only by its LL packets (class 4)"),
]
BY_NAME = {d.name: d for d in CATALOGUE}


def name(ch):
    if ch.kind == "memory":
        return f"memory({ch.src}, {ch.dst}, {ch.proto}, {ch.cid})"
    if ch.kind == "port":
        return f"port({ch.src}, {ch.dst}, {ch.cid})"
    return f"switch({ch.src}..{ch.dst})"


def fmt(ref):
    return f"{ref.buf}@{ref.rank}[{ref.lo}{'' if ref.n == 1 else '..%d' % (ref.lo + ref.n)}]"
