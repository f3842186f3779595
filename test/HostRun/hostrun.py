#!/usr/bin/env python3
"""Host runs of mscclc programs: generated kernels on the CPU, checked.

Compiles an .mscl program with mscclc (--emit=bundle: plan and CUDA source
from one run), compiles the CUDA source with g++ for the CPU together with
the device library (MSCCLC_TARGET_HOST) and links it to the harness in this
folder, runs every rank in one process on real data and returns the
verdict (docs/testing.md, "Host runs"). Compiled binaries are cached by
content hash, so repeated runs of a program cost only the run.

As a module (what a program generator imports):

    import hostrun
    v = hostrun.run("prog.mscl", ranks=4, counts=[1, 7, 1003])
    v.code  # OK, WRONG, UNSUPPORTED, ERROR or REFUSED; v.output: the report

As a command (scripts/host-run.sh): hostrun.py FILE.mscl --ranks 2,3,4 ...
"""

import argparse
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INCLUDE = ROOT / "runtime" / "include"

# Verdicts: the harness's exit statuses, and REFUSED for a program mscclc
# does not compile (its static proof refuses it, or it is malformed).
OK, WRONG, UNSUPPORTED, ERROR, REFUSED = 0, 1, 2, 3, 4
NAMES = {OK: "ok", WRONG: "wrong", UNSUPPORTED: "unsupported",
         ERROR: "error", REFUSED: "refused"}

HARNESS = ["Main.cpp", "Plan.cpp", "DType.cpp", "Oracle.cpp", "Exprs.cpp",
           "Machine.cpp"]
CXXFLAGS = ["-std=c++17", "-O1", "-pthread", "-fno-strict-aliasing",
            "-fwrapv", "-Wall", "-Wno-unknown-pragmas"]
# --sanitize: what g++ adds for each (ThreadSanitizer does not model
# fences, which the device library issues; the emulation's atomics carry
# the orderings instead, host/Primitives.h).
SANITIZE = {None: [], "thread": ["-fsanitize=thread", "-Wno-tsan"],
            "address": ["-fsanitize=address"],
            "undefined": ["-fsanitize=undefined",
                          "-fno-sanitize-recover=all"]}
OPS = ("sum", "prod", "min", "max")


@dataclasses.dataclass
class Verdict:
    code: int
    output: str

    @property
    def ok(self) -> bool:
        return self.code == OK

    def __str__(self) -> str:
        return f"{NAMES.get(self.code, self.code)}: {self.output.strip()}"


class SetupError(Exception):
    """Something other than the program is wrong (ERROR)."""


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _sources_digest(*dirs: Path) -> str:
    files = sorted(f for d in dirs for f in d.rglob("*")
                   if f.suffix in (".h", ".cpp") and f.is_file())
    return _digest(*[x for f in files for x in (str(f), f.read_bytes())])


def _cxx() -> str:
    return os.environ.get("CXX_HOSTRUN", "g++")


def _fmt_flags() -> list:
    # fmt header-only, as the runtime uses it; MSCCLC_FMT_INCLUDE_DIR points
    # at a copy of fmt's headers where libfmt-dev is not installed.
    flags = ["-DFMT_HEADER_ONLY=1"]
    if os.environ.get("MSCCLC_FMT_INCLUDE_DIR"):
        flags += ["-isystem", os.environ["MSCCLC_FMT_INCLUDE_DIR"]]
    return flags


def cache_dir(cache: Optional[str] = None) -> Path:
    d = Path(cache or os.environ.get("MSCCLC_HOSTRUN_CACHE") or
             Path(tempfile.gettempdir()) / f"mscclc-hostrun-{os.getuid()}")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _compile(args: list, out: Path, what: str) -> None:
    """Runs a compiler writing `out`, atomically (concurrent runs share
    the cache)."""
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    r = subprocess.run(args + ["-o", str(tmp)], capture_output=True,
                       text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise SetupError(f"{what} failed:\n{' '.join(args)}\n{r.stderr}")
    os.replace(tmp, out)


def _compiler_version() -> str:
    r = subprocess.run([_cxx(), "--version"], capture_output=True, text=True)
    return r.stdout


def prepare(cache: Optional[str] = None,
            sanitize: Optional[str] = None) -> Path:
    """The harness object (one unity unit: a third of the time of its six
    files apart), built once per content."""
    flags = CXXFLAGS + SANITIZE[sanitize]
    key = _digest(_sources_digest(HERE, INCLUDE), _compiler_version(),
                  flags, _fmt_flags())
    obj = cache_dir(cache) / f"harness-{key}.o"
    if not obj.exists():
        unity = obj.with_suffix(f".{uuid.uuid4().hex}.cpp")
        unity.write_text("".join(f'#include "{HERE / f}"\n' for f in HARNESS))
        try:
            _compile([_cxx(), *flags, *_fmt_flags(), f"-I{INCLUDE}",
                      f"-I{HERE}", "-c", str(unity)], obj, "building the "
                     "harness")
        finally:
            unity.unlink(missing_ok=True)
    return obj


def _mscclc(path: Optional[str]) -> Path:
    exe = Path(path or os.environ.get("MSCCLC") or
               ROOT / "build" / "bin" / "mscclc")
    # A build may be relinking it: wait a little before giving up.
    for _ in range(60):
        if exe.exists() and os.access(exe, os.X_OK):
            return exe
        time.sleep(1)
    raise SetupError(f"no mscclc at {exe} (build it, or pass --mscclc)")


def threads_needed(cuda: str) -> int:
    """Threads per block the kernels need: signals, waits and flushes over
    several channels give thread i the i-th channel (docs/backend.md)."""
    lanes = [int(n) for n in re.findall(r"threadIdx\.x == (\d+)", cuda)]
    return max(lanes, default=0) + 1


def compile_program(source: str, ranks: int, compiler_args: Sequence[str] = (),
                    mscclc: Optional[str] = None):
    """(plan, cuda) of a program, or a Verdict when mscclc refuses it."""
    exe = _mscclc(mscclc)
    cmd = [str(exe), str(source), "--ranks", str(ranks), "--emit=bundle",
           *compiler_args]
    # A build relinking the compiler makes it briefly unrunnable.
    for attempt in range(60):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            r = subprocess.CompletedProcess(cmd, 126, "", str(e))
        if r.returncode not in (126, 127) or attempt == 59:
            break
        time.sleep(1)
    if r.returncode in (126, 127):
        raise SetupError(f"cannot run {exe}: {r.stderr}")
    if r.returncode < 0:
        raise SetupError(f"{exe} died of signal {-r.returncode}:\n"
                         f"{r.stderr}")
    if r.returncode != 0:
        return Verdict(REFUSED, r.stderr or r.stdout)
    bundle = json.loads(r.stdout)
    return bundle["plan"], bundle["cuda"]


def build(plan: dict, cuda: str, dtype: str, op: str, ll8: bool = False,
          cache: Optional[str] = None, sanitize: Optional[str] = None) -> Path:
    """The host-run binary of a generated source for one type and
    operator."""
    harness = prepare(cache, sanitize)
    flags = CXXFLAGS + SANITIZE[sanitize]
    d = cache_dir(cache)
    threads = threads_needed(cuda)
    defines = [f"-DMSCCLC_DTYPE={dtype}", f"-DMSCCLC_REDOP={op}",
               f"-DMSCCLC_HOSTRUN_THREADS={threads}",
               f"-DMSCCLC_HOST_LL8={1 if ll8 else 0}"]
    key = _digest(cuda, defines, harness.name)  # the harness's key has flags
    exe = d / f"hostrun-{plan['name']}-{key}"
    if exe.exists():
        os.utime(exe)  # recently used: pruned last
        return exe
    _prune(d)
    src = d / f"kernels-{key}.cu"
    if not src.exists():
        tmp = src.with_name(f".{src.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_text(cuda)
        os.replace(tmp, src)
    obj = d / f"kernels-{key}.o"
    _compile([_cxx(), *flags, "-DMSCCLC_TARGET_HOST=1", *defines,
              f'-DMSCCLC_HOSTRUN_KERNELS="{src}"', f"-I{INCLUDE}",
              f"-I{HERE}", "-c", str(HERE / "KernelUnit.cpp")], obj,
             "compiling the generated kernels for the CPU")
    _compile([_cxx(), "-rdynamic", *flags, str(harness), str(obj), "-ldl"],
             exe, "linking")
    return exe


def _prune(d: Path) -> None:
    """Keeps the cache to $MSCCLC_HOSTRUN_CACHE_ENTRIES programs (512; a
    generator campaign compiles thousands, 0.6 MB each): the least
    recently used quarter goes when it is full."""
    limit = int(os.environ.get("MSCCLC_HOSTRUN_CACHE_ENTRIES", "512"))
    exes = list(d.glob("hostrun-*"))
    if len(exes) < limit:
        return

    def age(f):
        try:
            return f.stat().st_mtime
        except FileNotFoundError:  # pruned by a concurrent run
            return 0

    recent = time.time() - 60  # maybe about to run in a concurrent job
    for exe in sorted(exes, key=age)[:max(1, len(exes) // 4)]:
        if age(exe) > recent:
            break
        key = exe.name.rsplit("-", 1)[-1]
        for f in (exe, d / f"kernels-{key}.cu", d / f"kernels-{key}.o"):
            f.unlink(missing_ok=True)


def _unsupported(plan: dict, dtype: str, op: str, exprs) -> Optional[str]:
    if plan.get("usesSwitchChannels"):
        return "switch channels (multimem) are not emulated"
    if op not in OPS:
        return f"operator {op} (sum, prod, min and max are)"
    if dtype not in plan.get("dtypes", []) or op not in plan.get("redops", []):
        return f"the plan does not accept {dtype} {op}"
    if plan.get("collective") == "custom" and not exprs:
        return "a custom collective is checked with an expression file only"
    return None


def run(source: str, ranks: int, counts: Sequence[int] = (1, 7, 1003),
        dtype: str = "u64", op: str = "sum", launches: int = 1, seed: int = 1,
        exprs: Optional[str] = None, compiler_args: Sequence[str] = (),
        timeout_ms: int = 10000, threads: Optional[int] = None,
        offset: int = 0, lockstep: bool = False,
        jitter_us: int = 0, ll8: bool = False,
        mscclc: Optional[str] = None, cache: Optional[str] = None,
        sanitize: Optional[str] = None) -> Verdict:
    """Compiles `source` for `ranks` ranks, runs it on the CPU for each
    count (`launches` launches each, on the same buffers) and checks every
    output element. `exprs`: an expression file (docs/testing.md) to
    compare with bit for bit instead of the collective's definition."""
    # A program proven for one launch only runs with every launch
    # synchronised, as its caller must run it.
    if "--single-launch" in compiler_args:
        lockstep = True
    try:
        got = compile_program(source, ranks, compiler_args, mscclc)
        if isinstance(got, Verdict):
            return got
        plan, cuda = got
        why = _unsupported(plan, dtype, op, exprs)
        if why:
            return Verdict(UNSUPPORTED,
                           f"hostrun: UNSUPPORTED: {plan['name']}: {why}\n")
        exe = build(plan, cuda, dtype, op, ll8, cache, sanitize)
        d = cache_dir(cache)
        text = json.dumps(plan)
        plan_path = d / f"plan-{_digest(text)}.json"
        if not plan_path.exists():
            tmp = plan_path.with_name(f".{plan_path.name}.{uuid.uuid4().hex}"
                                      ".tmp")
            tmp.write_text(text)
            os.replace(tmp, plan_path)
    except SetupError as e:
        return Verdict(ERROR, str(e))
    args = [str(exe), "--plan", str(plan_path),
            "--counts", ",".join(str(c) for c in counts),
            "--launches", str(launches), "--seed", str(seed),
            "--timeout-ms", str(timeout_ms), "--offset", str(offset)]
    if exprs:
        args += ["--exprs", str(exprs)]
    if threads:
        args += ["--threads", str(threads)]
    if lockstep:
        args.append("--lockstep")
    if jitter_us:
        args += ["--jitter", str(jitter_us)]
    # The harness's own watchdog ends a stuck run after twice the time-out
    # and 10 s; this is the last resort.
    limit = 60 + 3 * timeout_ms / 1000 * len(counts) * launches
    env = dict(os.environ)
    # A sanitizer's report fails the run (exit status 1, WRONG).
    env.setdefault("TSAN_OPTIONS", "halt_on_error=1 exitcode=1")
    env.setdefault("ASAN_OPTIONS", "halt_on_error=1 exitcode=1")
    try:
        try:
            r = subprocess.run(args, capture_output=True, text=True,
                               timeout=limit, env=env)
        except FileNotFoundError:  # pruned by a concurrent run: once more
            args[0] = str(build(plan, cuda, dtype, op, ll8, cache, sanitize))
            r = subprocess.run(args, capture_output=True, text=True,
                               timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return Verdict(WRONG, f"hostrun: FAIL: no verdict within {limit} s\n")
    except (SetupError, OSError) as e:
        return Verdict(ERROR, str(e))
    output = r.stdout + r.stderr
    if r.returncode < 0:
        return Verdict(WRONG, output + f"hostrun: FAIL: the run died of "
                       f"signal {-r.returncode}\n")
    if r.returncode not in NAMES:
        return Verdict(ERROR, output)
    return Verdict(r.returncode, output)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Run an .mscl program's generated kernels on the CPU "
        "and check every output element (docs/testing.md, Host runs).")
    p.add_argument("source", nargs="?", help=".mscl (or .mlir) program")
    p.add_argument("--ranks", default="2", help="rank counts, e.g. 2,3,4")
    p.add_argument("--counts", default="1,7,1003")
    p.add_argument("--dtype", default="u64")
    p.add_argument("--op", default="sum", choices=OPS)
    p.add_argument("--launches", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--exprs", help="expression file to compare with")
    p.add_argument("--timeout-ms", type=int, default=10000)
    p.add_argument("--threads", type=int, help="threads per block")
    p.add_argument("--offset", type=int, default=0,
                   help="user buffers start this many elements off 256 B")
    p.add_argument("--lockstep", action="store_true",
                   help="synchronise every launch: all ranks finish one and "
                   "prepare their buffers before any starts the next")
    p.add_argument("--jitter", type=int, default=0, metavar="US",
                   help="random delays of up to US microseconds")
    p.add_argument("--ll8", action="store_true", help="AMD's LL8 packets")
    p.add_argument("--sanitize", choices=["thread", "address", "undefined"],
                   help="build harness and kernels with this sanitizer")
    p.add_argument("-D", dest="defines", action="append", default=[],
                   metavar="NAME=VALUE", help="passed to mscclc")
    p.add_argument("--skip-static-checks", action="store_true",
                   help="passed to mscclc (for programs the proof refuses)")
    p.add_argument("--single-launch", action="store_true",
                   help="passed to mscclc; every launch synchronised")
    p.add_argument("--mscclc", help="the compiler (default build/bin/mscclc)")
    p.add_argument("--cache", help="where binaries are kept "
                   "($MSCCLC_HOSTRUN_CACHE, else a folder in $TMPDIR)")
    p.add_argument("--prepare", action="store_true",
                   help="only build the harness")
    p.add_argument("--expect", choices=list(NAMES.values()), default="ok",
                   help="exit 0 when every verdict is this one (tests)")
    p.add_argument("--expect-output", metavar="REGEX",
                   help="and every report matches this")
    a = p.parse_args(argv)
    if a.prepare:
        try:
            print(prepare(a.cache, a.sanitize))
            return 0
        except SetupError as e:
            print(e, file=sys.stderr)
            return ERROR
    if not a.source:
        p.error("a program is needed")
    compiler_args = [f"-D{d}" for d in a.defines]
    if a.skip_static_checks:
        compiler_args.append("--skip-static-checks")
    if a.single_launch:
        compiler_args.append("--single-launch")
    counts = [int(c) for c in a.counts.split(",")]
    worst, all_expected = OK, True
    for ranks in [int(r) for r in a.ranks.split(",")]:
        v = run(a.source, ranks, counts, a.dtype, a.op, a.launches, a.seed,
                a.exprs, compiler_args, a.timeout_ms, a.threads, a.offset,
                a.lockstep, a.jitter, a.ll8, a.mscclc,
                a.cache, a.sanitize)
        sys.stdout.write(v.output if v.output.endswith("\n")
                         else v.output + "\n")
        expected = NAMES[v.code] == a.expect and (
            not a.expect_output or re.search(a.expect_output, v.output))
        if a.expect != "ok" and not expected:
            print(f"hostrun.py: expected '{a.expect}'"
                  f"{' matching ' + a.expect_output if a.expect_output else ''}"
                  f" at {ranks} ranks, got '{NAMES.get(v.code, v.code)}'")
        all_expected &= bool(expected)
        worst = max(worst, v.code)
    if a.expect != "ok":
        return 0 if all_expected else 1
    return worst if not all_expected else 0


if __name__ == "__main__":
    sys.exit(main())
