"""The mutation list stays applicable: each mutant's text is in the code once, so ``tox -e mutants`` can judge it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import mutants

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda mutant: mutant.name)
def test_each_mutant_changes_code_that_is_there_once(mutant: mutants.Mutant) -> None:
    source = (REPO / mutant.path).read_text(encoding="utf-8")
    assert source.count(mutant.old) == 1, f"{mutant.name}: update tools/mutants.py, the code moved"
    assert mutant.new != mutant.old
    assert all((REPO / test).exists() for test in mutant.tests)


def test_the_promised_numbers_and_rules_of_issue_20_are_all_mutated() -> None:
    names = {mutant.name for mutant in mutants.MUTANTS}
    assert len(names) == len(mutants.MUTANTS)
    for promise in ("10,000", "4,096", "600", "in progress", "without an owner", "40 tasks", "160", "300", "1,024"):
        assert any(promise in name for name in names), promise
    for promise in ("8,000", "6 h", "24 h", "older candidates", "no orphans", ".closed.md"):
        assert any(promise in name for name in names), promise


def test_a_mutant_applies_and_restores(tmp_path: Path) -> None:
    mutant = mutants.MUTANTS[0]
    target = tmp_path / mutant.path
    target.parent.mkdir(parents=True)
    target.write_text((REPO / mutant.path).read_text(encoding="utf-8"), encoding="utf-8")
    original = mutants.apply(str(tmp_path), mutant)
    assert original is not None and mutant.new in target.read_text(encoding="utf-8")
    assert mutants.apply(str(tmp_path), mutant) is None  # its text is gone now: the mutant is stale, not killed
    mutants.restore(str(tmp_path), mutant, original)
    assert target.read_text(encoding="utf-8") == original
