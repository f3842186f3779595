"""Simulates what the stdlib selection table can pick: every entry's
algorithm with the entry's instances and params, at the smallest and the
largest rank count of {2, 3, 4, 8, 16} (and node shapes 2x4, 4x4 for
multi-node entries) the entry and the algorithm's catalog entry allow, out
of place and, where the catalog says it serves in place, in place. A
`require` that rejects a configuration the catalog claims is a failure:
selection would pick a program that does not compile."""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--tool", required=True)
parser.add_argument("--stdlib", required=True)
parser.add_argument("--schedules", type=int, default=5)
parser.add_argument("--bytes", default="4,4012,64K")
parser.add_argument("--jobs", type=int, default=2)
args = parser.parse_args()

catalog = {a["name"]: a for a in json.load(open(os.path.join(args.stdlib, "algorithms.json")))["algorithms"]}
table = json.load(open(os.path.join(args.stdlib, "selection.json")))["entries"]


def span(v, default):
    if v is None:
        return default
    if isinstance(v, int):
        return (v, v)
    return (v[0], 65536 if v[1] is None else v[1])


HEADER = re.compile(r"^(\s*algorithm\s+\w+\s*:\s*\w+)\s*(\(([^)]*)\))?", re.M)
scratch = tempfile.mkdtemp(prefix="mscclc-selection-")


def source(name, inplace):
    path = os.path.join(args.stdlib, name + ".mscl")
    if not inplace:
        return path
    text = open(path).read()
    m = HEADER.search(text)
    options = (m.group(3) + ", inplace") if m.group(3) else "inplace"
    text = text[:m.start()] + f"{m.group(1)}({options})" + text[m.end():]
    text = re.sub(r'import\s+"([^"/][^"]*)"', lambda i: f'import "{os.path.join(os.path.abspath(args.stdlib), i.group(1))}"', text)
    out = os.path.join(scratch, name + "__inplace.mscl")
    with open(out, "w") as f:
        f.write(text)
    return out


jobs = set()
for e in table:
    a = catalog[e["algorithm"]]
    lo, hi = span(e.get("ranks"), (1, 65536))
    alo, ahi = span(a.get("ranks"), (2, 65536))
    nlo, nhi = span(e.get("nodes"), (1, 65536))
    anlo, anhi = span(a.get("nodes"), (1, 1))
    nlo, nhi = max(nlo, anlo), min(nhi, anhi)
    shapes = [(n, None) for n in (2, 3, 4, 8, 16)] + [(8, 4), (16, 4)]
    ok = []
    for ranks, gpn in shapes:
        nodes = ranks // gpn if gpn else 1
        if max(lo, alo) <= ranks <= min(hi, ahi) and nlo <= nodes <= nhi:
            ok.append((ranks, gpn))
    single = [s for s in ok if not s[1]]
    picks = set(single[:1] + single[-1:] + [s for s in ok if s[1]][-1:])
    params = tuple(sorted(e.get("params", {}).items()))
    for ranks, gpn in picks:
        for inplace in ([False, True] if a.get("inPlace", True) else [False]):
            jobs.add((e["algorithm"], e.get("instances", 1), params, ranks, gpn, inplace, a.get("rootParam")))


def run(job):
    name, inst, params, ranks, gpn, inplace, rootParam = job
    cmd = [args.tool, source(name, inplace), "--ranks", str(ranks), "--instances", str(inst)]
    if gpn:
        cmd += ["--gpus-per-node", str(gpn)]
    defs = list(params) + ([(rootParam, ranks - 1)] if rootParam else [])
    for k, v in defs:
        cmd += ["-D", f"{k}={v}"]
    cmd += ["--simulate", "--schedules", str(args.schedules), "--bytes", args.bytes]
    what = f"{name} instances={inst}{''.join(f' {k}={v}' for k, v in defs)} {ranks} ranks" + \
        (f" ({ranks // gpn}x{gpn})" if gpn else "") + (" in place" if inplace else "")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 0:
        return True, "PASS " + what
    return False, f"FAIL {what}\n{p.stdout}{p.stderr}"


ok = True
with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
    for good, line in pool.map(run, sorted(jobs, key=str)):
        print(line)
        ok &= good
print(f"{len(table)} entries, {len(jobs)} configurations")
sys.exit(0 if ok else 1)
