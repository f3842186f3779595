"""The generator's program form: flat, rank by rank, block by block.

A generated program is kept as what `mscclc` unrolls a `.mscl` file into:
for every rank and every lane (a thread block or a thread-block group) a
list of operations, some inside pipelines. This is the form defects are
injected into and minimisation deletes from; `render` prints it as `.mscl`.
"""
from dataclasses import dataclass, field, replace
from typing import Optional

# Operations that move data, and what each reads and writes.
DATA_OPS = {"put", "put_signal", "put_signal_flush", "get", "read_reduce",
            "reduce_put", "copy", "reduce", "swreduce", "swbroadcast"}
SYNC_OPS = {"signal", "wait", "flush", "barrier"}
PUT_OPS = {"put", "put_signal", "put_signal_flush", "reduce_put"}


@dataclass(frozen=True)
class Ref:
    """Chunks lo .. lo+n-1 of buffer `buf` on `rank` (n == 0: an empty
    range of reduce sources, which stands for no source)."""
    buf: str
    rank: int
    lo: int
    n: int = 1

    def chunks(self):
        return [Ref(self.buf, self.rank, self.lo + k, 1) for k in range(self.n)]


@dataclass(frozen=True)
class Chan:
    kind: str              # "memory", "port", "switch"
    src: int
    dst: int               # switch: one past the last rank
    proto: Optional[str] = None   # memory: "LL" or "HB"
    cid: int = 0

    def other_end(self):
        return Chan(self.kind, self.dst, self.src, self.proto, self.cid)

    def key(self):
        return (self.kind, self.src, self.dst, self.proto, self.cid)


@dataclass
class Op:
    kind: str
    chan: Optional[Chan] = None
    dst: Optional[Ref] = None
    srcs: tuple = ()
    # Why the lowering placed it: "ready", "data", "done", "ack", "hs"
    # (handshake) for sync; "xfer", "land", "compute", "stage" for data.
    tag: str = ""

    def copy(self, **kw):
        return replace(self, **kw)


@dataclass
class Pipe:
    unit: int
    body: list


@dataclass
class Lane:
    """Where a lane of a rank runs: thread block `tb`, or group tb..tb+size-1."""
    tb: int
    size: int = 1


@dataclass
class Program:
    name: str
    coll: str
    nranks: int
    K: int
    inplace: bool = False
    root: int = 0
    gpn: int = 0                       # ranks per node; 0 = all on one node
    scratch: dict = field(default_factory=dict)    # name -> chunks
    blocks: dict = field(default_factory=dict)     # (rank, lane) -> [Op|Pipe]
    lanes: dict = field(default_factory=dict)      # (rank, lane) -> Lane
    single_launch: bool = False
    comment: list = field(default_factory=list)    # header comment lines
    style: int = 0                     # seed of printing choices

    def clone(self):
        def cp(items):
            return [Pipe(i.unit, [o.copy() for o in i.body]) if isinstance(i, Pipe)
                    else i.copy() for i in items]
        return Program(self.name, self.coll, self.nranks, self.K, self.inplace,
                       self.root, self.gpn, dict(self.scratch),
                       {k: cp(v) for k, v in self.blocks.items()},
                       {k: Lane(v.tb, v.size) for k, v in self.lanes.items()},
                       self.single_launch, list(self.comment), self.style)

    def nodes(self):
        return 1 if not self.gpn else self.nranks // self.gpn

    def node(self, r):
        return 0 if not self.gpn else r // self.gpn


def flat(items):
    """The operations of a block in order, pipeline bodies once."""
    for it in items:
        if isinstance(it, Pipe):
            yield from it.body
        else:
            yield it


def op_reads(op):
    """Chunk refs the op reads (local and remote)."""
    if op.kind in ("read_reduce",):
        return list(op.srcs) + [op.dst]
    if op.kind in DATA_OPS:
        return list(op.srcs)
    return []


def op_writes(op):
    return [op.dst] if op.kind in DATA_OPS and op.dst is not None else []
