"""The hand-written mutants stay applicable (each keyed by syntax tree, found once where it says), and the keying
survives formatting but fails loudly, naming the mutant, when its code is gone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools import mutants, mutation

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda mutant: mutant.name)
def test_each_mutant_still_applies(mutant: mutants.Mutant) -> None:
    source = (REPO / mutant.path).read_text(encoding="utf-8")
    changed = mutants.mutated(source, mutant)
    assert changed != source
    if mutant.scope:
        assert ast.dump(ast.parse(changed)) != ast.dump(ast.parse(source))
    for test in mutant.tests:  # a file or folder, or one test of a file (``path::test_name``): each still there
        path, _, node = test.partition("::")
        assert (REPO / path).exists(), test
        assert not node or f"def {node}(" in (REPO / path).read_text(encoding="utf-8"), test


def test_the_promised_numbers_and_rules_of_issue_20_are_all_mutated() -> None:
    names = {mutant.name for mutant in mutants.MUTANTS}
    assert len(names) == len(mutants.MUTANTS)
    for promise in ("10,000", "4,096", "600", "in progress", "without an owner", "40 tasks", "160", "300", "1,024"):
        assert any(promise in name for name in names), promise
    for promise in ("8,000", "6 h", "24 h", "older candidates", "no orphans", ".closed.md"):
        assert any(promise in name for name in names), promise


def test_the_check_names_no_stale_mutant() -> None:
    assert mutants.stale(str(REPO), mutants.MUTANTS) == []
    assert mutation.main(["--check"]) == 0


SOURCE = """\
LIMIT = 4096


class Box:
    def fits(self, size: int) -> bool:
        return size <= LIMIT and size >= 0


def other(size: int) -> bool:
    return size <= LIMIT and size >= 0
"""
REFORMATTED = """\
LIMIT = 4_096  # bytes


class Box:
    def fits(self, size: int) -> bool:
        # the bound
        return (size <= LIMIT
                and size >= 0)


def other(size: int) -> bool:
    return size <= LIMIT and size >= 0
"""


def test_a_mutant_is_keyed_by_tree_not_text() -> None:
    bound = mutants.Mutant("bound", "box.py::Box.fits", "size <= LIMIT", "size < LIMIT")
    limit = mutants.Mutant("limit", "box.py::LIMIT", "4096", "4097")
    for source in (SOURCE, REFORMATTED):
        changed = ast.parse(mutants.mutated(source, bound))
        method = next(node for node in ast.walk(changed) if isinstance(node, ast.FunctionDef) and node.name == "fits")
        assert "size < LIMIT" in ast.unparse(method)
        assert "size <= LIMIT" in ast.unparse(changed.body[-1])  # the other function's copy is not touched
        assert ast.unparse(ast.parse(mutants.mutated(source, limit)).body[0]) == "LIMIT = 4097"


def test_a_new_expression_keeps_its_precedence() -> None:
    mutant = mutants.Mutant("or", "box.py::other", "size >= 0", "size >= 0 or True")
    changed = ast.parse(mutants.mutated(SOURCE, mutant))
    assert ast.unparse(changed.body[-1].body[0]) == "return size <= LIMIT and (size >= 0 or True)"  # type: ignore[attr-defined]


def test_statements_may_be_dropped() -> None:
    source = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    mutant = mutants.Mutant("drop", "m.py::f", "if x:\n    return 1", "")
    assert ast.unparse(ast.parse(mutants.mutated(source, mutant))) == "def f(x):\n    return 2"


@pytest.mark.parametrize(
    ("where", "old", "message"),
    [
        ("box.py::Box.gone", "size <= LIMIT", "stale: no definition Box.gone in src/session_workflow/box.py"),
        (
            "box.py::Box.fits",
            "size < LIMIT",
            "stale: `size < LIMIT` is in src/session_workflow/box.py, Box.fits 0 times, not once",
        ),
        (
            "box.py::<module>",
            "size <= LIMIT",
            "stale: `size <= LIMIT` is in src/session_workflow/box.py, <module> 2 times, not once",
        ),
    ],
)
def test_a_mutant_whose_code_is_gone_is_named(where: str, old: str, message: str) -> None:
    with pytest.raises(mutants.Stale) as raised:
        mutants.mutated(SOURCE, mutants.Mutant("stale", where, old, "True"))
    assert str(raised.value) == message


def test_a_python_module_is_never_keyed_by_text() -> None:
    """A mutant written the old way (a path without ``::scope``) fails, naming itself, instead of keying on text."""
    with pytest.raises(mutants.Stale, match=r"^old: src/session_workflow/box.py is Python: key it by tree"):
        mutants.mutated(SOURCE, mutants.Mutant("old", "box.py", "LIMIT = 4096", "LIMIT = 4097"))


def test_a_text_mutant_must_be_there_once(tmp_path: Path) -> None:
    mutant = mutants.Mutant("text", "hooks/mod/x.ts", "a <= 1", "a < 1", runner=mutants.MOD)
    assert mutants.mutated("if (a <= 1) {}", mutant) == "if (a < 1) {}"
    with pytest.raises(mutants.Stale, match=r"^text: its text is in hooks/mod/x.ts 2 times, not once$"):
        mutants.mutated("a <= 1; a <= 1", mutant)


def test_a_mutant_applies_and_restores(tmp_path: Path) -> None:
    mutant = mutants.MUTANTS[0]
    target = tmp_path / mutant.path
    target.parent.mkdir(parents=True)
    target.write_text((REPO / mutant.path).read_text(encoding="utf-8"), encoding="utf-8")
    original = mutants.apply(str(tmp_path), mutant)
    assert target.read_text(encoding="utf-8") != original
    with pytest.raises(mutants.Stale):  # its tree is gone now: the mutant is stale, not killed
        mutants.apply(str(tmp_path), mutant)
    mutants.restore(str(tmp_path), mutant, original)
    assert target.read_text(encoding="utf-8") == original
