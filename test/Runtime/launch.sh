#!/usr/bin/env bash
# One launch recipe of docs/multinode.md, on one host and without a GPU:
# starts 3 processes of runtime-launcher-rank the way the recipe does; they
# rendezvous at the address it gives and check each other.
#   launch.sh plain|mpirun|torchrun RANK_BINARY
# - plain: each process gets --rank, --nranks and rank 0's address;
# - mpirun: Open MPI starts them; rank and size come from
#   OMPI_COMM_WORLD_RANK/SIZE, the secret travels with -x;
# - torchrun: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT as torchrun sets
#   them; the rendezvous is at MASTER_PORT + 1 (torchrun's store owns
#   MASTER_PORT).
set -uo pipefail
recipe=$1 bin=$2 n=3
export MSCCLC_BOOTSTRAP_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
export MSCCLC_BOOTSTRAP_TIMEOUT=60
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

wait_all() { # pids...: 0 when every one exited 0
  local rc=0 pid
  for pid in "$@"; do wait "$pid" || rc=1; done
  return $rc
}

pids=()
case $recipe in
  plain)
    for ((r = 0; r < n; ++r)); do
      "$bin" --rank $r --nranks $n --addr 127.0.0.1:$port & pids+=($!)
    done
    wait_all "${pids[@]}" ;;
  mpirun)
    # As root (CI) Open MPI wants --allow-run-as-root; --oversubscribe lets
    # 3 ranks run on fewer cores.
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np $n \
      -x MSCCLC_BOOTSTRAP_SECRET -x MSCCLC_BOOTSTRAP_TIMEOUT \
      sh -c 'exec "$0" --rank "$OMPI_COMM_WORLD_RANK" --nranks "$OMPI_COMM_WORLD_SIZE" --addr "127.0.0.1:$1"' \
      "$bin" $port ;;
  torchrun)
    for ((r = 0; r < n; ++r)); do
      RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$((port - 1)) \
        sh -c 'exec "$0" --rank "$RANK" --nranks "$WORLD_SIZE" --addr "$MASTER_ADDR:$((MASTER_PORT + 1))"' \
        "$bin" & pids+=($!)
    done
    wait_all "${pids[@]}" ;;
  *)
    echo "launch.sh: unknown recipe '$recipe' (plain, mpirun or torchrun)" >&2
    exit 2 ;;
esac
rc=$?
echo "launch recipe $recipe: $([ $rc = 0 ] && echo PASSED || echo FAILED)"
exit $rc
