"""What each collective asks for, chunk by chunk (docs/language.md).

`K` is the header's `chunks`; a user buffer has K or N*K chunks, chunk j
holding elements [floor(j*c/K'), floor((j+1)*c/K')) of its K' chunks, so
two user chunks have the same size at every count exactly when their
indices agree modulo K (their *residue*). Scratch chunks all hold
ceil(c/K) elements, at least as many as any user chunk.
"""

ROOTED = ("broadcast", "reduce", "gather", "scatter")
REDUCING = ("allreduce", "reducescatter", "reduce")
# Collectives whose --bytes counts the gathered buffer (nranks * count).
GATHERED = ("allgather", "reducescatter", "gather", "scatter", "alltoall")


def chunk_counts(coll, N, K):
    """(input chunks, output chunks)."""
    return {
        "allreduce": (K, K), "allgather": (K, N * K),
        "reducescatter": (N * K, K), "broadcast": (K, K), "reduce": (K, K),
        "gather": (K, N * K), "scatter": (N * K, K), "alltoall": (N * K, N * K),
    }[coll]


def canon(coll, inplace, K, buf, rank, idx):
    """The slot a user-buffer reference names, in-place aliasing applied:
    ('U', rank, idx) is the one user buffer of an in-place program."""
    if buf not in ("input", "output"):
        return (buf, rank, idx)
    if not inplace:
        return (buf, rank, idx)
    if coll in ("allreduce", "broadcast", "reduce", "alltoall"):
        return ("U", rank, idx)
    if coll in ("allgather", "gather"):
        # input@r[i] is output@r[r*K + i]
        return ("U", rank, rank * K + idx) if buf == "input" else ("U", rank, idx)
    if coll in ("reducescatter", "scatter"):
        # output@r[i] is input@r[r*K + i]
        return ("U", rank, rank * K + idx) if buf == "output" else ("U", rank, idx)
    raise ValueError(coll)


def expected(coll, N, K, root, order=None):
    """{(rank, output chunk): value} for every output chunk that is
    defined; a value is ("in", q, j) or ("sum", frozenset of leaves)
    (reductions: the set of contributions; the order is checked apart)."""
    res = {}
    _, kout = chunk_counts(coll, N, K)
    for r in range(N):
        for j in range(kout):
            if coll == "allreduce":
                res[(r, j)] = ("sum", frozenset(("in", q, j) for q in range(N)))
            elif coll == "allgather":
                res[(r, j)] = ("in", j // K, j % K)
            elif coll == "reducescatter":
                res[(r, j)] = ("sum", frozenset(("in", q, r * K + j) for q in range(N)))
            elif coll == "broadcast":
                res[(r, j)] = ("in", root, j)
            elif coll == "reduce":
                if r == root:
                    res[(r, j)] = ("sum", frozenset(("in", q, j) for q in range(N)))
            elif coll == "gather":
                if r == root:
                    res[(r, j)] = ("in", j // K, j % K)
            elif coll == "scatter":
                res[(r, j)] = ("in", root, r * K + j)
            elif coll == "alltoall":
                res[(r, j)] = ("in", j // K, r * K + j % K)
    return res


def sim_bytes(coll, N, count, esize):
    """--bytes for a run at `count` elements (docs/simulator.md, Sizes)."""
    return count * esize * (N if coll in GATHERED else 1)
