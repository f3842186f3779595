"""The oracles: the static proof, the simulator, and the host reference.

Each takes a program file and a Job (how to run it) and answers a Verdict:
"pass", "fail" (with the first error line), "error" (a crash, an internal
error, a timeout: always a finding) or "skip" (the oracle cannot run
here). A new oracle is a class with `name`, `available()` and
`run(path, job)`.
"""
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from .layout import sim_bytes

ESIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i8": 1, "u8": 1, "i32": 4,
         "u32": 4, "i64": 8, "u64": 8, "f8e4m3": 1, "f8e5m2": 1}


@dataclass
class Job:
    coll: str
    ranks: int
    gpn: int = 0
    instances: int = 1
    single_launch: bool = False
    counts: list = field(default_factory=lambda: [1, 7, 1003])
    dtype: str = "f32"
    op: str = "sum"
    schedules: int = 6
    seed: int = 1
    timeout: float = 120.0

    def shape_args(self):
        a = ["--ranks", str(self.ranks)]
        if self.gpn:
            a += ["--gpus-per-node", str(self.gpn)]
        if self.instances != 1:
            a += ["--instances", str(self.instances)]
        if self.single_launch:
            a += ["--single-launch"]
        return a


@dataclass
class Verdict:
    status: str            # pass, fail, error, skip
    msg: str = ""          # the first error line, without its location
    where: str = ""        # file:line:col of it
    detail: str = ""       # the tail of the output
    cmd: str = ""

    def category(self):
        """The kind of error, stable across programs: the message with its
        numbers, names of chunks, channels and ranks taken out."""
        m = self.msg
        m = re.sub(r"<[^>]*>", "<>", m)
        m = re.sub(r"@\w+", "@c", m)
        m = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", m)
        m = re.sub(r"\(.*", "", m)
        return " ".join(m.split()[:8])


ERR = re.compile(r"^(?P<where>[^ ]*?:\d+:\d+): error: (?P<msg>.*)$")


def first_error(text):
    for line in text.splitlines():
        m = ERR.match(line)
        if m:
            return m.group("msg"), m.group("where")
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip(), ""
    return "", ""


def run_cmd(cmd, timeout, wait_for_tool=300):
    """(exit status, output); (None, "timeout") past the time limit. The
    compiler may be relinked while a campaign runs: a missing or busy
    binary is waited for, up to wait_for_tool seconds."""
    import time
    start = time.time()
    while True:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        except OSError:
            if time.time() - start > wait_for_tool:
                raise
            time.sleep(2)
            continue
        return p.returncode, p.stdout + p.stderr


def crashed(rc, out):
    return rc is None or rc < 0 or rc > 1 or "Stack dump" in out or \
        "internal error" in out.lower() or "Assertion" in out


class Proof:
    name = "proof"

    def __init__(self, mscclc):
        self.mscclc = mscclc

    def available(self):
        return os.path.exists(self.mscclc)

    def run(self, path, job):
        cmd = [self.mscclc, path] + job.shape_args() + ["--emit=plan", "-o", "/dev/null"]
        rc, out = run_cmd(cmd, job.timeout)
        msg, where = first_error(out or "")
        if crashed(rc, out or ""):
            return Verdict("error", msg or (out or "").strip()[-200:], where, (out or "")[-2000:], " ".join(cmd))
        if rc == 0:
            return Verdict("pass", "", "", "", " ".join(cmd))
        return Verdict("fail", msg, where, out[-2000:], " ".join(cmd))


class Simulator:
    name = "sim"

    def __init__(self, mscclc):
        self.mscclc = mscclc

    def available(self):
        return os.path.exists(self.mscclc)

    def run(self, path, job):
        es = ESIZE[job.dtype]
        sizes = ",".join(str(sim_bytes(job.coll, job.ranks, c, es)) for c in job.counts)
        cmd = ([self.mscclc, "--simulate", path] + job.shape_args() +
               ["--bytes", sizes, "--schedules", str(job.schedules), "--seed", str(job.seed),
                "--dtype", job.dtype, "--op", job.op])
        rc, out = run_cmd(cmd, job.timeout)
        out = out or ""
        msg, where = first_error(out)
        if crashed(rc, out) or (rc == 0 and ": PASS" not in out):
            return Verdict("error", msg or out.strip()[-200:], where, out[-2000:], " ".join(cmd))
        if rc == 0:
            return Verdict("pass", "", "", "", " ".join(cmd))
        fail = [l for l in out.splitlines() if ": FAIL" in l]
        detail = (fail[0] + "\n" if fail else "") + out[-2000:]
        return Verdict("fail", msg or (fail[0] if fail else "FAIL"), where, detail, " ".join(cmd))


class HostRun:
    """The element-exact reference of test/HostRun/ (issue 39, item 6): the
    generated CUDA compiled for the CPU with the real device library, every
    rank run in one process, every output element checked. Its module
    test/HostRun/hostrun.py has
        run(source, ranks, counts, dtype, op, launches, seed, ...,
            compiler_args=[...], mscclc=...) -> Verdict(code, output)
    with codes OK, WRONG, UNSUPPORTED, ERROR, REFUSED. The program is
    compiled with --skip-static-checks, so that a program the proof refuses
    is still run. Where the module is missing the oracle is skipped.
    Host runs compile the kernels with the host compiler (cached by
    content), seconds a program: `rate` runs them on that fraction of the
    programs (chosen from the case, so a rerun picks the same ones)."""
    name = "hostrun"
    CODES = {0: "pass", 1: "fail", 2: "skip", 3: "error", 4: "fail"}

    def __init__(self, root, mscclc=None, rate=1.0):
        self.root = root
        self.mscclc = mscclc
        self.rate = rate
        self.module = os.path.join(root, "test", "HostRun", "hostrun.py")
        self._mod = None

    def available(self):
        return self.rate > 0 and os.path.exists(self.module)

    def load(self):
        if self._mod is None:
            import importlib.util
            spec = importlib.util.spec_from_file_location("mscl_gen_hostrun", self.module)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            self._mod = mod
        return self._mod

    def run(self, path, job):
        import zlib
        if (zlib.crc32(f"{os.path.basename(path)}:{job.seed}".encode()) % 10000) / 10000.0 >= self.rate:
            return Verdict("skip", "not sampled")
        if job.op == "avg":
            return Verdict("skip", "avg is not run on the host")
        try:
            mod = self.load()
        except Exception as e:
            return Verdict("error", f"test/HostRun/hostrun.py does not load: {e!r}")
        args = ["--skip-static-checks"]
        if job.gpn:
            args += ["--gpus-per-node", str(job.gpn)]
        if job.instances != 1:
            args += ["--instances", str(job.instances)]
        # the large count is the simulator's; host runs keep to the small
        counts = [c for c in job.counts if c <= 4096] or job.counts[:1]
        try:
            v = mod.run(path, job.ranks, counts=counts, dtype=job.dtype, op=job.op,
                        launches=1 if job.single_launch else 2, seed=job.seed,
                        compiler_args=args, mscclc=self.mscclc)
        except Exception as e:  # the reference failing is a finding too
            return Verdict("error", f"hostrun.run raised {e!r}")
        status = self.CODES.get(v.code, "error")
        out = v.output or ""
        msg, where = first_error(out)
        if not msg:
            lines = [l for l in out.splitlines() if "FAIL" in l or "wrong" in l.lower()]
            msg = (lines[0] if lines else out.strip()[:200]).strip()
        return Verdict(status, msg if status != "pass" else "", where, out[-2000:],
                       f"hostrun.run({path}, ranks={job.ranks}, counts={counts}, "
                       f"dtype={job.dtype}, op={job.op})")


def find_mscclc(root, given=None):
    for c in (given, os.environ.get("MSCCLC"), os.path.join(root, "build", "bin", "mscclc"),
              shutil.which("mscclc")):
        if c and os.path.exists(c):
            return os.path.abspath(c)
    return given or os.path.join(root, "build", "bin", "mscclc")
