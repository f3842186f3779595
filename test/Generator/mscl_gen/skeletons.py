"""Algorithm skeletons: each collective as phases of transfers.

A skeleton says which data goes where (all pairs, ring, chain, one-shot or
two-phase, straight into the output or through scratch); `Gen` picks, for
every phase and lane, how it travels (push or pull; LL, HB or a port
channel; staged or not) and how it is summed, from the choices that keep
the program correct:

- a transfer moves a chunk between chunks of one residue (user chunk j
  and j' with j = j' mod K have the same size at every count; a scratch
  chunk holds at least as much), so nothing is parked in a slot of another
  size;
- LL packets land in fresh packet slots, read by operations that move at
  most what the put sent;
- every rank that computes an all-reduce chunk sums the same terms in the
  same order (`order`), so all get the same bits;
- in place, nothing is overwritten while a peer or a later step still
  needs it (the phase rules in plan.Plan.check_phases, and the
  generator's symbolic run, refuse a skeleton that would).
"""
from .ir import Ref
from .plan import Loc, Xfer

PLAIN_NAMES = ["recv", "tmp", "part", "buf", "slot", "acc", "box", "land", "hold"]
PACKET_NAMES = ["pk", "llbuf", "pkt", "lls", "pack"]


class Gen:
    def __init__(self, plan, rng, opts):
        self.p = plan
        self.rng = rng
        self.o = opts
        self.N, self.K = plan.N, plan.K
        self.lane_ranges = opts["lane_ranges"]       # [(lo, hi)] of [0, K)
        self.choice = {}
        self.names = {}
        self.order = opts["order"]                    # summation order of ranks
        self.stage_slot = {}

    # -- lanes and names --------------------------------------------
    def lane(self, j):
        j %= self.K
        for i, (lo, hi) in enumerate(self.lane_ranges):
            if lo <= j < hi:
                return i
        raise ValueError(j)

    def runs(self, idx, base=0):
        """Split chunk indices (residues j, at offset base) into the runs
        that one op may cover: consecutive, one lane; single chunks when
        the program does not use multi-chunk operands."""
        out = []
        for j in idx:
            if (out and self.o["multichunk"] and out[-1][1] == j
                    and self.lane(out[-1][0]) == self.lane(j)):
                out[-1][1] = j + 1
            else:
                out.append([j, j + 1])
        return [(a + base, b - a) for a, b in out]

    def bufname(self, kind, k):
        key = (kind, k if self.o["buf_per_phase"] else 0)
        if key not in self.names:
            pool = PACKET_NAMES if kind == "pk" else PLAIN_NAMES
            used = set(self.names.values())
            base = self.rng.choice(pool)
            name, n = base, 0
            while name in used:
                n += 1
                name = f"{base}{n}"
            self.names[key] = name
        return self.names[key]

    def packet_names(self):
        return {v for (kind, _), v in self.names.items() if kind == "pk"}

    def slot(self, kind, k, d, n):
        name = self.bufname(kind, k)
        return Ref(name, d, self.p.alloc(name, n), n)

    # -- transports -------------------------------------------------
    def pick(self, k, lane, s, d, allow):
        """(mode, proto) for a transfer s -> d; `allow` names the forms
        the caller can take: push-HB, push-port, push-LL, pull."""
        same = self.p.same_node(s, d)
        ok = [a for a in allow if same or a == "push-port"]
        if not ok:
            ok = ["push-port"]
        ok = [a for a in ok if a in self.o["transports"]] or ok
        key = (k, lane)
        if key not in self.choice:
            self.choice[key] = self.rng.choice(self.o["transports"])
        want = self.choice[key]
        if want not in ok or self.rng.random() < self.o["mix"]:
            want = self.rng.choice(ok)
        mode, proto = want.split("-") if want != "pull" else ("pull", "HB")
        return mode, proto

    def ph(self, k):
        while len(self.p.phases) <= k:
            self.p.phase()
        return self.p.phases[k]

    def xfer(self, k, x):
        self.ph(k).items.append(x)

    def local(self, k, lane, rank, kind, dst, srcs, step="P"):
        if kind == "copy" and self.p.canon(dst) == self.p.canon(srcs[0]):
            return
        if (dst.n > 1 and all(x.n in (0, dst.n) for x in srcs)
                and self.rng.random() < self.o.get("split", 0.0)):
            # the run's chunks one by one: what a multi-chunk transfer
            # wrote is then read chunk by chunk (issue 39, class 2: a run of
            # chunks means chunk k with chunk k, not one run of elements)
            for c in range(dst.n):
                one = [Ref(x.buf, x.rank, x.lo + c, 1) if x.n else x for x in srcs]
                self.local(k, lane, rank, kind, Ref(dst.buf, dst.rank, dst.lo + c, 1), one, step)
            self.p.features.add("split-runs")
            return
        self.ph(k).items.append(Loc(lane, rank, kind, dst, list(srcs), step))

    def port_push(self, k, lane, s, d, src, dst):
        x = Xfer(lane, s, d, [src], dst, "push", "port")
        x.flush = self.rng.choice(["psf", "after", "end"])
        if self.rng.random() < self.o["stage"] and src.n == 1:
            if (s, lane) not in self.stage_slot:
                self.stage_slot[(s, lane)] = True
            name = "stg"
            self.p.scratch[name] = max(self.p.scratch.get(name, 0), len(self.lane_ranges))
            x.stage = Ref(name, s, lane, 1)
        return x

    def res_lane(self, refs, res):
        """The lane of the data: from its residue, given or read off the
        first user-buffer operand (scratch indices say nothing)."""
        if res is not None:
            return self.lane(res)
        for r in refs:
            if r.buf in ("input", "output"):
                return self.lane(r.lo)
        raise ValueError("no residue for a scratch-only transfer")

    def deliver(self, k, s, src, d, dst, allow=("push-HB", "push-port", "push-LL", "pull"), res=None):
        """Make dst (on d) hold src (on s) by the end of phase k."""
        lane = self.res_lane([src, dst], res)
        if s == d:
            self.local(k, lane, d, "copy", dst, [src])
            return
        mode, proto = self.pick(k, lane, s, d, allow)
        via = proto == "LL" or (self.rng.random() < self.o["via_scratch"] and dst.buf in ("input", "output"))
        if mode == "pull":
            if via:
                t = self.slot("plain", k, d, src.n)
                self.xfer(k, Xfer(lane, s, d, [src], t, "pull", "HB"))
                self.local(k, lane, d, "copy", dst, [t])
            else:
                self.xfer(k, Xfer(lane, s, d, [src], dst, "pull", "HB"))
            return
        if via:
            t = self.slot("pk" if proto == "LL" else "plain", k, d, src.n)
            target = t
        else:
            target = dst
        if proto == "port":
            x = self.port_push(k, lane, s, d, src, target)
        else:
            x = Xfer(lane, s, d, [src], target, "push", proto)
            x.use_reduce_put = self.rng.random() < 0.1
        self.xfer(k, x)
        if via:
            self.local(k, lane, d, "copy", dst, [t])

    def fetch(self, k, s, src, d, allow=("push-HB", "push-port", "push-LL", "pull"), res=None):
        """A slot on d holding src (on s) after phase k's transfers."""
        if s == d:
            return src
        lane = self.res_lane([src], res)
        mode, proto = self.pick(k, lane, s, d, allow)
        if mode == "pull":
            t = self.slot("plain", k, d, src.n)
            self.xfer(k, Xfer(lane, s, d, [src], t, "pull", "HB"))
            return t
        t = self.slot("pk" if proto == "LL" else "plain", k, d, src.n)
        if proto == "port":
            self.xfer(k, self.port_push(k, lane, s, d, src, t))
        else:
            x = Xfer(lane, s, d, [src], t, "push", proto)
            x.use_reduce_put = self.rng.random() < 0.1
            self.xfer(k, x)
        return t

    def sum_into(self, k, rank, dst, terms, step="P", res=None):
        """dst = terms[0] + terms[1] + ..., left to right (every rank that
        sums the same chunk uses the same style, so the same tree)."""
        lane = self.res_lane([dst] + list(terms), res)
        style = self.o["sum_style"]
        if dst.buf not in ("input", "output") and any(t.buf in self.packet_names() for t in terms):
            # a scratch-to-scratch step would read a whole scratch chunk
            # of packets, more than a put from a user chunk sends
            style = "one"
        if len(terms) == 1:
            self.local(k, lane, rank, "copy", dst, terms, step)
            return
        aliases = any(self.p.canon(t) == self.p.canon(dst) for t in terms[1:])
        if style == "one" or aliases:
            self.local(k, lane, rank, "reduce", dst, terms, step)
        elif style == "copy-chain":
            self.local(k, lane, rank, "copy", dst, [terms[0]], step)
            for t in terms[1:]:
                self.local(k, lane, rank, "reduce", dst, [dst, t], step)
        else:  # "pair-chain": reduce the first two, then accumulate
            self.local(k, lane, rank, "reduce", dst, terms[:2], step)
            for t in terms[2:]:
                self.local(k, lane, rank, "reduce", dst, [dst, t], step)


def out_buf(g):
    p = g.p
    return "input" if (p.inplace and p.coll in ("reducescatter", "scatter")) else "output"


def out_ref(g, r, j, n=1):
    """Output chunk j of rank r, through the name an in-place program
    uses for it."""
    p = g.p
    if p.inplace and p.coll in ("reducescatter", "scatter"):
        return Ref("input", r, r * g.K + j, n)
    return Ref("output", r, j, n)


def in_ref(g, r, j, n=1):
    p = g.p
    if p.inplace and p.coll in ("allreduce", "broadcast", "reduce", "alltoall") and g.rng.random() < 0.5:
        return Ref("output", r, j, n)
    return Ref("input", r, j, n)


# ---------------------------------------------------------------- all-reduce
def allreduce_1pa(g):
    """Every rank fetches every peer's input and sums all N in `order`."""
    N, K = g.N, g.K
    pull_acc = g.o.get("pull_accumulate")
    for r in range(N):
        for (j, n) in g.runs(range(K)):
            if pull_acc:
                _pull_accumulate(g, 0, r, j, n)
                continue
            terms = []
            for q in g.order:
                src = in_ref(g, q, j, n)
                terms.append(g.fetch(0, q, src, r))
            if g.o.get("park") and K > 1 and n == 1:
                # defect (1): one term parked in an output slot of another
                # chunk index, written later anyway
                terms = _park(g, r, j, terms)
            g.sum_into(0, r, out_ref(g, r, j, n), terms)


def _pull_accumulate(g, k, r, j, n):
    """acc = x_order0, then acc += each next term: read_reduce for a peer's
    input, a local reduce for our own (issue 39, class 5: fusing these may
    put the local term first)."""
    lane = g.lane(j)
    out = out_ref(g, r, j, n)
    acc = out if not g.p.inplace else g.slot("plain", k, r, n)
    first = g.order[0]
    if first == r:
        g.local(k, lane, r, "copy", acc, [Ref("input", r, j, n)], step="D")
    else:
        g.xfer(k, Xfer(lane, first, r, [Ref("input", first, j, n)], acc, "pull", "HB"))
    for q in g.order[1:]:
        if q == r:
            g.local(k, lane, r, "reduce", acc, [acc, Ref("input", r, j, n)], step="D")
        else:
            g.xfer(k, Xfer(lane, q, r, [Ref("input", q, j, n)], acc, "pull", "HB", accum=True))
    if acc != out:
        g.local(k, lane, r, "copy", out, [acc])
    g.p.features.add("pull-accumulate")


def _park(g, r, j, terms):
    K = g.K
    later = list(range(j + 1, K))
    if not later or g.p.inplace:
        return terms
    other = g.rng.choice(later)
    cand = [i for i, t in enumerate(terms) if t.buf not in ("input", "output")]
    if not cand:
        return terms
    i = g.rng.choice(cand)
    park = Ref("output", r, other, 1)
    # the fetched term goes through an output slot of a later chunk (written
    # after this sum anyway): a copy moves only what the smaller chunk holds
    g.local(0, g.lane(j), r, "copy", park, [terms[i]])
    terms = list(terms)
    terms[i] = park
    g.p.features.add("parked")
    return terms


def allreduce_2pa(g):
    """Reduce-scatter then all-gather, all pairs: chunk j is summed by its
    owner and sent to everyone."""
    N, K = g.N, g.K
    owner = g.o["owner"]
    park = g.o.get("park") and not g.p.inplace
    one_node = g.p.same_node(0, N - 1)
    used = set()
    sums = {}
    for j in range(K):
        o = owner(j)
        if g.o.get("pull_accumulate") and one_node:
            _pull_accumulate(g, 0, o, j, 1)
            sums[j] = out_ref(g, o, j)
            continue
        terms = []
        for q in g.order:
            src = in_ref(g, q, j)
            if park and q != o:
                # defect (1): no scratch; rank q parks its copy of chunk j in
                # o's output slot of a chunk o does not own (written in the
                # all-gather anyway), whose size differs at some counts
                slots = [x for x in range(K) if owner(x) != o and x != j
                         and (o, x) not in used]
                if slots:
                    x = g.rng.choice(slots)
                    used.add((o, x))
                    dst = Ref("output", o, x)
                    g.deliver(0, q, src, o, dst, allow=("push-HB", "push-port", "pull"))
                    terms.append(dst)
                    g.p.features.add("parked")
                    continue
            terms.append(g.fetch(0, q, src, o))
        if g.o.get("reduce_put") and one_node and g.rng.random() < 0.7:
            # the owner sums while it sends: a reduce_put to every peer
            lane = g.lane(j)
            for p in range(N):
                if p == o:
                    continue
                mode, proto = g.pick(1, lane, o, p, ("push-HB", "push-LL"))
                if proto == "LL":
                    t = g.slot("pk", 1, p, 1)
                    g.xfer(1, Xfer(lane, o, p, list(terms), t, "push", "LL"))
                    g.local(1, lane, p, "copy", out_ref(g, p, j), [t])
                else:
                    g.xfer(1, Xfer(lane, o, p, list(terms), out_ref(g, p, j), "push", "HB"))
            # the owner's own copy, after it sent (in place the output is
            # one of the terms)
            g.sum_into(1, o, out_ref(g, o, j), terms)
            g.p.features.add("reduce_put")
            sums[j] = None
            continue
        g.sum_into(0, o, out_ref(g, o, j), terms)
        sums[j] = out_ref(g, o, j)
    for j in range(K):
        if sums[j] is None:
            continue
        o = owner(j)
        for p in range(N):
            if p != o:
                g.deliver(1, o, out_ref(g, o, j), p, out_ref(g, p, j))


def _ring_rs(g, first_phase, block_chunks, final):
    """Ring reduce-scatter: block b (chunk indices block_chunks(b) of the
    input) starts at rank b+1 and collects every rank's input on its way to
    rank b, which stores it with final(b, i, value refs)."""
    N = g.N
    partial = {}
    for s in range(N - 1):
        k = first_phase + s
        for r in range(N):
            nxt = (r + 1) % N
            b = (r - s - 1) % N
            for i, c in enumerate(block_chunks(b)):
                src = Ref("input", r, c) if s == 0 else partial[(r, b, i)]
                got = g.fetch(k, r, src, nxt, res=c)
                mine = Ref("input", nxt, c)
                if s == N - 2:
                    final(k, nxt, b, i, [got, mine])
                else:
                    acc = g.slot("plain", k, nxt, 1)
                    g.sum_into(k, nxt, acc, [got, mine], res=c)
                    partial[(nxt, b, i)] = acc


def _ring_ag(g, first_phase, block_refs, first_src=None):
    """Ring all-gather: block b, complete on rank b, is forwarded
    b -> b+1 -> ... ; block_refs(r, b) are its chunks on rank r
    (first_src(r): what rank r sends of its own block, when not those)."""
    N = g.N
    for s in range(N - 1):
        k = first_phase + s
        for r in range(N):
            nxt = (r + 1) % N
            b = (r - s) % N
            srcs = first_src(r) if (s == 0 and first_src) else block_refs(r, b)
            for src, dst in zip(srcs, block_refs(nxt, b)):
                g.deliver(k, r, src, nxt, dst)


def allreduce_ring(g):
    N, K = g.N, g.K
    m = K // N

    def chunks(b):
        return [b * m + i for i in range(m)]

    def final(k, r, b, i, terms):
        g.sum_into(k, r, out_ref(g, r, b * m + i), terms)

    _ring_rs(g, 0, chunks, final)
    _ring_ag(g, N - 1, lambda r, b: [out_ref(g, r, c) for c in chunks(b)])


# ----------------------------------------------------------- reduce-scatter
def reducescatter_allpairs(g):
    N, K = g.N, g.K
    for r in range(N):
        for (i, n) in g.runs(range(K)):
            if g.o.get("pull_accumulate") and n == 1 and not g.p.inplace:
                # the owner sums by read_reduce, in `order`
                lane = g.lane(i)
                out = out_ref(g, r, i)
                first = g.order[0]
                src0 = Ref("input", first, r * K + i)
                if first == r:
                    g.local(0, lane, r, "copy", out, [src0], step="D")
                else:
                    g.xfer(0, Xfer(lane, first, r, [src0], out, "pull", "HB"))
                for q in g.order[1:]:
                    src = Ref("input", q, r * K + i)
                    if q == r:
                        g.local(0, lane, r, "reduce", out, [out, src], step="D")
                    else:
                        g.xfer(0, Xfer(lane, q, r, [src], out, "pull", "HB", accum=True))
                g.p.features.add("pull-accumulate")
                continue
            terms = [g.fetch(0, q, Ref("input", q, r * K + i, n), r) for q in g.order]
            g.sum_into(0, r, out_ref(g, r, i, n), terms)


def reducescatter_ring(g):
    K = g.K

    def chunks(b):
        return [b * K + i for i in range(K)]

    def final(k, r, b, i, terms):
        g.sum_into(k, r, out_ref(g, r, i), terms)

    _ring_rs(g, 0, chunks, final)


# --------------------------------------------------------------- all-gather
def allgather_allpairs(g):
    N, K = g.N, g.K
    for r in range(N):
        for (i, n) in g.runs(range(K)):
            if not g.p.inplace:
                g.local(0, g.lane(i), r, "copy", Ref("output", r, r * K + i, n), [Ref("input", r, i, n)],
                        step=g.rng.choice(["D", "P"]))
            for p in range(N):
                if p != r:
                    g.deliver(0, r, Ref("input", r, i, n), p, Ref("output", p, r * K + i, n))


def allgather_ring(g):
    N, K = g.N, g.K
    for r in range(N):
        if not g.p.inplace:
            for (i, n) in g.runs(range(K)):
                g.local(0, g.lane(i), r, "copy", Ref("output", r, r * K + i, n), [Ref("input", r, i, n)],
                        step="D")

    def refs(r, b):
        return [Ref("output", r, b * K + i) for i in range(K)]

    # a rank forwards its own block from its input (its local copy into
    # the output runs in the same step)
    _ring_ag(g, 0, refs, lambda r: [Ref("input", r, i) for i in range(K)])


# ---------------------------------------------------------------- broadcast
def broadcast_direct(g):
    N, K, R = g.N, g.K, g.p.root
    for (j, n) in g.runs(range(K)):
        if not g.p.inplace:
            g.local(0, g.lane(j), R, "copy", Ref("output", R, j, n), [Ref("input", R, j, n)], step="D")
        for p in range(N):
            if p != R:
                g.deliver(0, R, Ref("input", R, j, n), p, Ref("output", p, j, n))


def broadcast_scatter_allgather(g):
    """The root scatters chunk j to its owner, owners all-gather."""
    N, K, R = g.N, g.K, g.p.root
    owner = g.o["owner"]
    for j in range(K):
        o = owner(j)
        src = Ref("input", R, j)
        if not g.p.inplace:
            g.local(0, g.lane(j), R, "copy", Ref("output", R, j), [src], step="D")
        if o != R:
            g.deliver(0, R, src, o, Ref("output", o, j))
    for j in range(K):
        o = owner(j)
        for p in range(N):
            if p not in (o, R):
                g.deliver(1, o, Ref("output", o, j), p, Ref("output", p, j))


def broadcast_chain(g):
    N, K, R = g.N, g.K, g.p.root
    chain = [(R + i) % N for i in range(N)]
    if not g.p.inplace:
        for (j, n) in g.runs(range(K)):
            g.local(0, g.lane(j), R, "copy", Ref("output", R, j, n), [Ref("input", R, j, n)], step="D")
    for i in range(1, N):
        prev, cur = chain[i - 1], chain[i]
        for (j, n) in g.runs(range(K)):
            src = Ref("input", R, j, n) if i == 1 else Ref("output", prev, j, n)
            g.deliver(i, prev, src, cur, Ref("output", cur, j, n))


# ------------------------------------------------------------------- reduce
def reduce_direct(g):
    N, K, R = g.N, g.K, g.p.root
    for (j, n) in g.runs(range(K)):
        terms = [g.fetch(0, q, Ref("input", q, j, n), R) for q in g.order]
        g.sum_into(0, R, Ref("output", R, j, n), terms)


def reduce_rs_gather(g):
    N, K, R = g.N, g.K, g.p.root
    owner = g.o["owner"]
    for j in range(K):
        o = owner(j)
        terms = [g.fetch(0, q, Ref("input", q, j), o) for q in g.order]
        if o == R:
            g.sum_into(0, R, Ref("output", R, j), terms)
        else:
            acc = g.slot("plain", 0, o, 1)
            g.sum_into(0, o, acc, terms, res=j)
            g.deliver(1, o, acc, R, Ref("output", R, j), res=j)


def reduce_chain(g):
    N, K, R = g.N, g.K, g.p.root
    chain = [(R + 1 + i) % N for i in range(N)]      # ends at the root
    for j in range(K):
        part = Ref("input", chain[0], j)
        for i in range(1, N):
            prev, cur = chain[i - 1], chain[i]
            got = g.fetch(i, prev, part, cur, res=j)
            mine = Ref("input", cur, j)
            if cur == R:
                g.sum_into(i, cur, Ref("output", R, j), [got, mine])
            else:
                part = g.slot("plain", i, cur, 1)
                g.sum_into(i, cur, part, [got, mine], res=j)


# ------------------------------------------------------------------- gather
def gather_direct(g):
    N, K, R = g.N, g.K, g.p.root
    for (i, n) in g.runs(range(K)):
        if not g.p.inplace:
            g.local(0, g.lane(i), R, "copy", Ref("output", R, R * K + i, n), [Ref("input", R, i, n)], step="D")
        for q in range(N):
            if q != R:
                g.deliver(0, q, Ref("input", q, i, n), R, Ref("output", R, q * K + i, n))


# ------------------------------------------------------------------ scatter
def scatter_direct(g):
    N, K, R = g.N, g.K, g.p.root
    for (i, n) in g.runs(range(K)):
        if not g.p.inplace:
            g.local(0, g.lane(i), R, "copy", Ref("output", R, i, n), [Ref("input", R, R * K + i, n)], step="D")
        for p in range(N):
            if p != R:
                g.deliver(0, R, Ref("input", R, p * K + i, n), p, out_ref(g, p, i, n))


# ----------------------------------------------------------------- alltoall
def alltoall_direct(g):
    N, K = g.N, g.K
    for r in range(N):
        for (i, n) in g.runs(range(K)):
            if not g.p.inplace:
                g.local(0, g.lane(i), r, "copy", Ref("output", r, r * K + i, n),
                        [Ref("input", r, r * K + i, n)], step="D")
            for p in range(N):
                if p == r:
                    continue
                src = Ref("input", r, p * K + i, n)
                dst = Ref("output", p, r * K + i, n)
                if g.p.inplace:
                    # the slot a block belongs in still holds the block its
                    # owner sends back: land in scratch, copy after
                    t = g.fetch(0, r, src, p)
                    g.local(0, g.lane(i), p, "copy", dst, [t])  # noqa: residue i
                else:
                    g.deliver(0, r, src, p, dst)


SKELETONS = {
    "allreduce": {"1pa": allreduce_1pa, "2pa": allreduce_2pa, "ring": allreduce_ring},
    "reducescatter": {"allpairs": reducescatter_allpairs, "ring": reducescatter_ring},
    "allgather": {"allpairs": allgather_allpairs, "ring": allgather_ring},
    "broadcast": {"direct": broadcast_direct, "scatter-ag": broadcast_scatter_allgather,
                  "chain": broadcast_chain},
    "reduce": {"direct": reduce_direct, "rs-gather": reduce_rs_gather, "chain": reduce_chain},
    "gather": {"direct": gather_direct},
    "scatter": {"direct": scatter_direct},
    "alltoall": {"direct": alltoall_direct},
}


# ------------------------------------------------------------------- switch
def switch_ops(g):
    """NVLS: all-pairs sync before and after, switch operations between
    (docs/execution-model.md): one block per rank, one node."""
    from .ir import Chan, Op
    p, N, K = g.p, g.N, g.K
    coll = p.coll
    hs = [(a, b, 0) for a in range(N) for b in range(N) if a != b]
    p.phase().hs = list(hs)
    ph = p.phase()
    sw = Chan("switch", 0, N)
    for r in range(N):
        ops = []
        if coll == "allreduce":
            m = K // N
            for i in range(m):
                j = r * m + i
                ops.append(Op("swreduce", sw, out_ref(g, r, j), (Ref("input", r, j),), tag="compute"))
                ops.append(Op("swbroadcast", sw, out_ref(g, r, j), (out_ref(g, r, j),), tag="compute"))
        elif coll == "allgather":
            for i in range(K):
                ops.append(Op("swbroadcast", sw, Ref("output", r, r * K + i), (Ref("input", r, i),), tag="compute"))
        elif coll == "reducescatter":
            for i in range(K):
                ops.append(Op("swreduce", sw, out_ref(g, r, i), (Ref("input", r, r * K + i),), tag="compute"))
        elif coll == "broadcast" and r == p.root:
            for j in range(K):
                ops.append(Op("swbroadcast", sw, Ref("output", r, j), (Ref("input", r, j),), tag="compute"))
        elif coll == "reduce" and r == p.root:
            for j in range(K):
                ops.append(Op("swreduce", sw, Ref("output", r, j), (Ref("input", r, j),), tag="compute"))
        for op in ops:
            ph.switch.append((r, 0, op))
    p.phase().hs = list(hs)
    p.features.add("switch")


SWITCH_COLLS = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce")


def allgather_ll_then_get(g):
    """Each rank copies its block into its output, then sends chunk 0 of it
    as LL packets; peers then get the other chunks from its output. The
    get needs a ready signal: reading a rank's packets shows its kernel
    started, not that its earlier plain writes are visible (issue 39,
    class 4; the defect of that name drops the signal)."""
    N, K = g.N, g.K
    for r in range(N):
        for i in range(K):
            g.local(0, g.lane(i), r, "copy", Ref("output", r, r * K + i), [Ref("input", r, i)])
    for r in range(N):
        for p in range(N):
            if p == r:
                continue
            t = g.slot("pk", 1, p, 1)
            g.xfer(1, Xfer(g.lane(0), r, p, [Ref("input", r, 0)], t, "push", "LL"))
            g.local(1, g.lane(0), p, "copy", Ref("output", p, r * K), [t])
            for i in range(1, K):
                g.xfer(2, Xfer(g.lane(i), r, p, [Ref("output", r, r * K + i)],
                               Ref("output", p, r * K + i), "pull", "HB"))


SKELETONS["allgather"]["ll-then-get"] = allgather_ll_then_get


def _tree_edges(N, R):
    """Binomial tree from the root R: at level l, position i < 2^l sends
    to position i + 2^l (positions count from the root)."""
    levels = []
    span = 1
    while span < N:
        levels.append([((R + i) % N, (R + i + span) % N) for i in range(span) if i + span < N])
        span *= 2
    return levels


def broadcast_tree(g):
    """Broadcast down a binomial tree: log2(N) phases."""
    N, K, R = g.N, g.K, g.p.root
    if not g.p.inplace:
        for (j, n) in g.runs(range(K)):
            g.local(0, g.lane(j), R, "copy", Ref("output", R, j, n), [Ref("input", R, j, n)], step="D")
    for lvl, edges in enumerate(_tree_edges(N, R)):
        for a, b in edges:
            for (j, n) in g.runs(range(K)):
                src = Ref("input", R, j, n) if a == R else Ref("output", a, j, n)
                g.deliver(lvl, a, src, b, Ref("output", b, j, n))


def reduce_tree(g):
    """Reduce up a binomial tree: leaves first; a parent adds each child's
    partial sum to its own, in the same order on the way up."""
    N, K, R = g.N, g.K, g.p.root
    levels = _tree_edges(N, R)
    part = {}
    for j in range(K):
        for r in range(N):
            part[(r, j)] = Ref("input", r, j)
    for k, edges in enumerate(reversed(levels)):
        for parent, child in edges:
            for j in range(K):
                # packets from a user chunk hold only that chunk's elements:
                # the sum must then move no more (a user operand bounds it)
                user = ("input", "output")
                ll_ok = part[(parent, j)].buf in user or part[(child, j)].buf not in user
                allow = ("push-HB", "push-port", "pull") + (("push-LL",) if ll_ok else ())
                got = g.fetch(k, child, part[(child, j)], parent, allow=allow, res=j)
                dst = Ref("output", R, j) if (parent == R and k == len(levels) - 1) else g.slot("plain", k, parent, 1)
                g.sum_into(k, parent, dst, [part[(parent, j)], got], res=j)
                part[(parent, j)] = dst


SKELETONS["broadcast"]["tree"] = broadcast_tree
SKELETONS["reduce"]["tree"] = reduce_tree
