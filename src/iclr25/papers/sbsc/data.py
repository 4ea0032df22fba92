"""Problems: generated integer-answer problems (shipped as JSON) and CHAMP's integer subset.

Data card, generated set (`assets/problems.json`, 60 problems, written by `generate_problems`
with seed 0; a test regenerates it and compares): four families of AIME-style problems whose
answers are integers 0-999, each with its ground truth computed by brute force (plain loops over
the whole search space, independent of the programs the scripted solver writes):

| family | steps | problem |
|---|---|---|
| `lattice` | 2 | lattice points (x, y) with x^2 + y^2 <= R^2, mod 1000 |
| `subsets` | 2 | 3-element subsets of {1..n} whose sum is divisible by m, mod 1000 |
| `divisors` | 3 | (sigma(A) + tau(B)) mod 1000 |
| `modtail` | 4 | the last three digits of a^b + c^d + e^f |

Everything here is synthetic. Real problems: `load_champ()` reads the 79 CHAMP problems
(Mao et al. 2024, MIT; PyPI `champ-dataset`, extra `sandbox`) whose answer is an integer, from
the JSON file inside the installed package (nothing is downloaded).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from iclr25.core.checks import check_choice, check_int
from iclr25.core.packaged import package_file

ASSET = Path(__file__).with_name("assets") / "problems.json"
FAMILIES = ("lattice", "subsets", "divisors", "modtail")
STEPS = {"lattice": 2, "subsets": 2, "divisors": 3, "modtail": 4}
"""Sub-steps of each family's decomposition (the scripted solver's plan length)."""


@dataclass(frozen=True)
class Problem:
    """One problem with a known answer.

    Attributes:
        id: Stable identifier.
        family: Problem family ("lattice", ..., or "champ").
        text: The problem statement.
        answer: The ground-truth answer, as a canonical string.
        params: The generator's parameters (empty for real problems).
    """

    id: str
    family: str
    text: str
    answer: str
    params: dict = field(default_factory=dict)


def _lattice_truth(R: int) -> int:
    return sum(1 for x in range(-R, R + 1) for y in range(-R, R + 1) if x * x + y * y <= R * R)


def _subsets_truth(n: int, m: int) -> int:
    count = 0
    for i in range(1, n + 1):
        for j in range(i + 1, n + 1):
            for k in range(j + 1, n + 1):
                count += (i + j + k) % m == 0
    return count


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def make_problem(family: str, params: dict, pid: str) -> Problem:
    """The problem of `family` with `params`, its answer by brute force.

    Args:
        family: One of FAMILIES.
        params: lattice {R}, subsets {n, m}, divisors {A, B}, modtail {a, b, c, d, e, f}.
        pid: Its identifier.
    """
    check_choice("family", family, FAMILIES)
    need = {"lattice": "R", "subsets": "nm", "divisors": "AB", "modtail": "abcdef"}[family]
    if not isinstance(params, dict) or sorted(params) != sorted(need):
        raise ValueError(f"params={params!r} is not allowed: {family} takes the keys {list(need)}")
    bad = {k: v for k, v in params.items() if isinstance(v, bool) or not isinstance(v, int)}
    if bad or min(params.values()) < 1:
        raise ValueError(f"params={params!r} is not allowed: the values must be ints >= 1")
    p = params
    if family == "lattice":
        text = (
            f"How many lattice points (x, y) with integer coordinates satisfy "
            f"x^2 + y^2 <= {p['R']}^2? Give the remainder when that number is divided by 1000."
        )
        truth = _lattice_truth(p["R"]) % 1000
    elif family == "subsets":
        text = (
            f"How many 3-element subsets of {{1, 2, ..., {p['n']}}} have a sum divisible by "
            f"{p['m']}? Give the remainder when that number is divided by 1000."
        )
        truth = _subsets_truth(p["n"], p["m"]) % 1000
    elif family == "divisors":
        text = (
            f"Let s be the sum of the positive divisors of {p['A']} and t the number of "
            f"positive divisors of {p['B']}. Find the remainder when s + t is divided by 1000."
        )
        truth = (sum(_divisors(p["A"])) + len(_divisors(p["B"]))) % 1000
    else:
        text = (
            f"What are the last three digits of {p['a']}^{p['b']} + {p['c']}^{p['d']} + "
            f"{p['e']}^{p['f']}? (Answer with the integer they form, 0 to 999.)"
        )
        truth = (p["a"] ** p["b"] + p["c"] ** p["d"] + p["e"] ** p["f"]) % 1000
    return Problem(pid, family, text, str(truth), dict(params))


def generate_problems(n_per_family: int = 15, seed: int = 0) -> list[Problem]:
    """Generate problems, `n_per_family` of each family, interleaved (lattice, subsets, ...).

    Args:
        n_per_family: Problems per family, >= 1.
        seed: Generator seed.

    Returns:
        4 * n_per_family problems with brute-force answers.
    """
    check_int("n_per_family", n_per_family, low=1, high=200)
    rng = random.Random(seed)
    out: list[Problem] = []
    for i in range(n_per_family):
        for fam in FAMILIES:
            if fam == "lattice":
                params = {"R": rng.randint(8, 60)}
            elif fam == "subsets":
                params = {"n": rng.randint(8, 24), "m": rng.randint(3, 11)}
            elif fam == "divisors":
                params = {"A": rng.randint(100, 5000), "B": rng.randint(100, 5000)}
            else:
                base = [rng.randint(2, 99) for _ in range(3)]
                exps = [rng.randint(20, 400) for _ in range(3)]
                params = dict(zip("ace", base)) | dict(zip("bdf", exps))
                params = {k: params[k] for k in "abcdef"}
            out.append(make_problem(fam, params, f"{fam}-{i:02d}"))
    return out


def easy_problems(n: int = 20, seed: int = 0) -> list[Problem]:
    """One-step arithmetic problems ("What is 23 * 7 + 41?", answers below 1000), for a small
    real model (the SmolLM2 observation): generated on the fly, not shipped.

    Args:
        n: Problems, >= 1.
        seed: Generator seed.
    """
    check_int("n", n, low=1, high=10_000)
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b, c = rng.randint(10, 40), rng.randint(2, 20), rng.randint(0, 99)
        text = f"What is {a} * {b} + {c}?"
        out.append(Problem(f"easy-{i:03d}", "easy", text, str(a * b + c), {"a": a, "b": b, "c": c}))
    return out


def save_problems(problems: list[Problem], path: str | Path) -> None:
    """Write problems as JSON (one object with a "problems" list)."""
    Path(path).write_text(json.dumps({"problems": [asdict(p) for p in problems]}, indent=1))


def load_problems(path: str | Path = ASSET) -> list[Problem]:
    """Problems from a JSON file written by `save_problems` (default: the shipped set).

    A user's own file works too: each problem needs id, family, text and answer.
    """
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or not isinstance(data.get("problems"), list):
        raise ValueError(f"{path}: expected an object with a 'problems' list")
    out = []
    for i, d in enumerate(data["problems"]):
        missing = [k for k in ("id", "family", "text", "answer") if k not in d]
        if missing:
            raise ValueError(f"{path}: problem {i} lacks {missing}")
        out.append(Problem(d["id"], d["family"], d["text"], str(d["answer"]), d.get("params", {})))
    return out


def load_champ() -> list[Problem]:
    """The CHAMP problems whose answer is an integer (79 of 270), from the installed package.

    Requires the extra `sandbox` (PyPI `champ-dataset==1.0.0`, MIT). Answers are kept as
    integer strings; the AIME range 0-999 does not apply (use answer_kind="integer").

    Raises:
        ImportError: When champ-dataset is not installed (the message says how to install it).
    """
    path = package_file(
        "champ_dataset",
        "dataset_files/v0.json",
        "load_champ needs champ-dataset: pip install 'iclr25[sandbox]'",
    )
    raw = json.loads(path.read_text(encoding="utf-8"))["problems"]
    out = []
    for pid, p in raw.items():
        ans = str(p.get("_answer", "")).strip()
        if re.fullmatch(r"-?\d+", ans):
            out.append(Problem(pid, "champ", p["_text"], str(int(ans))))
    return out
