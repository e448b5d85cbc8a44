"""The generated-mutant check's own logic: the fixed sample, the floors and the ratchet, and its config."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tools import mutation

REPO = Path(__file__).resolve().parents[2]


def test_a_module_below_its_floor_fails_and_one_at_it_passes() -> None:
    scores = {"a.py": mutation.Score(7, 10, ("m1", "m2", "m3")), "b.py": mutation.Score(8, 10, ("m4", "m5"))}
    assert mutation.failures(scores, {"a.py": 0.7, "b.py": 0.8}) == []
    problems = mutation.failures(scores, {"a.py": 0.71, "b.py": 0.8})
    assert problems == ["a.py: 7/10 killed (70%) is below its floor 71%"]


def test_a_module_without_a_floor_and_a_floor_without_a_module_both_fail() -> None:
    problems = mutation.failures({"new.py": mutation.Score(10, 10, ())}, {"gone.py": 0.5})
    assert problems == [
        "new.py: no recorded floor (run with --record)",
        "gone.py: a floor, but no longer guarded (drop it)",
    ]


def test_the_ratchet_raises_a_floor_to_the_score_and_never_lowers_it() -> None:
    floors = {"a.py": 0.5, "b.py": 0.9}
    score = mutation.Score
    scores = {"a.py": score(3, 4, ("m",)), "b.py": score(1, 2, ("m",)), "c.py": score(2, 3, ("m",))}
    assert mutation.raised(floors, scores) == {"a.py": 0.75, "b.py": 0.9, "c.py": 0.6666}
    below = mutation.failures(scores, mutation.raised(floors, scores))
    assert below == ["b.py: 1/2 killed (50%) is below its floor 90%"]


def test_an_empty_module_scores_full() -> None:
    assert mutation.Score(0, 0, ()).ratio == 1.0


def test_the_sample_is_fixed_by_its_seed_and_not_by_the_order_of_the_names() -> None:
    names = [f"pkg.mod.x_f__mutmut_{n}" for n in range(1, 101)]
    picked = mutation.sample(names, 10, "seed")
    assert len(picked) == 10 == len(set(picked)) and set(picked) <= set(names)
    assert mutation.sample(list(reversed(names)), 10, "seed") == picked
    assert mutation.sample(names, 10, "another seed") != picked
    assert mutation.sample(names, 0, "seed") == sorted(names)  # 0: every generated mutant
    assert mutation.sample(names[:3], 10, "seed") == sorted(names[:3])


def test_the_config_names_modules_and_tests_that_exist() -> None:
    config = json.loads((REPO / mutation.CONFIG).read_text(encoding="utf-8"))
    assert config["modules"], "no guarded module"
    for module, entry in config["modules"].items():
        assert (REPO / module).is_file(), f"{module}: moved? update {mutation.CONFIG}"
        assert 0.0 <= entry["floor"] <= 1.0
    for test in config["tests"]:
        assert (REPO / test).exists(), test
    for node in config["deselect"]:
        path, _, name = node.partition("::")
        assert f"def {name.partition('[')[0]}(" in (REPO / path).read_text(encoding="utf-8"), node


def test_the_copy_gets_mutmut_config_and_the_checkout_stays_clean(tmp_path: Path) -> None:
    pytest.importorskip("mutmut")
    config = json.loads((REPO / mutation.CONFIG).read_text(encoding="utf-8"))
    before = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=REPO, capture_output=True, text=True)
    copy = tmp_path / "copy"
    mutation.prepare_copy(str(REPO), str(copy), config, list(config["modules"]))
    settings = (copy / "pyproject.toml").read_text(encoding="utf-8")
    assert "[tool.mutmut]" in settings and "[tool.mutmut]" not in (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert (copy / "mutants" / "src" / "mutmut" / "mutation" / "trampoline.py").is_file()
    assert mutation.HITS in (copy / "mutants" / "src" / "mutmut" / "stats.py").read_text(encoding="utf-8")
    names = mutation.generated_names(str(copy), "src/session_workflow/anchor/frame.py")
    assert names and all(name.startswith("session_workflow.anchor.frame.x") for name in names)
    after = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=REPO, capture_output=True, text=True)
    assert after.stdout == before.stdout


def test_the_mods_mutants_swap_each_operator_and_number_outside_comments(tmp_path: Path) -> None:
    folder = tmp_path / "hooks" / "mod"
    folder.mkdir(parents=True)
    (folder / "a.ts").write_text(
        "// a <= b && c 7\n"
        "import { x } from './x'\n"
        "const y = a <= 300 && b !== c || d === 2 // e >= 9\n"
        "const url = 'https://x.example/' + v3 + e.x1\n",
        encoding="utf-8",
    )
    (folder / "b.md").write_text("a <= b\n", encoding="utf-8")
    found = mutation.mod_mutants(str(tmp_path))
    assert [(m.old, m.new, m.line) for m in found] == [
        ("<=", "<", 3),
        ("300", "301", 3),
        ("&&", "||", 3),
        ("!==", "===", 3),
        ("||", "&&", 3),
        ("===", "!==", 3),
        ("2", "3", 3),
    ]
    text = (folder / "a.ts").read_text(encoding="utf-8")
    assert found[1].apply(text).splitlines()[2] == "const y = a <= 301 && b !== c || d === 2 // e >= 9"
    assert len({m.name for m in found}) == len(found)
    names = [m.name for m in found]
    assert mutation.sample(names, 3, "seed") == mutation.sample(list(reversed(names)), 3, "seed")


def test_the_mods_sample_is_configured() -> None:
    config = json.loads((REPO / mutation.CONFIG).read_text(encoding="utf-8"))
    assert config["mod"]["size"] > 0 and 0.0 <= config["mod"]["floor"] <= 1.0
    assert mutation.mod_mutants(str(REPO)), "no mutant of the mod"
