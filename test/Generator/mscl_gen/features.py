"""Features of a program that issue 39 names as places the checkers went
wrong, found on the program itself (so that a finding can be attributed):

- multichunk-user-scratch: an operation on a run of chunks between a user
  buffer and scratch (class 2: chunk k of each operand, or one run of
  elements?);
- group-uneven: a thread-block group whose operation reads a chunk that an
  earlier operation of the group wrote moving another element count (class
  3: the kernel splits each op over the group's blocks by its own count);
- pull-accumulate: a read_reduce and a local reduce into the same chunk
  (class 5: the fusion that put the local term first);
- ll-handshake (set while lowering): a write into a peer, or a read of its
  input, ordered only by having read the peer's LL packets of this launch
  (item 7).
"""
from .ir import flat

USER = ("input", "output")


def move_size(op, K, k):
    """How many elements chunk k of an op moves, as the residues of its
    user operands (all scratch: a whole scratch chunk)."""
    users = frozenset((r.lo + k) % K for r in [op.dst] + [s for s in op.srcs if s.n]
                      if r.buf in USER)
    return users or "F"


def program_features(prog):
    feats = set()
    for key, items in prog.blocks.items():
        ops = list(flat(items))
        group = prog.lanes[key].size > 1
        written = {}
        acc_rr = set()
        for op in ops:
            refs = [op.dst] + list(op.srcs) if op.dst is not None else []
            if any(r.n > 1 for r in refs):
                bufs = {r.buf in USER for r in refs if r.n}
                if len(bufs) == 2:
                    feats.add("multichunk-user-scratch")
            if op.kind == "read_reduce":
                acc_rr.add(op.dst)
            if op.kind == "reduce" and op.dst in acc_rr:
                feats.add("pull-accumulate")
            if group and op.dst is not None:
                for s in op.srcs:
                    for k, c in enumerate(s.chunks()):
                        w = written.get((c.buf, c.rank, c.lo))
                        if w is not None and w != move_size(op, prog.K, k % max(op.dst.n, 1)):
                            feats.add("group-uneven")
                if op.kind not in ("put", "put_signal", "put_signal_flush", "reduce_put"):
                    for k, c in enumerate(op.dst.chunks()):
                        written[(c.buf, c.rank, c.lo)] = move_size(op, prog.K, k)
    return feats
