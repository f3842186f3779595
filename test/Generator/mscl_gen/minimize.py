"""Reduces a disagreement to a small program that still shows it.

Three stages, each kept only while the disagreement's signature (its
label, each oracle's status and the kind of its first error) holds:

1. counts: only the count the simulator failed at;
2. parameters: the same case regenerated smaller (fewer ranks, chunks,
   lanes, instances; no groups, pipeline, handshake, multi-chunk
   operands...): every regenerated program is again correct by
   construction (or has its one defect), so this stage cannot turn a
   correct program into a broken one;
3. statements: delta debugging over whole blocks, then runs of
   operations, then single operations.

Stage 3 can break a correct program (drop a wait and the race the
simulator reported becomes real). So where the disagreement is a
correct program refused by the proof, every step must keep the
generator's symbolic run clean (no deadlock, unbalanced semaphore or wrong
output); where it is a broken program no oracle notices, the symbolic
run must still show the defect. A disagreement between the proof's
acceptance and the simulator's refusal stays one whatever is deleted: one
of the two is wrong about the program in hand.
"""
import os
import re
import time

from .campaign import classify, job_for, oracles_for, program_text, run_oracles, signature
from .generate import NEEDS_NM, make
from .ir import Pipe
from .selfcheck import check

MAX_TESTS = 400


class Tester:
    def __init__(self, case, v, label, cfg):
        self.label = label
        self.cfg = cfg
        # the oracles that gave a verdict; the host reference (seconds to
        # minutes a run: it compiles every trial) only where it is part of
        # the disagreement, and then on every trial (the original run may
        # have sampled it)
        self.names = {k for k, x in v.items() if x.status != "skip"}
        if "hostrun" in self.names and "hostrun" not in label and v["hostrun"].status == "pass":
            self.names.discard("hostrun")
        self.sig = signature(label, {k: x for k, x in v.items() if k in self.names})
        self.oracles = [o for o in oracles_for(cfg) if o.name in self.names]
        for o in self.oracles:
            if hasattr(o, "rate"):
                o.rate = 1.0
        self.deadline = time.time() + cfg.minimize_seconds
        self.tests = 0
        self.path = os.path.join(cfg.workdir, f"min-{os.getpid()}-{case.prog.name}.mscl")
        self.data_defect = case.expect != "accept" and bool(check(case.prog))

    def ok(self, case, prog, job):
        if time.time() > self.deadline or self.tests >= MAX_TESTS:
            return None
        self.tests += 1
        if self.label == "proof-refuses-correct" and check(prog):
            return None
        if self.label == "undetected" and not (self.data_defect and check(prog)):
            return None
        with open(self.path, "w") as f:
            f.write(program_text(case, prog))
        if time.time() > self.deadline:
            return None
        v = run_oracles(self.path, job, self.oracles)
        labels = classify(case.expect, v)
        if self.label in labels and signature(self.label, v) == self.sig:
            return v
        return None

    def done(self):
        if os.path.exists(self.path):
            os.unlink(self.path)


def failing_count(v):
    sim = v.get("sim")
    if sim and sim.status == "fail":
        m = re.search(r"= (\d+) elements", sim.detail)
        if m:
            return int(m.group(1))
    return None


def shrink_steps(P):
    """(name, pins to try) in the order worth trying: the big reductions
    first."""
    N = P["N"]
    for n in range(2, N):
        pins = {"N": n, "root": P["root"] % n, "gpn": n // 2 if (P["gpn"] and n % 2 == 0 and n >= 4) else 0}
        if P["K"] % N == 0 and P["K"] >= N:
            pins["K"] = n * (P["K"] // N)
        yield "N", pins
    if P["instances"] > 1:
        yield "instances", {"instances": 1}
    for key, val in (("pipeline", False), ("groups", False), ("handshake", False),
                     ("multichunk", False), ("reduce_put", False), ("gpn", 0),
                     ("inplace", False), ("order", "rank"), ("sum_style", "one"),
                     ("single_launch", False), ("pull_accumulate", False)):
        if P.get(key) != val:
            yield key, {key: val}
    if P["nlanes"] > 1:
        yield "nlanes", {"nlanes": 1}
    if len(P["transports"]) > 1:
        for t in P["transports"]:
            yield "transports", {"transports": [t]}
    K = P["K"]
    if P["skeleton"] in NEEDS_NM or (P["skeleton"] == "switch" and P["coll"] == "allreduce"):
        if K > N:
            yield "K", {"K": N}
    else:
        for k in (1, 2, 3):
            if k < K:
                yield "K", {"K": k, "nlanes": min(P["nlanes"], k)}


def minimise(case, v, label, job, cfg):
    t = Tester(case, v, label, cfg)
    try:
        return _minimise(case, v, label, job, cfg, t)
    finally:
        t.done()


def _minimise(case, v, label, job, cfg, t):
    best = (case, case.prog, v, job)
    # 1. counts
    c = failing_count(v)
    if c is not None and len(job.counts) > 1:
        j2 = job_for(case, cfg, [c])
        j2.seed = job.seed
        r = t.ok(case, case.prog, j2)
        if r:
            best = (case, case.prog, r, j2)
    # 2. parameters, until nothing shrinks
    changed = True
    while changed:
        changed = False
        cur_case, _, _, cur_job = best
        P = dict(cur_case.gen.params)
        for name, pins in shrink_steps(P):
            trial = dict(cur_case.pins)
            trial.update({k: P[k] for k in P})
            trial.update(pins)
            try:
                c2 = make(cur_case.seed, cur_case.index, pin=trial, kind=cur_case.kind)
            except Exception:  # a combination the generator cannot build
                continue
            j2 = job_for(c2, cfg, cur_job.counts)
            j2.seed = cur_job.seed
            c2.dtype, c2.op = cur_case.dtype, cur_case.op
            j2.dtype, j2.op = cur_case.dtype, cur_case.op
            r = t.ok(c2, c2.prog, j2)
            if r:
                best = (c2, c2.prog, r, j2)
                changed = True
                break
            if time.time() > t.deadline:
                return best
    # 3. statements
    cur_case, prog, v2, job2 = best
    prog = prog.clone()
    for key in sorted(prog.blocks):
        trial = prog.clone()
        trial.blocks[key] = []
        r = t.ok(cur_case, trial, job2)
        if r:
            prog, v2 = trial, r
    ops = positions(prog)
    n = max(1, len(ops) // 2)
    while n >= 1 and time.time() < t.deadline and t.tests < MAX_TESTS:
        i = 0
        progress = False
        while i < len(ops):
            chunk = set(ops[i:i + n])
            trial = delete(prog, chunk)
            r = t.ok(cur_case, trial, job2)
            if r:
                prog, v2 = trial, r
                ops = positions(prog)
                progress = True
            else:
                i += n
        if not progress:
            n //= 2
    return cur_case, prog, v2, job2


def positions(prog):
    out = []
    for key in sorted(prog.blocks):
        for i, it in enumerate(prog.blocks[key]):
            if isinstance(it, Pipe):
                out += [(key, i, j) for j in range(len(it.body))]
            else:
                out.append((key, i, None))
    return out


def delete(prog, gone):
    p = prog.clone()
    for key in sorted(p.blocks):
        items = []
        for i, it in enumerate(p.blocks[key]):
            if isinstance(it, Pipe):
                body = [op for j, op in enumerate(it.body) if (key, i, j) not in gone]
                if body:
                    items.append(Pipe(it.unit, body))
            elif (key, i, None) not in gone:
                items.append(it)
        p.blocks[key] = items
    return p
