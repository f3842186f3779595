"""Checks that the generated-code sample of docs/backend.md is real output.

The first ```c++ block after "## What the generated code looks like" must
appear, line for line and in one piece, in the generated file; a line that
is only "..." marks where the sample was cut.
usage: doc_sample.py backend.md generated.cu
"""
import sys

doc, generated = sys.argv[1], sys.argv[2]
text = open(doc).read()
start = text.index("```c++\n", text.index("## What the generated code looks like"))
block = text[start + len("```c++\n"):text.index("```", start + 6)]
sample = [l for l in block.splitlines() if l.strip() != "..."]
lines = open(generated).read().splitlines()
for i in range(len(lines) - len(sample) + 1):
    if lines[i:i + len(sample)] == sample:
        sys.exit(0)
# Report the first sample line that the output lacks after the matched prefix.
best = max(range(len(lines)), key=lambda i: next(
    (k for k in range(len(sample)) if i + k >= len(lines) or lines[i + k] != sample[k]),
    len(sample)))
k = next((k for k in range(len(sample))
          if best + k >= len(lines) or lines[best + k] != sample[k]), len(sample))
print(f"{doc}: sample line {k + 1} is not in the generated code:\n  {sample[k]!r}")
sys.exit(1)
