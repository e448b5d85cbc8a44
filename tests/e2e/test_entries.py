"""One name, one entry: ``/session-workflow:compaction-survival`` is the skill itself (measured on 2.1.332).

With a command and a skill of the same name, ``claude plugin details`` listed the name twice, and the command's
"invoke the skill" step made the Skill tool answer with a "Re-invocation of …" notice although the protocol had
never been loaded. Now the slash name loads SKILL.md once, with the arguments appended as ``ARGUMENTS: …``.
"""

from __future__ import annotations

import re

import pytest

from .fake_api import FakeAnthropic, message_texts
from .harness import REPO_ROOT, Claude

pytestmark = pytest.mark.e2e


def test_details_lists_each_skill_once(claude: Claude) -> None:
    done = claude.run(["--plugin-dir", str(REPO_ROOT), "plugin", "details", "session-workflow"]).check()
    found = re.search(r"Skills \((\d+)\)\s+(.+)", done.stdout)
    assert found, done.stdout
    names = [name.strip() for name in found.group(2).split(",")]
    assert names == ["anchor", "compaction-survival"] and found.group(1) == "2"
    assert not (REPO_ROOT / "commands" / "compaction-survival.md").exists()


def test_the_slash_name_loads_the_protocol_once_with_its_arguments(claude: Claude, fake_api: FakeAnthropic) -> None:
    claude.run(["-p", "/session-workflow:compaction-survival Port the parser"]).check()
    texts = message_texts(fake_api.message_requests()[0])
    loaded = [text for text in texts if text.startswith("Base directory for this skill: ")]
    assert len(loaded) == 1 and "# Compaction survival" in loaded[0] and "## Arming it now" in loaded[0]
    assert loaded[0].rstrip().endswith("ARGUMENTS: Port the parser")
    assert not any("Re-invocation" in text for text in texts)
