"""Never lose the whole block to one bad record: an exception in one part's reading or rendering costs that part.

The fuzz picks which parts fail, where (reading or rendering) and with what (RecursionError, MemoryError, an
OSError, a bug's KeyError...), in a world where every part has something to say; the block must still carry the
header and every other part, and name the failed ones in one closing line. A transcript whose first record is
nested 3,000 deep (a RecursionError in the parser that reads the start directory) costs nothing at all.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_workflow.anchor import part as anchor_part
from session_workflow.hook import compose
from session_workflow.tasks import render as tasks_render
from session_workflow.tasks import store as tasks_store
from session_workflow.transcript import recovery
from session_workflow.transcript.recovery import PROMPTS_HEADER
from session_workflow.workstate import part as workstate_part
from session_workflow.workstate.section import HEADING as WORK_STATE_HEADING

from .sandbox import check_run, run_in_process, sandbox, transcript_jsonl
from .sizes import Size, Tally

# Each part: where it is read, the class that renders it, and a line only it writes.
PARTS = {
    "work state": (workstate_part, workstate_part.WorkStatePart, WORK_STATE_HEADING),
    "anchor": (anchor_part, anchor_part.AnchorPart, "## Control anchor: "),
    "tasks": (tasks_store, tasks_render.TaskListPart, "STRUCTURED TASK LIST"),
    "recovery": (recovery, recovery.RecoveryPart, PROMPTS_HEADER),
}
ERRORS = (RecursionError, MemoryError, OSError, ValueError, KeyError, UnicodeDecodeError, AssertionError)
FAILED_LINE = "session-workflow: could not be read, left out: "


def raising(error: type[BaseException]) -> object:
    def fail(*_args: object, **_kwargs: object) -> object:
        if error is UnicodeDecodeError:
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        raise error("injected")

    return fail


def test_one_failing_part_costs_only_itself(size: Size, tally: Tally) -> None:
    @size.settings(25, 600)
    @given(
        failures=st.dictionaries(
            st.sampled_from(sorted(PARTS)), st.tuples(st.sampled_from(("prepare", "render")), st.sampled_from(ERRORS))
        )
    )
    def prop(failures: dict[str, tuple[str, type[BaseException]]]) -> None:
        tally.add("hypothesis examples")
        with sandbox() as box, pytest.MonkeyPatch.context() as patch:
            box.populate()
            for name, (where, error) in failures.items():
                module, cls, _mark = PARTS[name]
                if where == "prepare":
                    patch.setattr(module, "prepare", raising(error))
                else:
                    patch.setattr(cls, "render", raising(error))
            payload = box.payload(source="compact")
            text = check_run(box, "SessionStart", payload, run_in_process("SessionStart", payload, box.env()))
            assert text is not None, "the whole block was lost"
            assert text.startswith(compose.header("compact"))
            # The recovery part rides along with restored state: when every other part failed to read, it is not
            # even read.
            restored = any(failures.get(name, ("render",))[0] == "render" for name in PARTS if name != "recovery")
            expected_failed = sorted(name for name in failures if name != "recovery" or restored)
            for name, (_module, _cls, mark) in PARTS.items():
                shown = name not in failures and (name != "recovery" or restored)
                assert (mark in text) == shown, (name, failures)
            closing = [line for line in text.split("\n") if line.startswith(FAILED_LINE)]
            if expected_failed:
                named = closing[0][len(FAILED_LINE) : -1].split(", ")
                assert len(closing) == 1 and sorted(named) == expected_failed, closing
            else:
                assert not closing

    prop()


def test_a_deeply_nested_transcript_record_loses_nothing(tally: Tally) -> None:
    """The start directory is read from the transcript's first records; one nested 50,000 deep is skipped (deep enough
    to raise RecursionError in json on every supported Python: 3.13 parses 3,000)."""
    tally.add("hook runs")
    with sandbox() as box:
        box.populate()
        nested = '{"type": "user", "cwd": ' + json.dumps(box.project) + ', "x": ' + "[" * 50_000 + "]" * 50_000 + "}\n"
        box.write_transcript(nested.encode() + transcript_jsonl(box.project, ["port the exporter"]))
        with pytest.raises(RecursionError):
            json.loads(nested)
        payload = box.payload(source="compact")
        text = check_run(box, "SessionStart", payload, run_in_process("SessionStart", payload, box.env()))
        assert text is not None
        for _module, _cls, mark in PARTS.values():
            assert mark in text, mark
        assert FAILED_LINE not in text
