#!/usr/bin/env bash
# mscclc-aot's options: each bad value is refused at once (exit 2) with one
# line naming the option, the value and what it accepts, before anything
# is selected or compiled.
#   test/Runtime/aot-options.sh PATH/TO/mscclc-aot
set -uo pipefail
aot=$1
fails=0
expect() { # want-words... -- args...
  local want=()
  while [ "$1" != "--" ]; do want+=("$1"); shift; done
  shift
  local out rc
  out=$(timeout 10 "$aot" "$@" 2>&1)
  rc=$?
  if [ $rc -ne 2 ]; then
    echo "FAIL: mscclc-aot $*: exit $rc, want 2: $out"
    fails=$((fails + 1))
    return
  fi
  for w in "${want[@]}"; do
    if [[ "$out" != *"$w"* ]]; then
      echo "FAIL: mscclc-aot $*: want '$w' in: $out"
      fails=$((fails + 1))
    fi
  done
}
expect "--ranks '-5'" "from 1 to 65536" -- --list --ranks -5
# strtol's overflow once read as -1 ranks
expect "--ranks '99999999999999999999'" -- --list --ranks 99999999999999999999
expect "--ranks '3,,4x'" -- --list --ranks 3,,4x
expect "--dtypes 'f8zz'" "f32, f16, bf16" "f8e5m2" -- --list --dtypes f8zz
expect "--dtypes ','" -- --list --dtypes ,
expect "--ops 'xor'" "sum, prod" -- --list --ops xor
expect "--archs '7x'" -- --list --archs 7x
expect "--jobs '0'" "1 to 1024" -- --out /nonexistent --jobs 0
expect "--jobs '-1'" -- --out /nonexistent --jobs -1
expect "--roots '99'" -- --list --roots 99
expect "--node-shapes '0x0'" -- --list --node-shapes 0x0
# nodes times GPUs wrapped past 2^31 ranks
expect "--node-shapes '99999x99999'" "at most 65536 ranks" -- --list --node-shapes 99999x99999
expect "unknown option '--bogus'" "usage:" -- --list --bogus
expect "--out needs a value" -- --out
expect "--out DIR is required" -- --ranks 2
[ $fails -eq 0 ] && echo "passed: every bad option refused with its reason"
exit $((fails > 0))
