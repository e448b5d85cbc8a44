"""Generated mutants (mutmut) over the modules that guard trust, writes and injection, held to per-module floors.

``benchmarks/mutation.json`` is the one config: the guarded modules, the tests mutmut may run, the sample and
each module's recorded score and floor. The run happens in a temporary copy of the checkout (mutmut writes
``mutants/`` and its caches in the folder it runs in, and a marketplace install copies the plugin folder whole):
mutmut generates every mutant of every guarded module, this tool picks a fixed-seed sample of each module's (the
same tree gives the same sample), mutmut runs them, and each module's score (killed / sampled) is checked
against its floor. ``--all`` runs every generated mutant (the full score, slow); ``--record`` writes the
scores into the config and raises each floor to its score (a ratchet: a floor never falls by itself).

The hooks' subprocesses (``python -I -S hooks/<shim>.py``) run the mutated code too: mutmut is put on the
copy's ``src/``, which the shims put on ``sys.path``, and their trampoline hits reach mutmut's test selection
(``tools/mutation_hits.py``).

The mod's TypeScript (``hooks/mod/*.ts``), which mutmut cannot mutate, is sampled the same way (``mod_mutants``:
each comparison, ``===``/``!==``, ``&&``/``||`` and integer literal of its code changed one at a time, the same
fixed-seed sample) and each mutant is judged by the mod's own runner, ``claude plugin test`` on the copy; its
score and floor are the config's ``mod`` entry (``--only hooks/mod`` runs it alone).

The hand-written mutants of ``tools/mutants.py`` (each promised number and rule, keyed by syntax tree) run first,
in the same report: their floor is all of them killed. ``--hand`` runs only them (no mutmut needed), ``--mutant
NAME`` some of them, ``--check`` only verifies that each still applies to the code (fast, no test runs).

    python tools/mutation.py [--all] [--record] [--only MODULE ...] [--jobs N]
    python tools/mutation.py --hand [--mutant NAME ...] [--full] | --check
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

if not __package__:  # run as ``python tools/<name>.py``: the checkout's root on the path, for tools.checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.checkout import copy_checkout

from tools import mutants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join("benchmarks", "mutation.json")
# mutmut's statuses that count as a kill: a test failed, hung, crashed the interpreter, or the type check caught it.
KILLS = ("killed", "timeout", "segfault", "caught by type check")
# The file a hook subprocess files its trampoline hits in (tools/mutation_hits.py reads it).
HITS = "MUTMUT_SUBPROCESS_HITS"
# Appended to the copy's ``mutmut/stats.py``: only hook subprocesses import that copy (the pytest process has
# mutmut loaded already), and there a hit is one line in the file, not a set that dies with the process.
STATS_OVERRIDE = f'''

if __import__("os").environ.get("{HITS}"):

    def record_trampoline_hit(name, caller=None):  # tools/mutation.py
        with open(__import__("os").environ["{HITS}"], "a", encoding="utf-8") as hits:
            hits.write(name + "\\n")
'''


class Score(NamedTuple):
    """One module's result: ``killed`` of ``total`` mutants; ``survivors`` names the rest."""

    killed: int
    total: int
    survivors: tuple[str, ...]

    @property
    def ratio(self) -> float:
        return self.killed / self.total if self.total else 1.0


def sample(names: list[str], size: int, seed: str) -> list[str]:
    """``size`` of ``names`` chosen by a seeded hash: the same names give the same sample on every machine."""
    ranked = sorted(names, key=lambda name: hashlib.sha256(f"{seed}:{name}".encode()).hexdigest())
    return sorted(ranked[:size] if size > 0 else ranked)


def failures(scores: dict[str, Score], floors: dict[str, float]) -> list[str]:
    """Why the check fails: a module below its floor, a module without one, a floor of a module not run."""
    problems = [
        f"{module}: {score.killed}/{score.total} killed ({score.ratio:.0%}) is below its floor {floors[module]:.0%}"
        for module, score in sorted(scores.items())
        if module in floors and score.ratio + 1e-9 < floors[module]
    ]
    problems += [f"{module}: no recorded floor (run with --record)" for module in sorted(set(scores) - set(floors))]
    problems += [f"{module}: a floor, but no longer guarded (drop it)" for module in sorted(set(floors) - set(scores))]
    return problems


def raised(floors: dict[str, float], scores: dict[str, Score]) -> dict[str, float]:
    """The ratchet: each module's floor becomes its score (to 4 places, rounded down) where higher; never lower."""
    return {
        module: max(floors.get(module, 0.0), math.floor(score.ratio * 10_000) / 10_000)
        for module, score in sorted(scores.items())
    }


def load_config(root: str) -> dict[str, Any]:
    with open(os.path.join(root, CONFIG), encoding="utf-8") as handle:
        config: dict[str, Any] = json.load(handle)
    return config


def write_config(root: str, config: dict[str, Any]) -> None:
    with open(os.path.join(root, CONFIG), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def prepare_copy(root: str, copy: str, config: dict[str, Any], modules: list[str]) -> None:
    """The checkout in ``copy``, with mutmut's config, the hits plugin and mutmut itself on the copy's src."""
    copy_checkout(root, copy)
    also_copy = sorted(name for name in os.listdir(copy) if name not in ("src", "tests", "pyproject.toml"))
    shutil.copy2(os.path.join(root, "tools", "mutation_hits.py"), os.path.join(copy, "mutation_hits.py"))
    pytest_args = ["-p", "mutation_hits", "--hypothesis-profile=mutation", "-m", "not e2e and not slow"]
    pytest_args += config.get("pytest_args", [])
    for test in config.get("deselect", []):
        pytest_args += ["--deselect", test]
    with open(os.path.join(copy, "pyproject.toml"), "a", encoding="utf-8") as handle:
        handle.write(
            "\n[tool.mutmut]\n"
            'source_paths = ["src"]\n'
            f"only_mutate = {toml_list(modules)}\n"
            f"also_copy = {toml_list([*also_copy, 'mutation_hits.py'])}\n"
            f"pytest_add_cli_args = {toml_list(pytest_args)}\n"
            f"pytest_add_cli_args_test_selection = {toml_list(config['tests'])}\n"
            "use_git_change_detection = false\n"
        )
    # The hook subprocesses import the mutated modules, so mutmut's trampoline must import there too: under
    # ``-I -S`` the copy's src is their one non-stdlib folder (the shims put it on sys.path).
    mutmut = importlib.import_module("mutmut")
    package = os.path.dirname(os.path.abspath(mutmut.__file__ or ""))
    target = os.path.join(copy, "mutants", "src")
    shutil.copytree(package, os.path.join(target, "mutmut"), ignore=shutil.ignore_patterns("__pycache__"))
    site = os.path.dirname(package)
    for name in os.listdir(site):
        if name.startswith("mutmut-") and name.endswith(".dist-info"):
            shutil.copytree(os.path.join(site, name), os.path.join(target, name))
    with open(os.path.join(target, "mutmut", "stats.py"), "a", encoding="utf-8") as handle:
        handle.write(STATS_OVERRIDE)


MOD = "hooks/mod"
# The hand-written mutants' row in the report; every one must be killed.
HAND = "tools/mutants.py"
# Each operator and what it becomes: a bound moved by one, an equality or a conjunction turned round.
MOD_SWAPS = {"<=": "<", ">=": ">", "===": "!==", "!==": "===", "&&": "||", "||": "&&"}
MOD_TOKEN = r"<=|>=|===|!==|&&|\|\||(?<![\w.$])\d+(?![\w.])"
MOD_TIMEOUT = 600


class ModMutant(NamedTuple):
    """One change of the mod's code: ``old`` at ``offset`` in ``path`` becomes ``new``."""

    path: str
    offset: int
    old: str
    new: str
    line: int

    @property
    def name(self) -> str:
        return f"{self.path}:{self.line}:{self.offset}:{self.old}->{self.new}"

    def apply(self, text: str) -> str:
        return text[: self.offset] + self.new + text[self.offset + len(self.old) :]


def mod_mutants(root: str) -> list[ModMutant]:
    """Every mutant of the mod's code: outside comments, each operator of ``MOD_SWAPS`` swapped, each integer
    literal plus one. Pure but for reading the files; the same files give the same list."""
    import re

    found = []
    folder = os.path.join(root, MOD)
    for leaf in sorted(name for name in os.listdir(folder) if name.endswith(".ts")):
        path = f"{MOD}/{leaf}"
        with open(os.path.join(root, path), encoding="utf-8") as handle:
            text = handle.read()
        start = 0
        for number, line in enumerate(text.split("\n"), 1):
            code = line.split("//", 1)[0] if "//" in line and "://" not in line else line
            if not code.lstrip().startswith(("*", "/*", "import ", "export {")):
                for match in re.finditer(MOD_TOKEN, code):
                    old = match.group()
                    new = MOD_SWAPS.get(old, str(int(old) + 1) if old.isdigit() else old)
                    found.append(ModMutant(path, start + match.start(), old, new, number))
            start += len(line) + 1
    return found


def run_mod(root: str, chosen: list[ModMutant]) -> Score:
    """Each of ``chosen`` applied alone to a copy of the checkout, judged by the mod's own tests (a failure or a
    hang kills it); the unmutated copy must pass first."""
    with tempfile.TemporaryDirectory(prefix="session-workflow-mod-mutation-") as base:
        copy = os.path.join(base, "repo")
        copy_checkout(root, copy)

        def passes() -> bool:
            argv = ["bash", os.path.join("tools", "run_claude.sh"), "plugin", "test", "."]
            try:
                done = subprocess.run(argv, cwd=copy, capture_output=True, timeout=MOD_TIMEOUT, check=False)
            except subprocess.TimeoutExpired:
                return False
            return done.returncode == 0

        if not passes():
            raise RuntimeError("the mod's tests fail on the unmutated copy")
        survivors = []
        for mutant in chosen:
            target = os.path.join(copy, mutant.path)
            with open(target, encoding="utf-8") as handle:
                original = handle.read()
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(mutant.apply(original))
            try:
                if passes():
                    survivors.append(mutant.name)
            finally:
                with open(target, "w", encoding="utf-8") as handle:
                    handle.write(original)
    return Score(len(chosen) - len(survivors), len(chosen), tuple(survivors))


def generated_names(copy: str, module: str) -> list[str]:
    """Every mutant mutmut generates for ``module`` (its own generator, on the copy's source)."""
    mutation = importlib.import_module("mutmut.mutation.file_mutation")
    formats = importlib.import_module("mutmut.utils.format_utils")
    with open(os.path.join(copy, module), encoding="utf-8") as handle:
        mutated = mutation.mutate_file_contents(module, handle.read(), None, None)
    return [str(formats.get_mutant_name(Path(module), name)) for name in mutated.mutant_names]


def run_mutmut(copy: str, names: list[str], jobs: int) -> int:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SESSION_WORKFLOW_", "CLAUDE"))}
    env.update(PYTHONDONTWRITEBYTECODE="1", **{HITS: os.path.join(copy, "subprocess-hits")})
    argv = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *names]
    log = os.path.join(copy, "mutmut.log")
    with open(log, "w", encoding="utf-8") as out:
        code = subprocess.run(argv, cwd=copy, env=env, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    if code != 0:
        with open(log, encoding="utf-8", errors="replace") as handle:
            sys.stdout.write(handle.read()[-4000:])
    return code


def read_scores(copy: str, chosen: dict[str, list[str]]) -> dict[str, Score]:
    """Each module's score over its ``chosen`` mutants, from mutmut's results in the copy."""
    status_of = importlib.import_module("mutmut.stats").status_by_exit_code
    scores = {}
    for module, names in chosen.items():
        with open(os.path.join(copy, "mutants", module + ".meta"), encoding="utf-8") as handle:
            codes = json.load(handle)["exit_code_by_key"]
        survivors = tuple(name for name in names if status_of[codes.get(name)] not in KILLS)
        scores[module] = Score(len(names) - len(survivors), len(names), survivors)
    return scores


def table(scores: dict[str, Score], floors: dict[str, float], generated: dict[str, int]) -> str:
    rows = ["| module | generated | killed / run | survived | score | floor |", "|---|---|---|---|---|---|"]
    for module, score in sorted(scores.items()):
        floor = f"{floors[module]:.0%}" if module in floors else "—"
        rows.append(
            f"| `{module}` | {generated[module]} | {score.killed} / {score.total} | {len(score.survivors)}"
            f" | {score.ratio:.0%} | {floor} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--all", action="store_true", help="every generated mutant, not the sample (slow)")
    parser.add_argument("--record", action="store_true", help="write the scores and raise the floors")
    parser.add_argument("--only", nargs="+", metavar="MODULE", help="guarded modules whose path contains one")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (2)")
    parser.add_argument("--keep", metavar="DIR", help="run in DIR (outside the checkout) and leave it there")
    parser.add_argument("--hand", action="store_true", help="only the hand-written mutants (no mutmut needed)")
    parser.add_argument("--mutant", nargs="+", metavar="NAME", help="hand-written mutants whose name contains one")
    parser.add_argument("--full", action="store_true", help="the whole unit suite for each hand-written mutant")
    parser.add_argument("--check", action="store_true", help="only check that each hand-written mutant applies")
    args = parser.parse_args(argv)
    if args.check:
        stale = mutants.stale(ROOT, mutants.MUTANTS)
        print("\n".join(stale) or f"{len(mutants.MUTANTS)} hand-written mutants apply")
        return 1 if stale else 0
    hand = [
        mutant
        for mutant in mutants.MUTANTS
        if (not args.only or any(part in mutant.path for part in args.only))
        and (not args.mutant or any(part in mutant.name for part in args.mutant))
    ]
    alone = args.hand or bool(args.mutant)
    config = load_config(ROOT)
    floors: dict[str, float] = {module: entry["floor"] for module, entry in config["modules"].items()}
    floors[MOD] = config["mod"]["floor"]
    modules = [m for m in config["modules"] if not alone and (not args.only or any(part in m for part in args.only))]
    with_mod = not alone and (not args.only or any(part in MOD for part in args.only))
    started = time.monotonic()
    size = 0 if args.all else int(config["sample"])
    scores: dict[str, Score] = {}
    generated: dict[str, list[str]] = {}
    if hand:
        print(f"{len(hand)} hand-written mutants ({HAND})")
        try:
            survivors = mutants.judge(ROOT, hand, args.jobs, args.full)
        except RuntimeError as error:
            print(error)
            return 2
        scores[HAND] = Score(len(hand) - len(survivors), len(hand), tuple(survivors))
        generated[HAND] = [mutant.name for mutant in mutants.MUTANTS]
        floors[HAND] = 1.0
    if modules:
        with tempfile.TemporaryDirectory(prefix="session-workflow-mutation-") as base:
            copy = os.path.abspath(args.keep) if args.keep else os.path.join(base, "repo")
            prepare_copy(ROOT, copy, config, modules)
            with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                generated.update(zip(modules, pool.map(generated_names, [copy] * len(modules), modules)))
            chosen = {module: sample(generated[module], size, str(config["seed"])) for module in modules}
            names = [name for picked in chosen.values() for name in picked]
            print(f"{len(names)} mutants of {len(modules)} modules ({'all' if args.all else f'{size} a module'})")
            if run_mutmut(copy, names, args.jobs) != 0:
                print("mutmut failed (its log is above): no score")
                return 2
            scores.update(read_scores(copy, chosen))
    if with_mod:
        every = {mutant.name: mutant for mutant in mod_mutants(ROOT)}
        generated[MOD] = list(every)
        picked = sample(list(every), 0 if args.all else int(config["mod"]["size"]), str(config["seed"]))
        print(f"{len(picked)} mutants of the mod ({len(every)} generated)")
        scores[MOD] = run_mod(ROOT, [every[name] for name in picked])
    print(table(scores, floors, {module: len(names) for module, names in generated.items()}))
    for module, score in sorted(scores.items()):
        shown = score.survivors if module in (MOD, HAND) else [name.rpartition(".")[2] for name in score.survivors]
        print(f"survived in {module}: {', '.join(shown) or 'none'}")
    print(f"{time.monotonic() - started:.0f}s")
    if args.record:
        key = "all" if args.all else "sample"
        for module, floor in raised(floors, scores).items():
            if module == HAND:  # not a sample: every one is killed, or the run fails
                continue
            entry = config["mod"] if module == MOD else config["modules"].setdefault(module, {})
            score = scores[module]
            entry[key] = {"killed": score.killed, "run": score.total, "generated": len(generated[module])}
            if not args.all:
                entry["floor"] = floor
        write_config(ROOT, config)
        return 1 if HAND in scores and scores[HAND].survivors else 0
    run = [*modules, *([MOD] if with_mod else []), *([HAND] if hand else [])]
    problems = failures(scores, {m: floors[m] for m in run if m in floors} if args.only or alone else floors)
    for problem in problems:
        print(problem)
    # A full run's scores raise no floor, but a surviving hand-written mutant is a broken promise on any run.
    return 1 if (problems and not args.all) or (HAND in scores and scores[HAND].survivors) else 0


if __name__ == "__main__":
    sys.exit(main())
