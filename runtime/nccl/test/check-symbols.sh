#!/usr/bin/env bash
# The symbol test: libmscclc_nccl.so exports exactly the functions of
# exported-functions.txt and their pnccl* aliases (nothing else at all: the
# runtime and the static CUDA runtime stay hidden), its soname is
# libnccl.so.2, and it does not need the shared CUDA runtime.
# Usage: check-symbols.sh LIBRARY exported-functions.txt
set -euo pipefail
lib="$1"
list="$2"
status=0
expected=$(grep -v '^#' "$list" | sed '/^$/d' | while read -r f; do
  echo "$f"; echo "p$f"; done | sort)
symbols=$(nm -D --defined-only "$lib")
# Defined dynamic symbols that are functions or data (not version nodes).
actual=$(echo "$symbols" | awk '$2 ~ /^[TtWwDdBbRrVvi]$/ {print $3}' \
  | sed 's/@.*//' | sort -u)
missing=$(comm -23 <(echo "$expected") <(echo "$actual"))
extra=$(comm -13 <(echo "$expected") <(echo "$actual"))
if [ -n "$missing" ]; then
  echo "not exported:"; echo "$missing" | sed 's/^/  /'; status=1
fi
if [ -n "$extra" ]; then
  echo "exported but not in the list:"; echo "$extra" | sed 's/^/  /'; status=1
fi
# Each alias is the same code as its function.
bad_aliases=$(echo "$symbols" | awk '{addr[$3] = $1} END {
  for (s in addr) if (s ~ /^nccl/ && ("p" s) in addr && addr["p" s] != addr[s])
    print "p" s " is not an alias of " s }')
if [ -n "$bad_aliases" ]; then echo "$bad_aliases"; status=1; fi
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
if [ "$soname" != "libnccl.so.2" ]; then
  echo "soname is '$soname', not libnccl.so.2"; status=1
fi
if objdump -p "$lib" | awk '$1 == "NEEDED" {print $2}' | grep -q '^libcudart'; then
  echo "needs the shared CUDA runtime (it should link cudart_static)"; status=1
fi
if [ $status -eq 0 ]; then
  echo "$(echo "$expected" | wc -l) symbols exported as listed; soname libnccl.so.2; CUDA runtime static"
fi
exit $status
