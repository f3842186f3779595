"""Summarises a Chrome trace for FileCheck: tracks, slices, flow pairs."""
import collections
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
slices = [e for e in events if e["ph"] == "X"]
tracks = sorted({(e["pid"], e["tid"]) for e in slices})
print("tracks:", " ".join(f"({p}, {t})" for p, t in tracks))
per_track = collections.Counter((e["pid"], e["tid"]) for e in slices)
print("slices per track:", " ".join(sorted({str(c) for c in per_track.values()})))
print("ops:", " ".join(sorted({e["name"] for e in slices})))
starts = {e["id"] for e in events if e["ph"] == "s"}
ends = {e["id"] for e in events if e["ph"] == "f"}
print(f"flows: {len(starts)} starts, {len(ends)} finishes,",
      "all matched" if starts == ends else "unmatched")
assert all(e["dur"] >= 0 for e in slices)
