#!/usr/bin/env python3
"""Calibrates the simulator's cost model against measured times.

Reads the 2-GPU tables of bench/results (time per size for each generated
algorithm, nccl-tests sizes), simulates the same programs at the same sizes
(`mscclc --simulate --schedules 1`, the timed schedule only), and fits the
cost model's constants by coordinate descent on the mean squared log ratio
of predicted to measured time. Writes the fitted model as JSON (for
`mscclc --cost-model`) and a Markdown report of predicted (default and
fitted) against measured per size.

  bench/calibrate_cost_model.py --mscclc build/bin/mscclc \\
      --out-json bench/cost-model-h200x2.json \\
      --out-md bench/results/cost-model-calibration.md

Only sizes up to --fit-max-bytes enter the fit (the simulator computes the
data, so large sizes are slow to simulate); the report adds the larger
measured sizes with the fitted model. 1PA is simulated as measured, before
it summed in rank order (its source at commit 2ed75c0)."""
import argparse
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")

# Measured tables: file -> [(section, {column header: (program, instances)})]
TABLES = {
    "2026-11-30-h200x2.md": [
        ("allreduce", {"allreduce_1pa": ("allreduce_1pa@measured", 1),
                       "allreduce_2pa_ll": ("allreduce_2pa_ll", 1),
                       "allreduce_2pa_hb": ("allreduce_2pa_hb", 1),
                       "allreduce_2pa_port": ("allreduce_2pa_port", 1),
                       "allreduce_2pr": ("allreduce_2pr", 1)}),
        ("allgather", {"allgather_allpairs": ("allgather_allpairs", 1)}),
        ("reducescatter", {"reducescatter_ring_overlap": ("reducescatter_ring_overlap", 1)}),
    ],
    "2026-11-30-h200x2-session2.md": [
        ("allreduce", {"1PA": ("allreduce_1pa@measured", 1),
                       "2PA-HB": ("allreduce_2pa_hb", 1),
                       "2PA-HB@8": ("allreduce_2pa_hb", 8),
                       "2PA-HB@32": ("allreduce_2pa_hb", 32)}),
        ("allgather", {"all-pairs": ("allgather_allpairs", 1),
                       "all-pairs@16": ("allgather_allpairs", 16)}),
    ],
}
UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
PARAMS = ["memHBLatency", "memHBBandwidth", "memLLLatency", "memLLBandwidth",
          "portLatency", "portBandwidth", "signalLatency", "blockBandwidth",
          "localLatency", "localBandwidth", "opOverhead"]


def parse_size(s):
    m = re.match(r"([0-9.]+)\s*(B|KB|MB|GB)$", s.strip())
    return int(float(m.group(1)) * UNITS[m.group(2)])


def measured():
    """{(program, instances): {bytes: [us, ...]}} from the result tables."""
    out = {}
    for name, sections in TABLES.items():
        lines = open(os.path.join(RESULTS, name)).read().splitlines()
        for section, columns in sections:
            start = next(i for i, l in enumerate(lines) if l.startswith("## " + section))
            header = next(i for i in range(start, len(lines)) if lines[i].startswith("| size"))
            cols = [c.strip() for c in lines[header].strip("|").split("|")]
            for l in lines[header + 2:]:
                if not l.startswith("|"):
                    break
                cells = [c.strip() for c in l.strip("|").split("|")]
                size = parse_size(cells[0])
                for col, (prog, inst) in columns.items():
                    cell = cells[cols.index(col)]
                    m = re.match(r"([0-9.]+)", cell)
                    if m:
                        out.setdefault((prog, inst), {}).setdefault(size, []).append(float(m.group(1)))
    return out


def source(prog, tmp):
    if prog == "allreduce_1pa@measured":
        path = os.path.join(tmp, "allreduce_1pa.mscl")
        if not os.path.exists(path):
            text = subprocess.run(["git", "show", "2ed75c0:stdlib/allreduce_1pa.mscl"],
                                  cwd=ROOT, capture_output=True, text=True, check=True).stdout
            open(path, "w").write(text)
        return path
    return os.path.join(ROOT, "stdlib", prog + ".mscl")


EST = re.compile(r"estimated time ([0-9.]+) (us|ms|s) at")


def simulate(mscclc, path, inst, sizes, model_path):
    cmd = [mscclc, path, "--ranks", "2", "--instances", str(inst), "--simulate",
           "--schedules", "1", "--bytes", ",".join(str(s) for s in sizes),
           "--cost-model", model_path]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{p.stdout}{p.stderr}")
    times = [float(v) * {"us": 1, "ms": 1e3, "s": 1e6}[u] for v, u in EST.findall(p.stdout)]
    if len(times) != len(sizes):
        raise RuntimeError(f"{' '.join(cmd)}: expected {len(sizes)} estimates\n{p.stdout}")
    return dict(zip(sizes, times))


def predict(args, data, model, max_bytes, tmp, pool):
    path = os.path.join(tmp, f"model-{os.getpid()}-{id(model)}.json")
    json.dump(model, open(path, "w"))
    jobs = {}
    for (prog, inst), points in data.items():
        sizes = sorted(s for s in points if s <= max_bytes)
        if sizes:
            jobs[(prog, inst)] = pool.submit(simulate, args.mscclc, source(prog, tmp), inst, sizes, path)
    return {k: f.result() for k, f in jobs.items()}


def loss(data, pred):
    errs = [math.log(pred[k][s] / t) ** 2
            for k, points in data.items() if k in pred
            for s, ts in points.items() if s in pred[k] for t in ts]
    return sum(errs) / len(errs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mscclc", required=True)
    ap.add_argument("--out-json", required=True)
    ap.add_argument("--out-md", required=True)
    ap.add_argument("--fit-max-bytes", type=int, default=4 << 20)
    ap.add_argument("--report-max-bytes", type=int, default=16 << 20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    data = measured()
    tmp = tempfile.mkdtemp(prefix="mscclc-calibrate-")
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    # The defaults: the CostModel struct the compiler was built from.
    header = open(os.path.join(ROOT, "compiler", "include", "mscclc", "Simulator",
                               "Simulator.h")).read()
    struct = header[header.index("struct CostModel {"):]
    struct = struct[:struct.index("};")]
    default = {k: float(v) for k, v in re.findall(r"double (\w+) = ([0-9.]+);", struct)
               if k in PARAMS}
    missing = [k for k in PARAMS if k not in default]
    if missing:
        sys.exit(f"CostModel in Simulator.h has no {missing}")
    base_pred = predict(args, data, default, args.fit_max_bytes, tmp, pool)
    best, best_loss = dict(default), loss(data, base_pred)
    print(f"default model: mean squared log error {best_loss:.3f}", flush=True)
    for step in [2.0, 1.4, 1.15][:max(1, args.rounds + 1)]:
        improved = True
        while improved:
            improved = False
            for key in PARAMS:
                for factor in (step, 1 / step):
                    trial = dict(best)
                    trial[key] = best[key] * factor
                    l = loss(data, predict(args, data, trial, args.fit_max_bytes, tmp, pool))
                    if l < best_loss - 1e-4:
                        best, best_loss, improved = trial, l, True
                        print(f"  {key} x{factor:.3f} -> {trial[key]:.4g}: {l:.3f}", flush=True)
                        break
    print(f"fitted model: mean squared log error {best_loss:.3f}", flush=True)
    json.dump({k: round(v, 4) for k, v in best.items()}, open(args.out_json, "w"), indent=2)
    open(args.out_json, "a").write("\n")

    default_full = predict(args, data, default, args.report_max_bytes, tmp, pool)
    fitted_full = predict(args, data, best, args.report_max_bytes, tmp, pool)
    md = ["# Cost model calibrated against 2x H200 (sm_90)", "",
          "Generated by `bench/calibrate_cost_model.py` from the measured tables of",
          ", ".join(f"`bench/results/{n}`" for n in TABLES) + ".",
          f"Fit: coordinate descent on the mean squared log ratio of predicted to",
          f"measured time, sizes up to {args.fit_max_bytes >> 20} MiB (the simulator computes",
          "the data, so larger sizes are slow to simulate); both runs' measurements",
          "of a program count as separate points. 2 ranks only: these constants",
          "say nothing measured about more GPUs or NVSwitch contention. The",
          "fitted constants are effective values of this model, not physical",
          "figures: a port transfer, for instance, is dominated by the proxy's",
          "per-put latency and the one block per channel, so its bandwidth",
          "constant barely matters and drifts upward.", "",
          f"Mean squared log error (sizes up to {args.fit_max_bytes >> 20} MiB): default "
          f"{loss(data, base_pred):.3f}, fitted {best_loss:.3f} "
          f"(typical factor off: x{math.exp(math.sqrt(loss(data, base_pred))):.2f} and "
          f"x{math.exp(math.sqrt(best_loss)):.2f}).", "",
          "| constant | default | fitted |", "|---|---|---|"]
    md += [f"| `{k}` | {default[k]:g} | {best[k]:.4g} |" for k in PARAMS]
    md += ["", "Times in us: measured (both runs where there are two) / predicted with the",
           "default model / predicted with the fitted one.", ""]
    for (prog, inst) in sorted(data):
        name = prog.replace("@measured", " (as measured)") + (f" @{inst}" if inst > 1 else "")
        md += [f"## {name}", "", "| size | measured | default | fitted |", "|---|---|---|---|"]
        for s in sorted(data[(prog, inst)]):
            ts = data[(prog, inst)][s]
            d = default_full.get((prog, inst), {}).get(s)
            f = fitted_full.get((prog, inst), {}).get(s)
            fmt = lambda v: "-" if v is None else f"{v:.2f}"
            label = f"{s >> 20} MB" if s >= 1 << 20 else f"{s >> 10} KB"
            md.append(f"| {label} | {' / '.join(f'{t:g}' for t in ts)} | {fmt(d)} | {fmt(f)} |")
        md.append("")
    open(args.out_md, "w").write("\n".join(md))
    print(f"wrote {args.out_json} and {args.out_md}")


if __name__ == "__main__":
    main()
