#!/usr/bin/env bash
# Writes the fuzz targets' seed corpora into OUT/<target>/ from what the
# tree already holds, so no corpus is committed:
#   mscl-source    stdlib/*.mscl and every .mscl under test/ and examples/
#   mlir-text      every .mlir under test/ (one file per `// -----` case)
#                  and, given a compiler, the stdlib's checked MLIR
#   cost-model     a cost model of every key, one of snake-case keys, an
#                  empty object
#   plan-json      given a compiler, the stdlib's plans
#   bootstrap-wire well-formed messages of each kind (BootstrapWireFuzzer)
#   tcp-frame      a pair hello and a stream of every kind of frame
#                  (TcpFrameFuzzer)
#   proxy-trigger  puts, signals and flushes on ProxyTriggerFuzzer's
#                  channels, at the edges of their buffers
#   selection-table the stdlib's selection table and catalog (first byte:
#                  which one, SelectionTableFuzzer)
#   kernel-entry   valid kernel and bundle entries of each magic, and a
#                  truncated one (KernelEntryFuzzer)
#   command-line   argument lists: each output, the simulator, groups of
#                  options at and past their limits (CommandLineFuzzer)
# and the kept findings of fuzz/regressions/<target>/.
# Usage: fuzz/collect-seeds.sh OUT [MSCCLC]   (MSCCLC: an mscclc binary)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: fuzz/collect-seeds.sh OUT [MSCCLC]}
MSCCLC=${2:-}
rm -rf "$OUT"
mkdir -p "$OUT"/{mscl-source,mlir-text,cost-model,plan-json,bootstrap-wire,tcp-frame,proxy-trigger,selection-table,kernel-entry,command-line}

# A seed's name is its path with / as _, so seeds never collide.
seedname() { echo "$1" | tr / _; }

for f in stdlib/*.mscl $(find test examples -name '*.mscl' | sort); do
  cp "$f" "$OUT/mscl-source/$(seedname "$f")"
done

for f in $(find test -name '*.mlir' | sort); do
  awk -v out="$OUT/mlir-text/$(seedname "$f")" \
    '/^\/\/ -----/ { n++; next } { print > (out "." n ".mlir") }' "$f"
done

cat > "$OUT/cost-model/all-keys.json" <<'JSON'
{"memHBLatency": 0.6, "memHBBandwidth": 369, "memLLLatency": 0.4,
 "memLLBandwidth": 184, "portLatency": 0.83, "portBandwidth": 395.6,
 "netLatency": 4.89, "netBandwidth": 48.9, "gpusPerNic": 1,
 "signalLatency": 0.63, "switchLatency": 1.0, "switchBandwidth": 320,
 "localLatency": 0.05, "localBandwidth": 3000, "blockBandwidth": 200,
 "opOverhead": 0.02}
JSON
echo '{"port_bandwidth": 400, "signal_latency": 1e2}' > "$OUT/cost-model/snake.json"
echo '{}' > "$OUT/cost-model/empty.json"

if [ -n "$MSCCLC" ]; then
  for f in stdlib/*.mscl; do
    [ "$f" = stdlib/common.mscl ] && continue
    for ranks in 2 4 8; do
      base="$(basename "$f" .mscl)-$ranks"
      "$MSCCLC" "$f" --ranks "$ranks" -o "$OUT/mlir-text/$base.mlir" \
        2>/dev/null || rm -f "$OUT/mlir-text/$base.mlir"
      "$MSCCLC" "$f" --ranks "$ranks" --emit=plan \
        -o "$OUT/plan-json/$base.json" 2>/dev/null ||
        rm -f "$OUT/plan-json/$base.json"
    done
  done
fi

# The structs of runtime/include/mscclc/runtime/BootstrapWire.h, for 4 ranks
# on 127.0.0.1; the nonce is BootstrapWireFuzzer's, which proves the hellos
# and the answer itself (their proofs here are zeros).
python3 - "$OUT/bootstrap-wire" <<'PY'
import socket, struct, sys
out = sys.argv[1]
magic, version, nonce = 0x4d534343, 3, 0x0123456789abcdef
secret, proof = bytes(range(32)), bytes(32)
def addr(port, family=socket.AF_INET):
    return struct.pack('<HH16s', family, socket.htons(port),
                       socket.inet_aton('127.0.0.1'))
seeds = {
    'id': b'\0' + struct.pack('<IIQI', magic, version, nonce, 1) +
          addr(29500) + secret,
    'hellos': b'\1' + b''.join(struct.pack('<IIQI', magic, r, nonce, 4) +
                               addr(40000 + r) + proof for r in range(4)),
    'answer': b'\2' + bytes([4 + 8]) +
              b''.join(addr(40000 + r) for r in range(4)),
    'ring': b'\3' + struct.pack('<IIQ', magic, 3, nonce) + proof,
    'challenge': b'\4' + struct.pack('<IIQ', magic, 2, nonce) + bytes(32) +
                 struct.pack('<II', magic, 2) + bytes(64),
}
for name, data in seeds.items():
    open(f'{out}/{name}', 'wb').write(data)
PY

# The structs of runtime/include/mscclc/runtime/TcpWire.h; the nonce, the
# selector bytes and the windows are TcpFrameFuzzer's (which proves the
# hello itself).
python3 - "$OUT/tcp-frame" <<'PY'
import struct, sys
out = sys.argv[1]
nonce, proof = 0x0123456789abcdef, bytes(32)
def frame(window, kind, offset, size, payload=b''):
    return bytes([window]) + struct.pack('<IIIIQQ', 0x4d535446, kind, 0, 0,
                                         offset, size) + payload
seeds = {
    'hello': b'\0' + bytes([4]) + struct.pack('<IIQ', 0x4d535450, 1, nonce) +
             proof,
    'frames': b'\1' + frame(0, 1, 0, 16, bytes(16)) +
              frame(1, 1, 84, 16, bytes(range(16))) + frame(2, 2, 8, 5) +
              frame(0, 3, 0, 0),
}
for name, data in seeds.items():
    open(f'{out}/{name}', 'wb').write(data)
PY

# Triggers in the layout of docs/kernel-abi.md (Trigger.h).
python3 - "$OUT/proxy-trigger" <<'PY'
import struct, sys
out = sys.argv[1]
def trigger(kind, proxy, src, src_off, dst, dst_off, size):
    fst = dst_off | dst << 36 | src << 38 | kind << 40 | proxy << 43
    snd = src_off | size << 36 | 1 << 63
    return struct.pack('<QQ', fst, snd)
seeds = {
    'puts': trigger(1, 0, 0, 0, 1, 0, 4096) + trigger(3, 0, 2, 128, 2, 0, 128) +
            trigger(7, 1, 2, 99, 1, 6, 1) + trigger(1, 2, 0, 0, 0, 0, 0),
    'signal-flush': trigger(2, 1, 0, 0, 0, 0, 0) + trigger(4, 2, 0, 0, 0, 0, 0),
}
for name, data in seeds.items():
    open(f'{out}/{name}', 'wb').write(data)
PY

# Byte 0: even fuzzes the table, odd the catalog (SelectionTableFuzzer).
{ printf '\0'; cat stdlib/selection.json; } > "$OUT/selection-table/selection.json"
{ printf '\1'; cat stdlib/algorithms.json; } > "$OUT/selection-table/algorithms.json"

# Entries in the format of runtime/include/mscclc/runtime/KernelEntry.h.
entry() { # magic key bytes
  printf '%s\n%s\n%s\n%s\n%s' "$1" "$2" "${#3}" \
    "$(printf '%s' "$3" | sha256sum | cut -d' ' -f1)" "$3"
}
key=$(printf 'fuzz' | sha256sum | cut -d' ' -f1)
entry MSCCLC-AOT-CUBIN-1 "$key" 'ELF bytes' > "$OUT/kernel-entry/aot-cubin"
entry MSCCLC-AOT-BUNDLE-1 "$key" '{"format": "mscclc-bundle"}' > "$OUT/kernel-entry/aot-bundle"
entry MSCCLC-CUBIN-2 "$key" 'ELF bytes' > "$OUT/kernel-entry/cache-cubin"
# From the file, not a pipe: head leaving early would kill the writer with
# SIGPIPE, and under pipefail this script with it (it did, under load).
head -c 90 "$OUT/kernel-entry/aot-cubin" > "$OUT/kernel-entry/truncated"

# Command lines: a first byte (the program), then one argument a line.
cmdline() { local name=$1; shift; { printf '%s' "$name"; printf '%s\n' "$@"; } > "$OUT/command-line/$name"; }
cmdline a --ranks=4 --emit=plan
cmdline b --ranks=3 --instances=2 --emit=cuda --threads-per-block=256
cmdline c --ranks=2 --simulate --schedules=2 --bytes=4K,64K --dtype=bf16 --redop=max
cmdline d --ranks=8 --emit=exprs --single-launch
cmdline e --ranks=4 --emit=hip --embed-headers -Dchunks=2
cmdline f --ranks=4 --emit=dot --no-passes
cmdline g --ranks=4 --emit=bundle --gpus-per-node=2 --max-proof-chunks=10
cmdline h --ranks=0 --instances=5000 --threads-per-block=4294967295 --max-input-bytes=1
cmdline i --simulate --cost=bw=nan --cost=latency=-1 --seed=7 --op=xor
cmdline j --emit=plan --arch=sm_90 --rank=5 --dtype=f8zz --verify-each

for dir in fuzz/regressions/*/; do
  [ -d "$dir" ] || continue
  target=$(basename "$dir")
  mkdir -p "$OUT/$target"
  cp "$dir"* "$OUT/$target/" 2>/dev/null || true
done
for target in "$OUT"/*/; do
  echo "seeds: $(ls "$target" | wc -l) for $(basename "$target")"
done
