"""Phases of transfers, and the sync protocol that lowers them to a Program.

A skeleton describes an algorithm as phases. A phase is a set of transfers
(a push: the data's rank puts into a peer; a pull: the peer gets it), each
on a *lane* (a thread block or group, the same lane on every rank, with
its own channel ids), plus local copies and reductions, each either in the
transfer step (D, before the phase's data arrives) or after it (P).

Every (rank, lane) runs every phase as the same five steps:

    S1  signal "ready": to each peer that will write into our plain buffer
        (it must not overwrite what we, or our caller in the previous
        launch, still use) or read our data (it must be written);
    W1  wait for the ready signals we need;
    D   puts, gets, read_reduces, reduce_puts, and D-step local ops;
    S2  signal each peer we put into over HB or a port ("data", covering
        the puts), and each peer we read from ("done": its data may be
        overwritten now); flush port channels;
    W2  wait for the data and done signals of our peers;
    P   the local ops that use what arrived.

Why this is right. Deadlock: signals never block, and a wait of step W1
(W2) of phase k only needs the S1 (S2) signals of phase k, which every
block sends after finishing phase k-1 and the waits before it, so by
induction on (phase, step) every wait is released. Races: a peer's write
into slot X of rank d comes after a ready signal d sent after its last
access of X (or a signal d sent later than that, which the walk below
finds: "coverage"); a read of data pushed over HB or a port comes after
the wait for the data signal that follows the put on its channel; a pulled
slot is written by its owner only after the puller's done signal; an LL
packet slot is written once per launch, and read by spinning on it. Across
launches: every write into a peer's buffer follows a signal the peer sent
in this launch (so the peer's kernel, and its caller, are past the previous
launch); every pull is acknowledged before the owner's kernel ends; a rank
that sends LL packets to a peer hears from it in every launch (else an
"ack" is added), so it never runs two launches ahead and overwrites the
packet half the peer still reads. The step positions below (10k + s) order
these events for the coverage walk.

Thread-block groups drift (one block can send its next signal before
another sent its previous one; docs/verification.md): every channel of a
group lane carries at most one signal per launch (ids are fresh per phase
and purpose), and inside a pipeline, where the same channel signals once
per iteration, the ready signals are never skipped, so each iteration's
signal follows a wait on a signal sent after the peer waited for the
previous one.
"""
from dataclasses import dataclass, field
from typing import Optional

from .ir import Chan, Op, Pipe, Program, Ref
from .layout import canon

INF = float("inf")


class GenBug(Exception):
    """The generator built something its own rules forbid."""


class NoProgram(Exception):
    """No attempt gave a program of the kind asked for (every one too large,
    or without a place for the defect): nothing is wrong, the case is
    skipped."""


@dataclass
class Xfer:
    lane: int
    s: int                    # the rank holding the data
    d: int                    # the rank receiving it
    srcs: list                # Refs on s (several: a reduce_put)
    dst: Ref                  # on d
    mode: str                 # "push" or "pull"
    proto: str                # "LL", "HB", "port"
    accum: bool = False       # pull: read_reduce (dst += src)
    stage: Optional[Ref] = None   # port push staged through this slot on s
    flush: str = "after"      # port: "psf", "after", "end"
    use_reduce_put: bool = False


@dataclass
class Loc:
    lane: int
    rank: int
    kind: str                 # "copy", "reduce"
    dst: Ref
    srcs: list
    step: str = "P"


@dataclass
class Phase:
    items: list = field(default_factory=list)
    pipe: Optional[int] = None          # pipeline group id
    unit: int = 0
    hs: list = field(default_factory=list)   # forced ready events (a, b, lane)
    switch: list = field(default_factory=list)  # (rank, lane, Op) switch ops, D step


class Plan:
    def __init__(self, coll, N, K, inplace, root, gpn, nlanes, rng):
        self.coll, self.N, self.K = coll, N, K
        self.inplace, self.root, self.gpn = inplace, root, gpn
        self.nlanes = nlanes
        self.rng = rng
        self.phases = []
        self.scratch = {}
        self.group_lanes = set()       # (rank, lane) that are groups
        self.shared_ids = {}           # lane -> bool: one channel per peer
        self.lane_ids = {}             # lane -> base channel id
        self.fresh = {}                # (lane, key) -> id
        self.next_id = 0
        self.features = set()
        self.redundant_ready = 0.0     # chance to signal ready though covered
        self.relax_p = True            # place P ops right after their waits
        self.single_launch = False
        self.ctl_port = 0.0            # chance that control signals use ports
        self.ll_covers_writes = False  # class 4 defect: see covered()
        self.prefer_ll = 0.5
        self.ll_send = {}

    # -- building -----------------------------------------------------
    def phase(self, pipe=None, unit=0):
        ph = Phase(pipe=pipe, unit=unit)
        self.phases.append(ph)
        return ph

    def alloc(self, name, n=1):
        """n fresh consecutive chunks of scratch buffer `name` (the same
        index on every rank): scratch slots are written once per launch."""
        lo = self.scratch.get(name, 0)
        self.scratch[name] = lo + n
        return lo

    def node(self, r):
        return 0 if not self.gpn else r // self.gpn

    def same_node(self, a, b):
        return self.node(a) == self.node(b)

    def canon(self, ref):
        return canon(self.coll, self.inplace, self.K, ref.buf, ref.rank, ref.lo)

    # -- channels -----------------------------------------------------
    def chan_id(self, lane, key):
        if self.shared_ids.get(lane, True) and not self.lane_is_group(lane):
            return self.lane_ids[lane]
        if (lane, key) not in self.fresh:
            self.fresh[(lane, key)] = self.take_id()
        return self.fresh[(lane, key)]

    def take_id(self):
        used = set(self.lane_ids.values()) | set(self.fresh.values())
        while self.next_id in used:
            self.next_id += 1
        return self.next_id

    def lane_is_group(self, lane):
        return any(l == lane for (_, l) in self.group_lanes)

    def data_chan(self, x, k):
        if x.proto == "LL":
            return Chan("memory", x.s, x.d, "LL", self.lane_ids[x.lane])
        cid = self.chan_id(x.lane, (k, "data", x.proto))
        if x.proto == "HB":
            return Chan("memory", x.s, x.d, "HB", cid)
        return Chan("port", x.s, x.d, None, cid)

    def pull_chan(self, x, k):
        cid = self.chan_id(x.lane, (k, "data", "HB"))
        return Chan("memory", x.d, x.s, "HB", cid)

    def ctl_chan(self, a, b, lane, k, purpose):
        """Channel for a control signal from a to b; the same call from
        b's side gives its other end."""
        cid = self.chan_id(lane, (k, purpose))
        lo, hi = min(a, b), max(a, b)
        use_port = not self.same_node(a, b) or self.ctl_kind.get((lo, hi, lane, k, purpose), False)
        if use_port:
            return Chan("port", a, b, None, cid)
        return Chan("memory", a, b, "HB", cid)

    # -- lowering -----------------------------------------------------
    def lower(self, name, lanes):
        """The Program; `lanes` maps (rank, lane) -> Lane."""
        rng = self.rng
        self.ctl_kind = {}
        for k in range(len(self.phases)):
            for a in range(self.N):
                for b in range(a + 1, self.N):
                    for lane in range(self.nlanes):
                        for purpose in ("ready", "done", "ack"):
                            if rng.random() < self.ctl_port:
                                self.ctl_kind[(a, b, lane, k, purpose)] = True
        self.group_lanes = {b for b, l in lanes.items() if l.size > 1}
        # A staged port push flushes before its stage is filled again, with
        # put_signal_flush: only where it is its channel's one put.
        for k, ph in enumerate(self.phases):
            per = {}
            for x in ph.items:
                if isinstance(x, Xfer) and x.mode == "push" and x.proto == "port":
                    per.setdefault((x.s, x.d, x.lane), []).append(x)
            for xs in per.values():
                if len(xs) > 1:
                    for x in xs:
                        x.stage = None
        self.check_phases()
        self.shuffle_puts()
        out = {b: [] for b in lanes}
        acc = {}        # (rank, canon slot) -> [(pos, is_write)]
        events = {}     # (a, b, lane) -> [(send, consume, pipe)]
        future_writes = self.write_positions()
        port_end = {}   # (rank, lane) -> [chan]
        heard = set()   # (s, d): s consumed something from d
        ll_pairs = {}   # (s, d) -> lane

        def touch(rank, ref, pos, write):
            for c in ref.chunks():
                acc.setdefault((rank, self.canon(c)), []).append((pos, write))

        def last_access(rank, ref, writes_only):
            last = None
            for c in ref.chunks():
                for pos, w in acc.get((rank, self.canon(c)), []):
                    if writes_only and not w:
                        continue
                    last = pos if last is None else max(last, pos)
            return last

        def covered(a, b, lane, k, ref, writes_only, pipe):
            """Has b, before its D step of phase k, consumed a signal (or LL
            packets) a sent after a's last relevant access of ref?"""
            if pipe is not None and ((a, lane) in self.group_lanes or (b, lane) in self.group_lanes):
                return False
            last = last_access(a, ref, writes_only) if ref is not None else None
            found = None
            for send, consume, epipe, kind in events.get((a, b, lane), []):
                if consume >= 10 * k + 2:
                    continue
                if epipe is not None and epipe != pipe:
                    # a signal in a pipeline before this access: its last
                    # iteration may cover it, which this walk does not try
                    # to show (count 0 runs none): the ready signal is kept,
                    # marked as perhaps not needed
                    if kind != "LL" and (last is None or send > last):
                        self._maybe = True
                    continue
                if kind == "LL" and self.ll_covers_writes and writes_only:
                    # issue 39, class 4 (a defect on purpose): take the LL
                    # packets as ordering the sender's earlier writes
                    send = self.ll_send[(a, b, lane, consume)]
                if last is None or send > last:
                    if kind != "LL":
                        found = found or "signal"
                    elif found != "LL" and (found is None or rng.random() < self.prefer_ll):
                        # item 7 probe: rely on the packets though a signal
                        # would do too
                        found = "LL-writes" if (last is not None) else "LL"
            return found

        for k, ph in enumerate(self.phases):
            base = 10 * k
            pipe = ph.pipe
            ready = set()      # (a, b, lane): a signals b at S1, b waits at W1
            for (a, b, lane) in ph.hs:
                ready.add((a, b, lane))
            needed, maybe, users = set(), set(), set()
            for x in ph.items:
                if not isinstance(x, Xfer):
                    continue
                self._maybe = False
                if x.mode == "push" and x.proto != "LL":
                    key, how = (x.d, x.s, x.lane), covered(x.d, x.s, x.lane, k, x.dst, False, pipe)
                    ref = x.dst
                elif x.mode == "pull":
                    key, how = (x.s, x.d, x.lane), covered(x.s, x.d, x.lane, k, x.srcs[0], True, pipe)
                    ref = x.srcs[0]
                else:
                    continue
                if not how:
                    (maybe if self._maybe else needed).add(key)
                    if ref.buf in ("input", "output"):
                        users.add(key)
                    ready.add(key)
                elif rng.random() < self.redundant_ready:
                    ready.add(key)
                elif how == "LL":
                    self.features.add("ll-handshake")
                elif how == "LL-writes":
                    self.features.add("ll-covers-write")
            # per (rank, lane) step lists
            steps = {b: {"S1": [], "W1": [], "D": [], "S2": [], "F": [], "W2": [], "P": []}
                     for b in lanes}
            # A needed ready signal is surely needed only in the first phase
            # that synchronises at all (later, a chain of signals through a
            # third rank may order the access already, which the coverage
            # walk, direct signals only, does not see) and for a user buffer
            # (a peer's plain scratch may be ordered after its reads by the
            # previous launch's later signals; a user buffer's next input or
            # last result is the caller's, between the launches). The
            # missing-handshake defect drops only those.
            first_sync = not any(events.values())
            for (a, b, lane) in sorted(ready):
                ch = self.ctl_chan(a, b, lane, k, "ready")
                # "ready": needed; "hs": the start handshake; "ready-extra":
                # covered by an earlier signal, sent anyway
                if (a, b, lane) in needed:
                    sure = first_sync and (a, b, lane) not in maybe and (a, b, lane) in users
                    tag = "ready" if sure else "ready-late"
                else:
                    tag = "hs" if (a, b, lane) in ph.hs else "ready-extra"
                steps[(a, lane)]["S1"].append(Op("signal", ch, tag=tag))
                steps[(b, lane)]["W1"].append(Op("wait", ch.other_end(), tag=tag))
                events.setdefault((a, b, lane), []).append((base + 0, base + 1, pipe, "signal"))
                heard.add((b, a))
            # D step, in item order per rank
            data_sig = {}      # (s, lane, chan key) -> [chan, d, n puts, index of last put]
            done = set()       # (d, s, lane): d signals s that it finished reading
            for x in ph.items:
                if isinstance(x, Loc):
                    if x.step == "D":
                        steps[(x.rank, x.lane)]["D"].append(Op(x.kind, None, x.dst, tuple(x.srcs), tag="compute"))
                    continue
                if x.mode == "push":
                    ch = self.data_chan(x, k)
                    dl = steps[(x.s, x.lane)]["D"]
                    src = x.srcs
                    if x.stage is not None:
                        dl.append(Op("copy", None, x.stage, tuple(x.srcs), tag="stage"))
                        src = [x.stage]
                    kind = "reduce_put" if (len(src) > 1 or x.use_reduce_put) else "put"
                    dl.append(Op(kind, ch, x.dst, tuple(src), tag="xfer"))
                    if x.proto != "LL":
                        e = data_sig.setdefault((x.s, x.lane, ch.key()), [ch, x.d, 0, None, []])
                        e[2] += 1
                        e[3] = (len(dl) - 1, x)
                        e[4].append(x)
                else:
                    ch = self.pull_chan(x, k)
                    kind = "read_reduce" if x.accum else "get"
                    steps[(x.d, x.lane)]["D"].append(Op(kind, ch, x.dst, tuple(x.srcs), tag="xfer"))
                    done.add((x.d, x.s, x.lane))
            # switch ops (D step, between the handshakes a skeleton adds)
            for (rank, lane, op) in ph.switch:
                steps[(rank, lane)]["D"].append(op)
            # fuse the data signal into the last put where allowed; flushes
            for (s, lane, key), e in sorted(data_sig.items(), key=lambda t: repr(t[0])):
                ch, d, n, (idx, x), xs = e
                dl = steps[(s, lane)]["D"]
                op = dl[idx]
                fused = False
                if op.kind == "put" and (x.stage is not None or rng.random() < 0.5):
                    if ch.kind == "port" and (x.flush == "psf" or x.stage is not None):
                        op.kind = "put_signal_flush"
                    else:
                        op.kind = "put_signal"
                    fused = True
                if not fused:
                    steps[(s, lane)]["S2"].append(Op("signal", ch, tag="data"))
                send = base + (1.9 if fused else 3)
                steps[(d, lane)]["W2"].append(Op("wait", ch.other_end(), tag="data"))
                events.setdefault((s, d, lane), []).append((send, base + 4, pipe, "signal"))
                heard.add((d, s))
                if ch.kind != "port":
                    continue
                if op.kind == "put_signal_flush" and n == 1:
                    policy = "psf"
                elif x.flush == "end" and not any(self.written_after(future_writes, y, base) for y in xs):
                    policy = "end"
                    port_end.setdefault((s, lane), [])
                    if ch not in port_end[(s, lane)]:
                        port_end[(s, lane)].append(ch)
                else:
                    policy = "after"
                    if op.kind != "put_signal_flush":
                        steps[(s, lane)]["F"].append(Op("flush", ch, tag="flush"))
                for y in xs:
                    y.flush = policy
                if policy == "after" and op.kind == "put_signal_flush":
                    # several puts, the last one flushes: the flush is at D
                    for y in xs:
                        y.flush = "psf_last"
            for (d, s, lane) in sorted(done):
                ch = self.ctl_chan(d, s, lane, k, "done")
                steps[(d, lane)]["S2"].append(Op("signal", ch, tag="done"))
                steps[(s, lane)]["W2"].append(Op("wait", ch.other_end(), tag="done"))
                events.setdefault((d, s, lane), []).append((base + 3, base + 4, pipe, "signal"))
                heard.add((s, d))
            # accesses of this phase, for the coverage of later phases
            for x in ph.items:
                if isinstance(x, Loc):
                    pos = base + (2 if x.step == "D" else 5)
                    for s in x.srcs:
                        touch(x.rank, s, pos, False)
                    touch(x.rank, x.dst, pos, True)
                    continue
                if x.mode == "push":
                    rd = {"psf": base + 2, "psf_last": base + 2, "after": base + 3.5, "end": INF}[x.flush] if x.proto == "port" else base + 2
                    for s in x.srcs:
                        touch(x.s, s, rd, False)
                    if x.stage is not None:
                        touch(x.s, x.stage, base + 2, True)
                        touch(x.s, x.stage, rd, False)
                    touch(x.d, x.dst, base + 4 if x.proto != "LL" else base + 5, True)
                    if x.proto == "LL" and (x.d, x.lane) not in self.group_lanes:
                        # reading a peer's packets shows its kernel started;
                        # not to a group, whose blocks wait only on their
                        # stripes of what the read moves: the proof credits
                        # a group only with reads of a scratch chunk's worth
                        # at every count, and these go into user chunks
                        events.setdefault((x.s, x.d, x.lane), []).append((-INF, base + 5, pipe, "LL"))
                        self.ll_send[(x.s, x.d, x.lane, base + 5)] = base + 2
                        heard.add((x.d, x.s))
                    if x.proto == "LL":
                        ll_pairs.setdefault((x.s, x.d), x.lane)
                else:
                    touch(x.s, x.srcs[0], base + 4, False)
                    touch(x.d, x.dst, base + 2, True)
                    if x.accum:
                        touch(x.d, x.dst, base + 2, False)
            for (rank, lane, op) in ph.switch:
                for r in range(op.chan.src, op.chan.dst):
                    if op.kind == "swreduce":
                        touch(r, Ref(op.srcs[0].buf, r, op.srcs[0].lo), base + 2, False)
                        touch(rank, op.dst, base + 2, True)
                    else:
                        touch(rank, op.srcs[0], base + 2, False)
                        touch(r, Ref(op.dst.buf, r, op.dst.lo), base + 2, True)
            self.emit_phase(ph, steps, out)
        # LL writers must hear from their readers every launch
        for (s, d), lane in sorted(ll_pairs.items()):
            if (s, d) in heard:
                continue
            ch = self.ctl_chan(d, s, lane, len(self.phases), "ack")
            out[(d, lane)].append(Op("signal", ch, tag="ack"))
            out[(s, lane)].append(Op("wait", ch.other_end(), tag="ack"))
            heard.add((s, d))
        for (s, lane), chans in sorted(port_end.items()):
            for ch in chans:
                out[(s, lane)].append(Op("flush", ch, tag="flush"))
        prog = Program(name, self.coll, self.N, self.K, self.inplace, self.root,
                       self.gpn, dict(self.scratch), out, dict(lanes),
                       self.single_launch)
        return prog

    def emit_phase(self, ph, steps, out):
        rng = self.rng
        self._cur = ph
        for b, st in steps.items():
            seq = []
            for key in ("S1", "W1"):
                ops = st[key]
                rng.shuffle(ops)
                seq += ops
            seq += st["D"]
            sig = st["S2"]
            rng.shuffle(sig)
            seq += sig + st["F"]
            waits = st["W2"]
            rng.shuffle(waits)
            ploc = [Op(x.kind, None, x.dst, tuple(x.srcs), tag="compute")
                    for x in ph.items if isinstance(x, Loc) and x.step == "P"
                    and (x.rank, x.lane) == b]
            if self.relax_p:
                seq += self.interleave(waits, ploc, b)
            else:
                seq += waits + ploc
            if not seq:
                continue
            if ph.pipe is not None:
                last = out[b][-1] if out[b] else None
                if isinstance(last, Pipe) and getattr(last, "group", None) == ph.pipe:
                    last.body += seq
                else:
                    p = Pipe(ph.unit, seq)
                    p.group = ph.pipe
                    out[b].append(p)
            else:
                out[b] += seq

    def interleave(self, waits, ploc, b):
        """Each P op right after the last wait it depends on (the data it
        reads or overwrites landed; peers reading its destination are
        done), keeping the P ops in order. Waits are on per-phase
        channels, so which wait covers what is known from the tags: a data
        wait on a channel from peer q covers q's puts into this rank; a
        done wait covers q's reads of this rank's slots. Being exact costs
        little: without knowing, every P op goes after every wait."""
        # Without per-op knowledge of which wait covers which slot the safe
        # order is all waits first; the relaxation moves P ops that touch
        # nothing landed or read this phase ahead of the waits.
        landed = self.touched_by_peers(b)
        seq = []
        rest = list(waits)
        for op in ploc:
            slots = {self.canon(c) for r in list(op.srcs) + [op.dst] for c in r.chunks()}
            if slots & landed:
                seq += rest
                rest = []
            seq.append(op)
        return seq + rest

    def touched_by_peers(self, b):
        rank, lane = b
        ph = self._cur
        slots = set()
        for x in ph.items:
            if isinstance(x, Xfer) and x.lane == lane:
                if x.mode == "push" and x.d == rank:
                    slots |= {self.canon(c) for c in x.dst.chunks()}
                if x.mode == "pull" and x.s == rank:
                    slots |= {self.canon(c) for c in x.srcs[0].chunks()}
        return slots

    def shuffle_puts(self):
        """Puts only read local data: a run of them in one block's D step
        may go in any order (runs stop at every other D-step item)."""
        for ph in self.phases:
            owner = {}
            for i, x in enumerate(ph.items):
                if isinstance(x, Loc):
                    b = (x.rank, x.lane) if x.step == "D" else None
                elif x.mode == "push":
                    b = (x.s, x.lane)
                else:
                    b = (x.d, x.lane)
                if b is not None:
                    owner.setdefault(b, []).append(i)
            for idx in owner.values():
                run = []
                for i in idx + [None]:
                    x = ph.items[i] if i is not None else None
                    if isinstance(x, Xfer) and x.mode == "push":
                        run.append(i)
                        continue
                    if len(run) > 1:
                        xs = [ph.items[j] for j in run]
                        self.rng.shuffle(xs)
                        for j, y in zip(run, xs):
                            ph.items[j] = y
                    run = []

    def write_positions(self):
        res = {}
        for k, ph in enumerate(self.phases):
            for x in ph.items:
                if isinstance(x, Loc):
                    refs = [(x.rank, x.dst, 10 * k + (2 if x.step == "D" else 5))]
                elif x.mode == "push":
                    refs = [(x.d, x.dst, 10 * k + 2)]
                    if x.stage is not None:
                        refs.append((x.s, x.stage, 10 * k + 2))
                else:
                    refs = [(x.d, x.dst, 10 * k + 2)]
                for rank, ref, pos in refs:
                    for c in ref.chunks():
                        res.setdefault(self.canon(c), []).append(pos)
        return res

    def written_after(self, fw, x, base):
        for s in x.srcs:
            for c in s.chunks():
                if any(p > base + 2 for p in fw.get(self.canon(c), [])):
                    return True
        return False

    def check_phases(self):
        """The rules each phase must keep for the protocol to be race-free:
        what lands on a rank in a phase (pushes into it) and what peers
        read from it (pulls) is not touched by its own D step, nor written
        twice; only LL puts write packet buffers."""
        for k, ph in enumerate(self.phases):
            landing, pulled = {}, {}
            for x in ph.items:
                if isinstance(x, Xfer):
                    if x.mode == "push":
                        for c in x.dst.chunks():
                            key = self.canon(c)
                            if key in landing:
                                raise GenBug(f"phase {k}: two transfers write {key}")
                            landing[key] = x
                    else:
                        for c in x.srcs[0].chunks():
                            pulled[self.canon(c)] = x
            for x in ph.items:
                reads, writes = [], []
                if isinstance(x, Loc):
                    if x.step != "D":
                        continue
                    reads, writes = x.srcs, [x.dst]
                elif x.mode == "push":
                    reads = list(x.srcs)
                    if x.stage is not None:
                        writes = [x.stage]
                else:
                    writes = [x.dst]
                for r in reads:
                    for c in r.chunks():
                        if self.canon(c) in landing:
                            raise GenBug(f"phase {k}: D step reads {self.canon(c)}, which lands in it")
                for w in writes:
                    for c in w.chunks():
                        if self.canon(c) in landing or self.canon(c) in pulled:
                            raise GenBug(f"phase {k}: D step writes {self.canon(c)}, which peers use in it")
