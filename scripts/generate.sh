#!/usr/bin/env bash
# Long campaigns of the program generator (test/Generator/mscl-gen,
# docs/testing.md "The program generator"): runs it for a time budget with
# minimisation on, keeps the findings, and appends a record (date, commit,
# machine, programs, seconds, disagreements) to bench/results/generator.md.
#
#   scripts/generate.sh [--seconds 3600] [--seed S] [--workers N]
#                       [--out DIR] [--no-record] [-- more mscl-gen flags]
#
# The exit status is mscl-gen's: 1 when a disagreement is open.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
seconds=3600
seed="campaign-$(date -u +%Y%m%d%H%M)"
workers="$(nproc)"
out=""
record=1
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-record) record=0; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "generate.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || out="$here/build/generator/$seed"
mkdir -p "$out"
start="$(date -u '+%Y-%m-%d %H:%M UTC')"
python3 "$here/test/Generator/mscl-gen" --seed "$seed" --seconds "$seconds" \
  --workers "$workers" --out "$out" --json "$out/results.jsonl" \
  --summary "$out/summary.txt" "${extra[@]}"
status=$?
[ "$record" = 1 ] || exit $status
if [ ! -s "$out/summary.txt" ]; then
  echo "generate.sh: the run left no summary (interrupted?): nothing recorded" >&2
  exit $status
fi

commit="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$here" status --porcelain -- compiler dialect runtime 2>/dev/null)" ]; then
  commit="$commit (with uncommitted changes to the compiler)"
fi
cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
results="$here/bench/results/generator.md"
if [ ! -f "$results" ]; then
  cat > "$results" <<'HEAD'
# Program generator campaigns

Records of `scripts/generate.sh` (docs/testing.md, "The program
generator"): each run's date, commit, machine, budget, programs, and the
disagreements it found (open ones are bugs in the proof, the simulator,
the host reference or the generator; allowed ones are listed in
test/Generator/allowlist.txt with their reasons).
HEAD
fi
{
  echo
  echo "## $start, seed $seed"
  echo
  echo "Commit $commit; $(uname -srm), $(nproc) cores ($cpu), $workers workers;"
  echo "budget ${seconds} s. Findings: $out/findings."
  echo
  echo '```'
  cat "$out/summary.txt"
  echo '```'
} >> "$results"
echo "generate.sh: recorded in $results"
exit $status
