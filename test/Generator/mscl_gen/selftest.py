"""Checks of the generator itself, without the oracles (lit: selftest.test).

- determinism: a case built twice from (seed, index) prints the same;
- correct programs pass the generator's symbolic run (make() raises
  otherwise), data defects fail it (make() retries otherwise): both are
  counted here so that a generator that stops producing either shows;
- the classifier: each pattern of verdicts gives the disagreement its
  docstring names.
"""
from collections import Counter

from .campaign import classify, program_text
from .generate import make
from .oracles import Verdict
from .plan import GenBug, NoProgram
from .selfcheck import check


def classifier_cases():
    P, F = Verdict("pass"), Verdict("fail", "x")
    E, S = Verdict("error", "boom"), Verdict("skip")
    return [
        ("accept", {"proof": P, "sim": P}, []),
        ("accept", {"proof": F, "sim": P}, ["proof-refuses-correct"]),
        ("accept", {"proof": P, "sim": F}, ["sim-fails-correct"]),
        ("accept", {"proof": P, "sim": P, "hostrun": F}, ["hostrun-fails-correct"]),
        ("reject", {"proof": F, "sim": P}, []),
        ("reject", {"proof": F, "sim": F}, []),
        ("reject", {"proof": P, "sim": F}, ["proof-misses"]),
        ("reject", {"proof": P, "sim": P}, ["undetected"]),
        ("reject", {"proof": P, "sim": P, "hostrun": F}, ["proof-misses"]),
        ("consistent", {"proof": P, "sim": P}, []),
        ("consistent", {"proof": F, "sim": F}, []),
        ("consistent", {"proof": P, "sim": F}, ["oracles-disagree"]),
        ("consistent", {"proof": F, "sim": P, "hostrun": S}, ["oracles-disagree"]),
        ("consistent", {"proof": F, "sim": F, "hostrun": P}, []),
        ("consistent", {"proof": P, "sim": P, "hostrun": F}, ["oracles-disagree"]),
        ("accept", {"proof": P, "sim": E}, ["crash-sim"]),
    ]


def selftest(seed, n):
    problems = []
    kinds = Counter()
    for i in range(n):
        try:
            a = make(seed, i)
            b = make(seed, i)
        except NoProgram:
            kinds["no program"] += 1
            continue
        except GenBug as e:
            problems.append(f"index {i}: {e}")
            continue
        if program_text(a) != program_text(b) or a.counts != b.counts:
            problems.append(f"index {i}: not deterministic")
        errs = check(a.prog)
        kinds["correct" if a.kind == "correct" else "broken"] += 1
        if a.kind == "correct" and errs:
            problems.append(f"index {i}: correct program fails the self-check: {errs[0]}")
        from .defects import BY_NAME
        d = BY_NAME.get(a.kind)
        if d is not None and d.data and not errs:
            problems.append(f"index {i}: {a.kind} program passes the self-check")
    for expect, v, want in classifier_cases():
        got = classify(expect, v)
        if got != want:
            problems.append(f"classify({expect}, {({k: x.status for k, x in v.items()})}) = {got}, not {want}")
    for p in problems[:20]:
        print("problem:", p)
    print(f"selftest: {n} programs, {kinds['correct']} correct, {kinds['broken']} broken, "
          f"{len(problems)} problems")
    return 1 if problems else 0
