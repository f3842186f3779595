"""Runs cases through the oracles, classifies, minimises, summarises.

A disagreement is one of:
  proof-refuses-correct   a correct program refused by the static proof
  sim-fails-correct       a correct program failing in the simulator
  hostrun-fails-correct   a correct program failing in the host reference
  proof-misses            a broken program the proof accepts while the
                          simulator or the reference shows it wrong
  undetected              a broken program every oracle accepts
  oracles-disagree        (defects whose verdict the generator leaves to
                          the oracles) the proof and the simulator differ,
                          or the reference computes wrong what the proof
                          accepted
  crash-<oracle>          a crash, internal error or timeout
  generator               the generator broke its own rules
"""
import json
import os
import re
import tempfile
import time
import traceback
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .generate import describe, make
from .oracles import HostRun, Job, Proof, Simulator, find_mscclc
from .plan import GenBug, NoProgram
from .render import render


@dataclass
class Config:
    root: str
    mscclc: str
    workdir: str
    findings: str
    schedules: int = 6
    minimize: bool = True
    minimize_seconds: float = 180.0
    timeout: float = 120.0
    allow: list = field(default_factory=list)
    kind: str = None            # only this kind ("correct" or a defect)
    keep: bool = False          # keep every program, not only findings
    hostrun_rate: float = 0.2   # share of programs run by the host reference


def oracles_for(cfg):
    return [Proof(cfg.mscclc), Simulator(cfg.mscclc),
            HostRun(cfg.root, cfg.mscclc, cfg.hostrun_rate)]


def job_for(case, cfg, counts=None):
    p = case.prog
    return Job(p.coll, p.nranks, p.gpn, case.gen.instances, p.single_launch,
               list(counts or case.counts), case.dtype, case.op, cfg.schedules,
               seed=zlib.crc32(str(case.index).encode()) % 100000 + 1, timeout=cfg.timeout)


def header(case):
    lines = [f"mscl-gen seed {case.seed} index {case.index}: {case.kind} (expect {case.expect})",
             describe(case.gen)]
    if case.what and case.kind != "correct":
        lines.append(f"defect: {case.what}")
    if case.gen.features:
        lines.append("features: " + " ".join(sorted(case.gen.features)))
    return lines


def program_text(case, prog=None, trailer=()):
    """The program with its header comment; `trailer` comment lines go
    after it, so that line numbers in oracle messages about the program
    without them still hold."""
    prog = prog or case.prog
    prog.comment = header(case)
    text = render(prog)
    return text + "".join(f"// {l}\n" if l else "//\n" for l in trailer)


def run_oracles(path, job, oracles):
    res = {}
    for o in oracles:
        if not o.available():
            continue
        res[o.name] = o.run(path, job)
    return res


def classify(expect, v):
    """The disagreement labels of one run (empty: the oracles and the
    generator agree)."""
    labels = []
    for name, x in v.items():
        if x.status == "error":
            labels.append(f"crash-{name}")
    st = {k: x.status for k, x in v.items() if x.status in ("pass", "fail")}
    proof = st.get("proof")
    dyn = {k: s for k, s in st.items() if k != "proof"}
    if expect == "accept":
        if proof == "fail":
            labels.append("proof-refuses-correct")
        for k, s in dyn.items():
            if s == "fail":
                labels.append(f"{k}-fails-correct")
    elif expect == "reject":
        if proof == "pass":
            if any(s == "fail" for s in dyn.values()):
                labels.append("proof-misses")
            elif dyn:
                labels.append("undetected")
    elif proof:
        # The simulator checks the rules the proof checks, on every schedule
        # it tries: the two must agree. A host run is one schedule on the
        # CPU: a wrong result there contradicts an accepting proof, but a
        # right one says nothing of the schedules it did not run.
        if "sim" in dyn and dyn["sim"] != proof:
            labels.append("oracles-disagree")
        elif proof == "pass" and dyn.get("hostrun") == "fail":
            labels.append("oracles-disagree")
    return labels


def signature(label, v):
    """What a minimised program must still show: the label, each oracle's
    status and the kind of its first error."""
    return (label,) + tuple((k, x.status, x.category() if x.status == "fail" else "")
                            for k, x in sorted(v.items()) if x.status != "skip")


def allowed(cfg, label, v):
    """The allow-list entry that covers this disagreement, if any."""
    for entry in cfg.allow:
        if entry["label"] != label:
            continue
        text = " ".join(x.msg for x in v.values())
        if re.search(entry["pattern"], text):
            return entry
    return None


def load_allow(path):
    """Allow-list lines: `label | regex on the oracles' messages | reason`
    ('#' starts a comment)."""
    out = []
    if not path or not os.path.exists(path):
        return out
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [x.strip() for x in line.split("|")]
        if len(parts) != 3:
            raise ValueError(f"{path}: bad allow-list line: {line}")
        out.append({"label": parts[0], "pattern": parts[1], "reason": parts[2]})
    return out


def run_case(seed, index, cfg):
    """One program, start to end; a JSON-able record."""
    t0 = time.time()
    rec = {"seed": seed, "index": index}
    try:
        case = make(seed, index, kind=cfg.kind)
    except NoProgram as e:
        rec.update(kind="-", labels=[], skipped=str(e), seconds=time.time() - t0)
        return rec
    except GenBug as e:
        rec.update(kind="?", labels=["generator"], error=str(e), seconds=time.time() - t0)
        return rec
    except Exception as e:  # a crash in the generator is a finding too
        rec.update(kind="?", labels=["generator"], error=traceback.format_exc(limit=3),
                   seconds=time.time() - t0)
        return rec
    rec.update(kind=case.kind, expect=case.expect, features=sorted(case.gen.features),
               params=describe(case.gen), N=case.prog.nranks)
    os.makedirs(cfg.workdir, exist_ok=True)
    path = os.path.join(cfg.workdir, f"{case.prog.name}.mscl")
    with open(path, "w") as f:
        f.write(program_text(case))
    job = job_for(case, cfg)
    v = run_oracles(path, job, oracles_for(cfg))
    rec["verdicts"] = {k: {"status": x.status, "msg": x.msg[:300]} for k, x in v.items()}
    labels = classify(case.expect, v)
    rec["labels"] = labels
    open_labels = []
    for lab in labels:
        entry = allowed(cfg, lab, v)
        if entry:
            rec.setdefault("allowed", []).append({"label": lab, "reason": entry["reason"]})
        else:
            open_labels.append(lab)
    rec["open"] = open_labels
    if labels:
        rec["finding"] = write_finding(case, v, labels[0], path, job, cfg,
                                       minimize=cfg.minimize and bool(open_labels))
    elif not cfg.keep:
        os.unlink(path)
    rec["seconds"] = time.time() - t0
    return rec


def write_finding(case, v, label, path, job, cfg, minimize):
    from .minimize import minimise
    os.makedirs(cfg.findings, exist_ok=True)
    base = os.path.join(cfg.findings, f"{label}-{case.kind}-{case.seed}-{case.index}".replace(".", "_"))
    orig = base + ".orig.mscl"
    with open(path) as f:
        text = f.read()
    with open(orig, "w") as f:
        f.write(text)
    result = None
    if minimize:
        try:
            result = minimise(case, v, label, job, cfg)
        except Exception:
            result = None
            with open(base + ".minimise-error.txt", "w") as f:
                f.write(traceback.format_exc())
    if result is None:
        result = (case, case.prog, v, job)
    mcase, mprog, mv, mjob = result
    out = base + ".mscl"
    lines = [re.sub(r"\S*\.mscl:", os.path.basename(out) + ":", l)
             for l in finding_comment(mcase, mv, label, mjob)]
    text = program_text(mcase, mprog, lines)
    with open(out, "w") as f:
        f.write(text)
    return out


def finding_comment(case, v, label, job):
    """What the oracles said, and RUN lines stating what should happen."""
    lines = ["", f"FINDING {label}: the oracles said"]
    for k, x in sorted(v.items()):
        if x.status == "skip":
            continue
        msg = f"{x.where}: {x.msg}" if x.where else x.msg
        lines.append(f"  {k}: {x.status.upper()}" + (f": {msg}" if x.msg else ""))
        if k == "sim":
            fail = [l for l in x.detail.splitlines() if ": FAIL" in l]
            if fail:
                lines.append("    " + fail[0].strip())
    shape = " ".join(job.shape_args())
    from .layout import sim_bytes
    from .oracles import ESIZE
    sizes = ",".join(str(sim_bytes(job.coll, job.ranks, c, ESIZE[job.dtype])) for c in job.counts)
    sim = (f"mscclc --simulate %s {shape} --bytes {sizes} --schedules {job.schedules} "
           f"--seed {job.seed} --dtype {job.dtype} --op {job.op}")
    lines.append("What should happen (as lit RUN lines):")
    if case.expect == "accept":
        lines.append(f"RUN: mscclc %s {shape} --emit=mlir -o /dev/null")
        lines.append(f"RUN: {sim} | FileCheck %s")
        lines.append(f"CHECK: simulation: {case.prog.name}, {job.ranks} ranks{{{{.*}}}}: PASS")
    elif case.expect == "reject":
        lines.append(f"RUN: not mscclc %s {shape} --emit=mlir -o /dev/null")
        if v.get("sim") and v["sim"].status == "fail":
            lines.append(f"RUN: not {sim} 2>&1 | FileCheck %s")
            lines.append(f"CHECK: simulation: {case.prog.name}, {job.ranks} ranks{{{{.*}}}}: FAIL")
    else:
        lines.append("the proof and the simulator must agree: both accept or both refuse")
        lines.append(f"  mscclc %s {shape} --emit=mlir -o /dev/null")
        lines.append(f"  {sim}")
    return lines


class Summary:
    def __init__(self):
        self.recs = []

    def add(self, rec):
        self.recs.append(rec)

    def text(self, seconds, seed, commit=""):
        R = self.recs
        out = [f"mscl-gen: seed {seed}, {len(R)} programs in {seconds:.0f} s" +
               (f", commit {commit}" if commit else "")]
        kinds = Counter(r["kind"] for r in R)
        out.append("programs by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()) if k != "-"))
        if kinds["-"]:
            out.append(f"cases without a program (every attempt too large or "
                       f"without a place for the defect; skipped): {kinds['-']}")
        out.append("")
        out.append("verdicts (proof/sim/hostrun) by kind:")
        by = defaultdict(Counter)
        for r in R:
            v = r.get("verdicts", {})
            key = "/".join(v.get(o, {}).get("status", "-") for o in ("proof", "sim", "hostrun"))
            by[r["kind"]][key] += 1
        for k in sorted(by):
            out.append(f"  {k:22s} " + ", ".join(f"{key} {n}" for key, n in sorted(by[k].items())))
        out.append("")
        out.append("defects caught (of the programs of each class): proof, simulator, host reference")
        for k in sorted(by):
            if k in ("correct", "?", "-"):
                continue
            rs = [r for r in R if r["kind"] == k]
            n = len(rs)

            def pct(o):
                c = sum(1 for r in rs if r.get("verdicts", {}).get(o, {}).get("status") == "fail")
                ran = sum(1 for r in rs if r.get("verdicts", {}).get(o, {}).get("status") in ("pass", "fail"))
                return f"{c}/{ran}" if ran else "-"
            out.append(f"  {k:22s} n={n:4d}  proof {pct('proof'):>9s}  sim {pct('sim'):>9s}  host {pct('hostrun'):>7s}")
        out.append("")
        dis = [r for r in R if r.get("labels")]
        openr = [r for r in R if r.get("open") or (r.get("labels") and r["labels"][0] == "generator")]
        out.append(f"disagreements: {len(dis)} ({len(openr)} open, {len(dis) - len(openr)} allowed)")
        groups = defaultdict(list)
        for r in dis:
            lab = r["labels"][0]
            v = r.get("verdicts", {})
            msg = ""
            for o in ("proof", "sim", "hostrun"):
                if v.get(o, {}).get("status") in ("fail", "error"):
                    msg = f"{o}: " + v[o]["msg"]
                    break
            cat = re.sub(r"\d+", "N", msg)[:110]
            groups[(lab, cat)].append(r)
        for (lab, cat), rs in sorted(groups.items(), key=lambda t: -len(t[1])):
            kinds = Counter(r["kind"] for r in rs)
            feats = Counter(f for r in rs for f in r.get("features", []))
            state = "allowed" if all(r.get("allowed") and not r.get("open") for r in rs) else "OPEN"
            out.append(f"  [{state}] {lab} x{len(rs)}: {cat}")
            out.append(f"      kinds: {dict(kinds)}; features: {dict(feats.most_common(6))}")
            for r in rs[:3]:
                out.append(f"      {r.get('finding') or r.get('error', '')[:200]}")
        return "\n".join(out)

    def open_count(self):
        return sum(1 for r in self.recs if r.get("open") or (r.get("labels") and r["labels"][0] == "generator"))

    def dump(self, path):
        with open(path, "w") as f:
            for r in self.recs:
                f.write(json.dumps(r) + "\n")


def default_config(root, mscclc=None, workdir=None, findings=None):
    work = workdir or tempfile.mkdtemp(prefix="mscl-gen-")
    return Config(root=root, mscclc=find_mscclc(root, mscclc), workdir=work,
                  findings=findings or os.path.join(work, "findings"))
