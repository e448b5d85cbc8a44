"""The benchmark code on a tiny workload, so ``tox -e bench`` cannot rot between the runs that matter.

No timing is asserted: the end-to-end run checks that every scenario ran and that each hook printed what it
should; the rest pins the pure pieces (hooks.json parsing, statistics, verdicts, the table) and the workload
shapes the scenarios rely on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import report, run, spawn, workload  # noqa: E402
from benchmarks.report import Measured  # noqa: E402

GOLDEN = Path(__file__).parent / "golden" / "benchmarks"


def test_tiny_run_checks_every_scenario_and_writes_json(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    argv = [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--tiny", "--runs", "2", "--warmup", "0"]
    argv += ["--workdir", str(tmp_path / "workload"), "--json", str(results)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "floor J" in done.stdout and "targets:" in done.stdout
    document = json.loads(results.read_text(encoding="utf-8"))
    scenarios = {item["key"]: item for item in document["scenarios"]}
    expected = {"floor-p", "floor-j", "ss-anchorless", "ss-compact", "ss-scale", "ups-unchanged", "ups-no-state"}
    expected |= {"ss-compact-32KB", "ss-scale-8KB"}
    expected |= {f"growth-{dimension}-{count}" for dimension in workload.GROWTH_DIMENSIONS for count in (1, 3, 30)}
    expected |= {"writer-state-step", "writer-anchor-step", "writer-floor", "writer-imports-filelock", "entry-alone"}
    assert expected <= set(scenarios)
    for key, item in scenarios.items():
        assert item["check"] == "ok", (key, item["check"])
        assert len(item["wall_ms"]) == len(item["rss_kib"]) == len(item["paired_j"]) == 2, key
    assert scenarios["floor-j"]["paired_j"] == [1.0, 1.0]
    assert scenarios["ss-compact"]["output"].endswith("UTF-16 units")
    assert scenarios["ss-anchorless"]["output"] == scenarios["ups-unchanged"]["output"] == "silent"
    assert scenarios["entry-alone"]["output"] == "silent"
    assert {verdict["result"] for verdict in document["verdicts"]} <= {"pass", "MISS"}
    flat = {verdict["name"] for verdict in document["verdicts"] if " flat: " in verdict["name"]}
    assert flat == {f"{dimension} flat: 1 → 30 adds ≤ 0.20 J" for dimension in workload.GROWTH_DIMENSIONS}
    # Which python3 each row ran, as the launcher chose it: this interpreter, its folder put first on PATH.
    real = os.path.realpath(sys.executable)
    ran = document["interpreters"]["ss-compact"].split(" (= ")[0]
    assert document["setup"] == "binary" and os.path.realpath(ran) == real
    assert "setup binary: --python's folder (or a link to it) first on PATH; hooks and writers ran " in done.stdout


def test_each_setup_leads_the_launcher_to_its_python3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A version manager's shims first on PATH: the launcher still runs a real interpreter."""
    load, _reused = workload.ensure(str(tmp_path / "workload"), workload.TINY, False)
    root = tmp_path / "pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "shims" / "python3").write_text("#!/bin/sh\nexit 9\n")
    (root / "shims" / "python3").chmod(0o755)
    (root / "versions" / "9.1" / "bin").mkdir(parents=True)
    (root / "versions" / "9.1" / "bin" / "python3").symlink_to(os.path.realpath(sys.executable))
    (root / "version").write_text("9.1\n")
    monkeypatch.setenv("PYENV_ROOT", str(root))
    base = {"PATH": "/usr/bin:/bin"}
    shim = run.set_up(dict(base), load, sys.executable, "shim")
    assert shim["PATH"].startswith(f"{root}/shims:")
    assert run.launched(shim, load.root) == f"{root}/versions/9.1/bin/python3 (= {os.path.realpath(sys.executable)})"
    nobc = run.set_up(dict(base), load, sys.executable, "nobc")
    first = run.own_folder(sys.executable) or run.interpreter_dir(load, sys.executable)
    assert nobc["PYTHONDONTWRITEBYTECODE"] == "1" and nobc["PATH"].startswith(first + os.pathsep)


# --- hooks.json --------------------------------------------------------------------------------------------

SPEC = {
    "hooks": {
        "SessionStart": [
            {"matcher": "startup|resume", "hooks": [{"type": "command", "command": "python3", "args": ["-I", "a"]}]},
            {
                "matcher": "compact",
                "hooks": [
                    {"type": "command", "command": "python3", "args": ["-I", "-S", "${CLAUDE_PLUGIN_ROOT}/x.py"]}
                ],
            },
        ],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hook.sh --fast"}]}],
    }
}


def test_hook_argvs_follow_matchers_and_substitute_root_and_python() -> None:
    assert run.hook_argvs(SPEC, "SessionStart", "compact", "/py") == [["/py", "-I", "-S", f"{run.ROOT}/x.py"]]
    assert run.hook_argvs(SPEC, "SessionStart", "startup", "/py") == [["/py", "-I", "a"]]
    assert run.hook_argvs(SPEC, "SessionStart", "clear", "/py") == []
    assert run.hook_argvs(SPEC, "UserPromptSubmit", None, "/py") == [["/bin/sh", "-c", f"{run.ROOT}/hook.sh --fast"]]
    assert run.hook_argvs({}, "PreCompact", None, "/py") == []


def test_a_hook_whose_script_is_missing_is_not_applicable(tmp_path: Path) -> None:
    load = workload.Workload(str(tmp_path))
    session = workload.Session("/p", "/c", "sid", "/c/projects/-p/sid.jsonl")
    row = ("k", "label", session, "SessionStart", "compact", (), None)
    scenario = run.hook_scenario(SPEC, "/py", load, row)
    assert scenario.argv is None and scenario.reason == "x.py missing"
    assert json.loads(scenario.payload)["source"] == "compact" and scenario.env["CLAUDE_CONFIG_DIR"] == "/c"
    absent = run.hook_scenario(SPEC, "/py", load, ("k", "label", session, "PreCompact", None, (), None))
    assert absent.argv is None and absent.reason == "no PreCompact hook in hooks.json"
    prompt = run.hook_scenario(SPEC, "/py", load, ("k", "label", session, "UserPromptSubmit", None, (), None))
    assert prompt.argv == ["/bin/sh", "-c", f"{run.ROOT}/hook.sh --fast"]
    assert json.loads(prompt.payload)["hook_event_name"] == "UserPromptSubmit"
    first = prompt.env["PATH"].split(os.pathsep)[0]  # what hooks/python.sh runs: the interpreter under test
    assert os.readlink(os.path.join(first, "python3")) == "/py"


def test_the_real_hooks_json_names_existing_scripts() -> None:
    with open(run.HOOKS_JSON, encoding="utf-8") as handle:
        spec = json.load(handle)
    for event, source in (("SessionStart", "compact"), ("SessionStart", "startup"), ("UserPromptSubmit", None)):
        argvs = run.hook_argvs(spec, event, source, sys.executable)
        assert argvs and run.missing_script(argvs[0]) is None, event


def test_context_of_reads_only_a_hook_answer() -> None:
    answer = json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"}})
    assert run.context_of(answer.encode()) == "hi"
    assert run.context_of(b"") is None
    assert run.context_of(b'{"hookSpecificOutput": {}}') is None


# --- the launcher ------------------------------------------------------------------------------------------


def test_launcher_reports_exit_code_and_a_peak_per_child(tmp_path: Path) -> None:
    stdin = tmp_path / "in"
    stdin.write_bytes(b"payload")
    out, err = str(tmp_path / "out"), str(tmp_path / "err")
    script = "import sys; data = sys.stdin.read(); big = bytearray(64 << 20); print(data); raise SystemExit(3)"
    small = [sys.executable, "-I", "-S", "-c", "pass"]
    jobs: list[tuple[object, ...]] = [
        ([sys.executable, "-I", "-S", "-c", script], {}, str(tmp_path), str(stdin), out, err),
        (small, {}, str(tmp_path), str(stdin), out, err),
    ]
    (wall, cpu, big_rss, code), (_wall, _cpu, small_rss, small_code) = run.launch(sys.executable, jobs)
    assert code == 3 and small_code == 0
    assert wall > 0 and cpu >= 0
    assert big_rss - small_rss > 60 << 10  # the 64 MB child's peak is its own, not carried into the next child
    assert Path(out).read_text(encoding="utf-8") == ""  # the last job's stdout replaced the first one's
    assert spawn.RSS_DIVISOR in (1, 1024)


# --- statistics, verdicts, the table -----------------------------------------------------------------------


def test_quartiles_slope_and_sizes() -> None:
    assert report.quartiles([5.0]) == (5.0, 5.0, 5.0)
    assert report.quartiles([1.0, 2.0, 3.0, 4.0, 5.0]) == (2.0, 3.0, 4.0)
    assert report.slope([(0.0, 1.0), (10.0, 21.0), (20.0, 41.0)]) == 2.0
    assert report.slope([(3.0, 1.0), (3.0, 5.0)]) == 0.0
    assert [report.human_size(n) for n in (2 << 20, 200 << 20, 8 << 10, 1536, 12)] == [
        "2 MB",
        "200 MB",
        "8 KB",
        "1.5 KB",
        "12 B",
    ]
    with pytest.raises(ValueError):
        report.quartiles([])


def measured(
    key: str,
    walls: list[float],
    floor: list[float],
    rss: int = 10240,
    *,
    target: float | None = None,
    growth: tuple[str, float] | None = None,
    output: str = "",
) -> Measured:
    result = Measured(key, key, target=target, growth=growth, output=output, hook=not key.startswith("floor"))
    result.wall_ms = walls
    result.cpu_ms = [wall / 2 for wall in walls]
    result.rss_kib = [rss] * len(walls)
    result.exit_codes = [0] * len(walls)
    result.paired_p = [wall / 10.0 for wall in walls]
    result.paired_j = [wall / base for wall, base in zip(walls, floor)]
    return result


def synthetic_results() -> list[Measured]:
    floor = [20.0, 22.0, 21.0]
    return [
        measured("floor-p", [10.0, 10.0, 10.0], floor, rss=8192),
        measured("floor-j", floor, floor),
        measured("ss-anchorless", [21.0, 23.0, 22.0], floor, target=1.10, output="silent"),
        measured("ss-compact", [40.0, 44.0, 42.0], floor, rss=30000, target=1.40, growth=("compact", 2 << 20)),
        measured("ss-compact-20MB", [50.0, 55.0, 52.5], floor, growth=("compact", 20 << 20)),
        measured("ss-compact-200MB", [50.0, 55.0, 52.5], floor, growth=("compact", 200 << 20)),
        Measured("ups-unchanged", "ups-unchanged", target=1.10, check="n/a: hooks/hook.py missing", hook=True),
    ]


def test_verdicts_use_the_paired_median_and_name_what_was_not_measured() -> None:
    found = {verdict.name: (verdict.result, verdict.value) for verdict in report.verdicts(synthetic_results(), 0)}
    result, value = found["ss-anchorless: median ≤ 1.10 J"]
    assert result == "pass" and value == pytest.approx(22 / 21)
    assert found["ss-compact: median ≤ 1.40 J"] == ("MISS", 2.0)
    assert found["ups-unchanged: median ≤ 1.10 J"] == ("n/a", None)
    assert found["ss-compact: peak RSS ≤ 2× J's"][0] == "MISS"
    assert found["ss-anchorless: peak RSS ≤ 2× J's"] == ("pass", 1.0)
    assert found["compact flat in transcript size: 20 MB → 200 MB adds ≤ 0.10 J or ≤ 10%"] == ("pass", 0.0)


def test_a_reader_that_grows_with_the_transcript_is_not_flat() -> None:
    floor = [20.0, 20.0, 20.0]
    results = [
        measured("floor-p", [10.0] * 3, floor),
        measured("floor-j", floor, floor),
        measured("scale-20", [100.0] * 3, floor, growth=("scale", 20 << 20)),
        measured("scale-200", [125.0] * 3, floor, growth=("scale", 200 << 20)),
    ]
    (verdict,) = [v for v in report.verdicts(results, 0) if "flat" in v.name]
    assert (verdict.result, verdict.value) == ("MISS", 1.25)
    results[-1].paired_j = [5.4] * 3  # +0.4 J, but within 10% of a 5 J case: noise, not growth
    (verdict,) = [v for v in report.verdicts(results, 0) if "flat" in v.name]
    assert verdict.result == "pass"


def test_a_count_dimension_is_judged_from_a_hundredth_of_its_largest_count() -> None:
    floor = [20.0, 20.0, 20.0]
    results = [
        measured("floor-p", [10.0] * 3, floor),
        measured("floor-j", floor, floor),
        measured("s-1", [20.0] * 3, floor, growth=("siblings", 1)),
        measured("s-1000", [22.0] * 3, floor, growth=("siblings", 1000)),
        measured("s-100000", [27.0] * 3, floor, growth=("siblings", 100_000)),
    ]
    (verdict,) = [v for v in report.verdicts(results, 0) if "flat" in v.name]
    assert verdict.name == "siblings flat: 1,000 → 100,000 adds ≤ 0.20 J"
    assert verdict.result == "MISS" and verdict.value == pytest.approx(0.25)
    results[-1].paired_j = [1.2] * 3
    (verdict,) = [v for v in report.verdicts(results, 0) if "flat" in v.name]
    assert verdict.result == "pass" and verdict.value == pytest.approx(0.1)


def test_table_and_growth_lines_golden() -> None:
    lines = report.table_lines(synthetic_results(), 5000) + report.growth_lines(synthetic_results())
    assert "\n".join(lines) + "\n" == GOLDEN.joinpath("table.txt").read_text(encoding="utf-8")


# --- the workload ------------------------------------------------------------------------------------------


def test_anchor_text_has_the_anchor_v1_shape_and_sizes() -> None:
    text = workload.anchor_text("Title", 8 << 10, 40 << 10)
    head, tail = text.split("<!-- anchor:tail -->\n", 1)
    assert head.startswith("---\nformat: anchor/v1\n") and "\n# Title\n" in head
    for heading in ("## Mission", "## Cursor\n- Step 24: ", "## Resume steps", "## Invariants", "## Plan pointer"):
        assert heading in head
    assert 8 << 10 <= len(head.encode()) < 9 << 10
    assert 40 << 10 <= len(tail.encode()) < 41 << 10 and "## Decisions log" in tail
    assert "**Status:** done" in workload.anchor_text("T", 1024, 1024, status="done")
    assert "\nparked: why\n---\n" in workload.anchor_text("T", 1024, 1024, parked="why")


def test_task_store_has_claude_code_files_and_the_damage_asked_for(tmp_path: Path) -> None:
    folder = tmp_path / "list"
    workload.write_task_store(str(folder), workload.mixed_statuses(40, 12), malformed_every=13)
    # 2.1.332 writes .highwatermark only on a delete, a reset or a skipped id: a list only created into has none
    assert (folder / ".lock").exists() and not (folder / ".highwatermark").exists()
    good = bad = 0
    for task_id in range(1, 41):
        try:
            document = json.loads((folder / f"{task_id}.json").read_text(encoding="utf-8"))
        except ValueError:
            bad += 1
            continue
        shaped = document.get("id") == str(task_id) and "subject" in document and document["status"] != "blocked"
        good, bad = (good + 1, bad) if shaped else (good, bad + 1)
    assert (good, bad) == (37, 3)
    assert workload.mixed_statuses(5, 2) == ["completed", "completed", "completed", "in_progress", "pending"]


def test_transcript_is_claude_code_jsonl_of_about_the_size_asked(tmp_path: Path) -> None:
    path = str(tmp_path / "t.jsonl")
    workload.write_transcript(path, 600 << 10, "/p/proj", "/p/config", "sid-1")
    size = os.path.getsize(path)
    assert 600 << 10 <= size < (600 << 10) + (300 << 10)
    with open(path, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    assert next(record["cwd"] for record in records if "cwd" in record) == "/p/proj"
    assert {record["sessionId"] for record in records if "sessionId" in record} == {"sid-1"}
    assert records[-1]["type"] == "cost-state" and any(r.get("type") == "api-request-blob" for r in records)


def test_tiny_workload_is_generated_once_and_reused() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = os.path.join(folder, "w")
        first, reused = workload.ensure(root, workload.TINY)
        assert not reused and sorted(first.compact) == [8 << 10, 32 << 10, 128 << 10]
        marker = os.path.join(root, "marker")
        Path(marker).touch()
        again, reused = workload.ensure(root, workload.TINY)
        assert reused and os.path.exists(marker) and again.sessions() == first.sessions()
        scale = again.scale[max(again.scale)]
        siblings = os.listdir(os.path.dirname(scale.transcript))
        assert len(siblings) == workload.TINY.scale_siblings + 1
        anchors = os.path.join(scale.project, ".claude", "anchors")
        newest = max(os.listdir(anchors), key=lambda name: os.stat(os.path.join(anchors, name)).st_mtime)
        assert newest == workload.anchor_name(0)
