"""The generator's own check of what it calls correct.

Runs a Program once, symbolically, chunk by chunk, under one schedule
(blocks run until they block on a wait or an LL read; puts land at once),
and says what is wrong with its data: outputs holding the wrong
contributions, a contribution counted twice, reduction trees that differ
between ranks of an all-reduce, data short of a user chunk's size at some
count (a chunk parked in a slot of another index), LL reads beyond what
their put sent, deadlock, unbalanced semaphores, one channel in two
blocks. It does not look for races: the generator's sync protocol is built
to have none, and the oracles are there to say whether that holds.

Operations on runs of chunks mean chunk k of each operand with chunk k of
the others (the meaning issue 39 settles on), and a thread-block group is
one block; programs that are correct here may be refused by a compiler
whose meaning differs, which is what the generator wants to find.
"""
from collections import Counter

from .ir import flat
from .layout import canon, chunk_counts, expected

# An extent is how many elements of a chunk hold what its value says: the
# smallest of a set of chunk sizes. frozenset() is a whole scratch chunk,
# ceil(c/K); {rho, ...} the smallest of those user chunks' sizes and that.
# User chunk rho holds floor((rho+1)c/K) - floor(rho*c/K) elements; adding
# K to c adds one to every size, so comparing at c = 1..K decides every count.
FULL = frozenset()


def user(rho):
    return frozenset([rho])


def ext_min(a, b):
    return a | b


def sizes(ext, K):
    out = []
    for c in range(1, K + 1):
        n = -(-c // K)
        for rho in ext:
            n = min(n, (rho + 1) * c // K - rho * c // K)
        out.append(n)
    return out


def covers(a, b, K):
    """Does extent a hold at least as many elements as b, at every count?"""
    return all(x >= y for x, y in zip(sizes(a, K), sizes(b, K)))


def add(a, b):
    # Floating-point addition is commutative bit for bit, not associative:
    # a node's two children are unordered, its nesting is kept.
    x, y = sorted((a, b), key=repr)
    return ("+", x, y)


def leaves(v, acc=None):
    acc = Counter() if acc is None else acc
    if v is None:
        acc[("garbage",)] += 1
    elif v[0] == "+":
        leaves(v[1], acc)
        leaves(v[2], acc)
    elif v[0] == "sw":
        for x in v[1]:
            leaves(x, acc)
    else:
        acc[v] += 1
    return acc


class Stuck(Exception):
    pass


class Checker:
    def __init__(self, prog):
        self.p = prog
        self.errors = []
        self.kin, self.kout = chunk_counts(prog.coll, prog.nranks, prog.K)
        self.slots = {}        # canon -> (value, ext)
        self.packets = {}      # canon -> sent ext, for packet chunks written
        self.packet_bufs = set()
        self.sig = Counter()   # channel key -> signals sent
        self.waited = Counter()  # channel key -> waits done on that end
        self.out_writes = set()
        self.inputs_written = set()
        for r in range(prog.nranks):
            for j in range(self.kin):
                key = self.key("input", r, j)
                self.slots[key] = (("in", r, j), user(j % prog.K))
        for items in prog.blocks.values():
            for op in flat(items):
                if op.kind in ("put", "reduce_put") and op.chan and op.chan.proto == "LL":
                    self.packet_bufs.add(op.dst.buf)

    def key(self, buf, rank, idx):
        return canon(self.p.coll, self.p.inplace, self.p.K, buf, rank, idx)

    def cap(self, ref):
        if ref.buf in ("input", "output"):
            return user(ref.lo % self.p.K)
        return FULL

    def err(self, msg):
        if msg not in self.errors:
            self.errors.append(msg)

    # -- data ---------------------------------------------------------
    def read(self, ref, m):
        k = self.key(ref.buf, ref.rank, ref.lo)
        if ref.buf in self.packet_bufs:
            if k not in self.packets:
                raise Stuck(f"LL read of {fmt(ref)}, not yet written")
            sent = self.packets[k]
            if not covers(sent, m, self.p.K):
                self.err(f"LL read of {fmt(ref)} moves {m} elements, its put sent {sent}")
        v = self.slots.get(k)
        if v is None:
            return (None, FULL)
        return v

    def write(self, ref, value, ext, op, moved=None):
        """Store value (valid over `ext`) into ref; an LL put sends
        `moved` packets however much of it is valid data."""
        k = self.key(ref.buf, ref.rank, ref.lo)
        p = self.p
        if k[0] == "input" and not p.inplace:
            self.err(f"writes the read-only input {fmt(ref)}")
        if p.coll in ("reduce", "gather") and ref.rank != p.root and (
                k[0] == "U" or k[0] == "output"):
            self.err(f"writes {fmt(ref)}: a non-root output of {p.coll}")
        if ref.buf in self.packet_bufs:
            if op.kind not in ("put", "reduce_put") or op.chan is None or op.chan.proto != "LL":
                self.err(f"writes packet chunk {fmt(ref)} other than by an LL put")
            if k in self.packets:
                self.err(f"packet chunk {fmt(ref)} written twice")
            self.packets[k] = moved if moved is not None else ext
        self.slots[k] = (value, ext)

    def run_data(self, op):
        """One chunk-by-chunk data operation; raises Stuck on an LL read
        whose packets have not landed (nothing is changed then)."""
        n = op.dst.n
        for s in op.srcs:
            if s.n not in (0, n) and not (op.kind in ("reduce", "reduce_put") and s.n % n == 0):
                self.err(f"{op.kind}: operand {fmt(s)} does not match {fmt(op.dst)}")
                return
        # expand multi-run sources of reductions into one source per run
        srcs = []
        for s in op.srcs:
            if s.n == 0:
                continue
            for g in range(s.n // n):
                srcs.append(type(s)(s.buf, s.rank, s.lo + g * n, n))
        # chunk step k: its destination, its sources, what it moves
        steps = []
        for k in range(n):
            d = op.dst.chunks()[k]
            ops_k = [x.chunks()[k] for x in srcs]
            m = self.cap(d)
            for x in ops_k:
                m = ext_min(m, self.cap(x))
            steps.append((d, ops_k, m))
        # check every LL read first, so that a blocked op changes nothing
        for d, ops_k, m in steps:
            reads = list(ops_k) + ([d] if op.kind == "read_reduce" else [])
            for x in reads:
                self.read(x, m)
        for d, ops_k, m in steps:
            if op.kind == "swreduce":
                vals = []
                ext = m
                for r in range(op.chan.src, op.chan.dst):
                    v, e = self.read(type(d)(ops_k[0].buf, r, ops_k[0].lo, 1), m)
                    vals.append(v)
                    ext = ext_min(ext, e)
                self.write(d, ("sw", tuple(vals)), ext, op)
                continue
            if op.kind == "swbroadcast":
                v, e = self.read(ops_k[0], m)
                for r in range(op.chan.src, op.chan.dst):
                    self.write(type(d)(d.buf, r, d.lo, 1), v, ext_min(m, e), op)
                continue
            vals = [self.read(x, m) for x in ops_k]
            if op.kind == "read_reduce":
                vals = [self.read(d, m)] + vals
            v, ext = vals[0]
            ext = ext_min(m, ext)
            for v2, e2 in vals[1:]:
                v = add(v, v2) if (v is not None and v2 is not None) else None
                ext = ext_min(ext, e2)
            self.write(d, v, ext, op, moved=m)

    # -- the schedule -------------------------------------------------
    def run(self):
        p = self.p
        owners = {}
        for (rank, lane), items in p.blocks.items():
            for op in flat(items):
                if op.chan is not None and op.chan.kind != "switch":
                    o = owners.setdefault(op.chan.key(), (rank, lane))
                    if o != (rank, lane):
                        self.err(f"channel {op.chan.key()} used by two blocks of rank {rank}")
                    if op.chan.src != rank:
                        self.err(f"channel {op.chan.key()} used on rank {rank}")
        cursors = {b: list(flat(items)) for b, items in p.blocks.items()}
        pos = {b: 0 for b in cursors}
        progress = True
        while progress:
            progress = False
            for b in sorted(cursors):
                ops = cursors[b]
                while pos[b] < len(ops):
                    op = ops[pos[b]]
                    if op.kind == "wait":
                        other = op.chan.other_end().key()
                        if self.sig[other] <= self.waited[op.chan.key()]:
                            break
                        self.waited[op.chan.key()] += 1
                    elif op.kind in ("signal",):
                        self.sig[op.chan.key()] += 1
                    elif op.kind in ("flush", "barrier"):
                        pass
                    else:
                        try:
                            self.run_data(op)
                        except Stuck:
                            break
                        if op.kind in ("put_signal", "put_signal_flush"):
                            self.sig[op.chan.key()] += 1
                    pos[b] += 1
                    progress = True
        stuck = [b for b in cursors if pos[b] < len(cursors[b])]
        if stuck:
            b = stuck[0]
            self.err(f"deadlock: rank {b[0]} lane {b[1]} blocked at "
                     f"{cursors[b][pos[b]].kind} ({len(stuck)} blocks blocked)")
            return self.errors
        for key, n in self.sig.items():
            other = (key[0], key[2], key[1], key[3], key[4])
            if self.waited[other] != n:
                self.err(f"unbalanced: {n} signals on {key}, {self.waited[other]} waits")
        for key, n in self.waited.items():
            other = (key[0], key[2], key[1], key[3], key[4])
            if other not in self.sig:
                self.err(f"unbalanced: {n} waits on {key}, no signal")
        self.check_outputs()
        return self.errors

    def check_outputs(self):
        p = self.p
        exp = expected(p.coll, p.nranks, p.K, p.root)
        trees = {}
        for (r, j), want in sorted(exp.items()):
            k = self.key("output", r, j)   # in place: the one buffer's slot
            v, ext = self.slots.get(k, (None, FULL))
            where = f"rank {r} output[{j}]"
            if v is None:
                self.err(f"{where} is never written")
                continue
            got = leaves(v)
            if want[0] == "in":
                if got != Counter([want]):
                    self.err(f"{where} holds {dict(got)}, wants {want}")
            else:
                if set(got) != set(want[1]):
                    self.err(f"{where} holds {sorted(got)}, wants {sorted(want[1])}")
                elif any(c > 1 for c in got.values()):
                    self.err(f"{where} counts a contribution twice")
            if not covers(ext, user(j % p.K), p.K):
                self.err(f"{where} is written short ({ext}) at some counts")
            if p.coll == "allreduce":
                trees.setdefault(j, {})[r] = v
        for j, per in trees.items():
            vals = list(per.values())
            if any(v != vals[0] for v in vals[1:]):
                self.err(f"output[{j}]: the ranks reduce in different orders")


def fmt(ref):
    return f"{ref.buf}@{ref.rank}[{ref.lo}{'' if ref.n == 1 else '..%d' % (ref.lo + ref.n)}]"


def check(prog):
    """The errors of one symbolic run; [] when the program is right."""
    return Checker(prog).run()
