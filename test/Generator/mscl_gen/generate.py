"""One generated program from (seed, index): parameters, skeleton, lowering.

`generate(seed, index)` is deterministic; `params` may pin any choice
(rank count, chunks, lanes, ...), which the minimiser uses to rebuild the
same program smaller.
"""
import random
import re
from dataclasses import dataclass, field

from . import skeletons as S
from .ir import Lane, flat
from .layout import REDUCING
from .plan import GenBug, NoProgram, Plan

COLLS = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce",
         "gather", "scatter", "alltoall"]
# skeletons that need chunks = N * m (an owner per chunk, or ring blocks)
NEEDS_NM = {"2pa", "ring", "scatter-ag", "rs-gather"}
# a program past this many operations is drawn again
MAX_OPS = 1500
# skeletons made for one probe, seldom drawn otherwise
RARE = {"ll-then-get"}


@dataclass
class Generated:
    prog: object
    params: dict
    features: set = field(default_factory=set)
    instances: int = 1


def pick_params(rng, pin):
    """Every free choice of a program, as plain values (printed in the
    program's header comment, and pinned by the minimiser)."""
    P = dict(pin)

    def choose(key, fn):
        if key not in P:
            P[key] = fn()
        elif isinstance(P[key], tuple) and P[key][:1] == ("choice",):
            # a pin that leaves a choice: ("choice", [options])
            P[key] = rng.choice(P[key][1])
        return P[key]

    coll = choose("coll", lambda: rng.choice(P.get("coll_in", COLLS)))
    switch = choose("switch", lambda: coll in S.SWITCH_COLLS and rng.random() < 0.04)
    if P.get("park"):
        choose("skeleton", lambda: rng.choice(["1pa", "2pa"]))
    sk = choose("skeleton", lambda: "switch" if switch else rng.choice(
        [s for s in sorted(S.SKELETONS[coll]) if s not in RARE or rng.random() < 0.1]))
    if sk == "ll-then-get":
        P["inplace"], P["gpn"] = False, 0
    ns, ws = zip(*[(n, w) for n, w in zip([2, 3, 4, 5, 6, 7, 8, 12, 16],
                                          [20, 24, 22, 8, 6, 3, 11, 2, 2])
                   if n >= P.get("N_min", 2)])
    N = choose("N", lambda: rng.choices(ns, ws)[0])
    if sk in NEEDS_NM or (sk == "switch" and coll == "allreduce"):
        choose("K", lambda: N * (rng.choices([1, 2, 3], [70, 25, 5])[0] if N <= 8 else 1))
    elif sk == "ll-then-get" or P.get("park"):
        choose("K", lambda: rng.choice([2, 3, 5] if P.get("park") else [2, 3, N]))
    else:
        # big rank counts with many chunks make programs of 10^4 operations:
        # slow to check, and no better at finding anything
        choose("K", lambda: rng.choice([1, 1, 2, 3, 5] + ([N, 2 * N] if N <= 8 else [])
                                       + ([2, 3] if P.get("park") else [])))
    K = P["K"]
    choose("inplace", lambda: rng.random() < 0.35)
    choose("root", lambda: rng.randrange(N))
    multi = sk != "switch" and N >= 4 and N % 2 == 0 and rng.random() < 0.12
    choose("gpn", lambda: N // 2 if multi else 0)
    choose("nlanes", lambda: 1 if sk == "switch" else min(K, rng.choices([1, 2, 3], [50, 35, 15])[0]))
    choose("groups", lambda: sk != "switch" and rng.random() < 0.25)
    choose("instances", lambda: rng.choices([1, 2, 3, 4], [55, 25, 10, 10])[0])
    choose("transports", lambda: sorted(set(rng.sample(
        ["push-HB", "push-port", "push-LL", "pull"], rng.choice([1, 1, 2, 2, 3, 4])))))
    choose("multichunk", lambda: rng.random() < 0.3)
    choose("order", lambda: "rank" if rng.random() < 0.6 else "perm")
    choose("sum_style", lambda: rng.choice(["one", "one", "copy-chain", "pair-chain"]))
    pa = coll in ("allreduce", "reducescatter") and sk in ("1pa", "2pa", "allpairs")
    choose("pull_accumulate", lambda: pa and P["gpn"] == 0 and rng.random() < 0.5)
    choose("reduce_put", lambda: sk == "2pa" and rng.random() < 0.3)
    choose("handshake", lambda: rng.random() < 0.2)
    choose("pipeline", lambda: sk != "switch" and rng.random() < 0.25)
    choose("unit", lambda: rng.choice([16, 32, 48, 64, 100, 256, 1024, 4096, 65536]))
    choose("single_launch", lambda: rng.random() < 0.04)
    choose("owner", lambda: rng.choice(["block", "cyclic"]))
    return P


def build(seed, index, pin=None, plan_flags=()):
    """The Generated program for (seed, index), or GenBug. The parameters,
    the skeleton's choices, the lowering and the printing draw from
    separate random streams, so that pinning one parameter (as the
    minimiser does) leaves the others' draws alone where it can."""
    P = pick_params(random.Random(f"mscl-gen:{seed}:{index}:params"), pin or {})
    rng = random.Random(f"mscl-gen:{seed}:{index}:build")
    coll, sk, N, K = P["coll"], P["skeleton"], P["N"], P["K"]
    if sk in NEEDS_NM and K % N:
        raise GenBug("chunks must be a multiple of the rank count")
    plan = Plan(coll, N, K, P["inplace"], P["root"], P["gpn"], P["nlanes"], rng)
    nl = P["nlanes"] = min(P["nlanes"], K)
    cuts = sorted(rng.sample(range(1, K), nl - 1)) if nl > 1 else []
    bounds = [0] + cuts + [K]
    lane_ranges = [(bounds[i], bounds[i + 1]) for i in range(nl)]
    order = list(range(N))
    if P["order"] == "perm":
        rng.shuffle(order)
    m = max(1, K // N)
    owner = (lambda j: (j // m) % N) if P["owner"] == "block" else (lambda j: j % N)
    opts = {
        "lane_ranges": lane_ranges, "order": order, "owner": owner,
        "transports": P["transports"], "mix": 0.15, "via_scratch": 0.2,
        "stage": P.get("stage", 0.25), "multichunk": P["multichunk"], "sum_style": P["sum_style"],
        "buf_per_phase": rng.random() < 0.6,
        "pull_accumulate": P["pull_accumulate"], "reduce_put": P["reduce_put"],
        "park": P.get("park", False),
        "split": 0.5 if P["multichunk"] else 0.0,
    }
    g = S.Gen(plan, rng, opts)
    plan.lane_ids = {}
    ids = rng.sample(range(0, 8 if rng.random() < 0.8 else 64), nl) if nl <= 8 else list(range(nl))
    for lane in range(nl):
        plan.lane_ids[lane] = ids[lane]
        plan.shared_ids[lane] = rng.random() < 0.6
    plan.redundant_ready = rng.choice([0.0, 0.0, 0.1])
    plan.relax_p = rng.random() < 0.7
    plan.single_launch = P["single_launch"]
    plan.ctl_port = rng.choice([0.0, 0.0, 0.2])
    for f in plan_flags:
        setattr(plan, f, True)
    if sk == "switch":
        S.switch_ops(g)
    else:
        S.SKELETONS[coll][sk](g)
    phases = [ph for ph in plan.phases if ph.items or ph.hs or ph.switch]
    plan.phases = phases
    if P["handshake"] and sk != "switch":
        add_handshake(plan)
    if P["pipeline"] and sk != "switch":
        add_pipeline(plan, rng, P["unit"])
    lanes = assign_lanes(random.Random(f"mscl-gen:{seed}:{index}:lanes"), N, nl, P["groups"])
    name = "gen_" + re.sub(r"\W", "_", f"{seed}_{index}")
    plan.rng = random.Random(f"mscl-gen:{seed}:{index}:lower")
    prog = plan.lower(name, lanes)
    size = sum(len(list(flat(items))) for items in prog.blocks.values())
    if size > MAX_OPS:
        raise NoProgram(f"{size} operations: too large")
    prog.style = random.Random(f"mscl-gen:{seed}:{index}:style").randrange(1 << 30)
    from .features import program_features
    features = set(plan.features) | program_features(prog)
    if any(l.size > 1 for l in lanes.values()):
        features.add("groups")
    if P["pipeline"]:
        features.add("pipeline")
    if P["multichunk"]:
        features.add("multichunk")
    if P["inplace"]:
        features.add("inplace")
    if P["gpn"]:
        features.add("two-nodes")
    return Generated(prog, P, features, P["instances"])


def add_handshake(plan):
    """A start-of-launch handshake phase: every rank signals each peer that
    will later write into it or read from it, on that lane, and those peers
    wait; later phases' ready signals are then mostly covered."""
    from .plan import Xfer
    pairs = set()
    for ph in plan.phases:
        for x in ph.items:
            if isinstance(x, Xfer) and not (x.mode == "push" and x.proto == "LL"):
                if x.mode == "push":
                    pairs.add((x.d, x.s, x.lane))
                else:
                    pairs.add((x.s, x.d, x.lane))
    if not pairs:
        return
    from .plan import Phase
    plan.phases.insert(0, Phase(hs=sorted(pairs)))


def add_pipeline(plan, rng, unit):
    """One pipeline over a run of consecutive phases (every lane, every
    rank alike), with the transfers of a run moved slice by slice."""
    n = len(plan.phases)
    cands = [k for k, ph in enumerate(plan.phases) if ph.items]
    if not cands:
        return
    a = rng.choice(cands)
    b = rng.randint(a, n - 1)
    for k in range(a, b + 1):
        plan.phases[k].pipe = 1
        plan.phases[k].unit = unit


def assign_lanes(rng, N, nl, groups):
    lanes = {}
    for r in range(N):
        sizes = [rng.choice([2, 3]) if groups and rng.random() < 0.7 else 1 for _ in range(nl)]
        order = list(range(nl))
        rng.shuffle(order)
        tb = rng.choice([0, 0, 0, 1, 5])
        for lane in order:
            lanes[(r, lane)] = Lane(tb, sizes[lane])
            tb += sizes[lane] + rng.choice([0, 0, 0, 1, 3])
    return lanes


def describe(gen):
    P = gen.params
    keys = ["coll", "skeleton", "N", "K", "inplace", "root", "gpn", "nlanes",
            "groups", "instances", "transports", "multichunk", "order",
            "sum_style", "pull_accumulate", "reduce_put", "handshake",
            "pipeline", "unit", "single_launch", "owner"]
    return " ".join(f"{k}={P[k]}" for k in keys if k in P)


def reducing(coll):
    return coll in REDUCING


@dataclass
class Case:
    """A generated program with what it is and how to run it."""
    seed: object
    index: object
    kind: str               # "correct" or a defect's name
    expect: str             # "accept", "reject" or "consistent"
    gen: Generated
    what: str = ""          # what the defect did
    counts: list = field(default_factory=list)
    dtype: str = "f32"
    op: str = "sum"
    pins: dict = field(default_factory=dict)

    @property
    def prog(self):
        return self.gen.prog


def make(seed, index, pin=None, kind=None):
    """The case for (seed, index): its kind, its program (correct, or with
    its one defect) and its run settings. Raises NoProgram when no attempt
    gave a program of the kind (GenBug when the last broke the generator's
    own rules)."""
    from . import defects as D
    from .selfcheck import check
    pin = dict(pin or {})
    rng = random.Random(f"mscl-gen:{seed}:{index}:kind")
    if kind is None:
        kind = pin.pop("kind", None)
    if kind is None:
        kind = "correct" if rng.random() < 0.55 else rng.choice(D.CATALOGUE).name
    defect = D.BY_NAME.get(kind)
    pins = dict(defect.pins) if defect else {}
    if kind in ("order-one-rank", "own-input-first"):
        pins["N_min"] = 3
    if kind == "port-source-reuse":
        pins["stage"] = 0.9
        pins["N_min"] = 3
    pins.update(pin)
    flags = (defect.plan,) if defect and defect.plan else ()
    last = None
    for attempt in range(20):
        sub = f"{index}" if attempt == 0 else f"{index}.{attempt}"
        try:
            gen = build(seed, sub, pins, flags)
        except (GenBug, NoProgram) as e:
            last = e
            continue
        errs = check(gen.prog)
        if defect is None:
            if errs:
                raise GenBug(f"a correct program fails the generator's own check: {errs[0]}")
            return finish(Case(seed, sub, kind, "accept", gen, pins=pins), rng)
        if defect.fn is D.d_none:
            # built broken: the skeleton or the lowering made the defect
            mark = {"parked-other-size": "parked", "ll-then-get": "ll-covers-write"}[kind]
            if mark not in gen.features or (defect.data and not errs):
                continue
            return finish(Case(seed, sub, kind, defect.expect, gen, "built with the defect", pins=pins), rng)
        if errs:
            raise GenBug(f"a correct program fails the generator's own check: {errs[0]}")
        mut = gen.prog.clone()
        what = defect.fn(mut, random.Random(f"mscl-gen:{seed}:{sub}:defect"))
        if not what:
            continue
        if defect.data and not check(mut):
            continue
        gen.prog = mut
        return finish(Case(seed, sub, kind, defect.expect, gen, what, pins=pins), rng)
    if isinstance(last, GenBug):
        raise GenBug(f"no program for {kind}: {last}")
    raise NoProgram(f"no program for {kind}: {last or 'no place for the defect'}")


def finish(case, rng):
    """Run settings: tiny and uneven counts, a few random ones and, for one
    program in eight, one large (the proof covers every count; large counts
    cost the simulator most and find least); f32 sum mostly, another type
    or operator now and then."""
    P = case.gen.params
    counts = [1, 2, 3, 7, 13, 1003] + sorted(rng.sample(range(4, 400), 2))
    large = 65536 + rng.randrange(1, 1000) if P["N"] <= 8 else 8192 + rng.randrange(1, 100)
    if P.get("pipeline"):
        # keep the pipeline's trip count near 256 at most, and the work of
        # the simulator (operations x instances x trips) near 2e5: a
        # 12-rank program of 1,300 operations at 4 instances and 256 trips
        # took 35 s a schedule
        kk = P["K"] * P["instances"]
        unit_elems = max(P["unit"] // 16 * 16, 16) // 4
        ops = sum(len(list(flat(items))) for items in case.gen.prog.blocks.values())
        trips = max(8, min(256, 200_000 // max(1, ops * P["instances"])))
        large = min(large, trips * unit_elems * kk + 5)
    if rng.random() < 0.125:
        counts.append(large)
    case.counts = counts
    if case.kind in ("order-one-rank", "own-input-first") or rng.random() < 0.8:
        case.dtype, case.op = "f32", "sum"
    else:
        case.dtype = rng.choice(["f16", "bf16", "f64", "i32", "u8", "f8e4m3", "i64"])
        case.op = rng.choice(["sum", "sum", "prod", "min", "max", "avg"])
        if case.dtype.startswith("f8") and case.op == "prod":
            case.op = "sum"
    return case
