#!/usr/bin/env bash
# Runs an .mscl program's generated kernels on the CPU, every rank in one
# process, and checks every output element (docs/testing.md, "Host runs").
# No GPU needed: mscclc from build/bin (or --mscclc), g++, nlohmann-json and
# fmt (scripts/setup.sh installs them).
#
#   scripts/host-run.sh FILE.mscl --ranks 2,3,4 [--counts 1,7,1003]
#                       [--dtype u64] [--op sum] [--launches L] [--seed S]
#                       [--exprs FILE] [-D name=value] [--skip-static-checks]
#
# Exit status: 0 ok, 1 wrong, 2 unsupported, 3 set-up error, 4 refused by
# mscclc (test/HostRun/hostrun.py --help lists every option).
exec python3 "$(dirname "$0")/../test/HostRun/hostrun.py" "$@"
