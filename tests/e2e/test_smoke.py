"""Smoke tests: the repository loads as a plugin in the real CLI and its hooks run."""

from __future__ import annotations

import json

import pytest

from .fake_api import FakeAnthropic, message_texts
from .harness import REPO_ROOT, Claude, describe_requests, iter_debug_hook_runs, new_session_id

pytestmark = pytest.mark.e2e


def test_plugin_validate_strict_directory_profile(claude: Claude) -> None:
    result = claude.run(["plugin", "validate", "--strict", "--profile", "directory", str(REPO_ROOT)], timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "Validation passed" in output, (
        f"claude plugin validate --strict --profile directory exited {result.returncode}:\n{output[-6000:]}"
    )


def test_print_mode_reaches_fake_api(claude: Claude, fake_api: FakeAnthropic) -> None:
    result = claude.run(["-p", "hello"]).check()
    assert result.stdout.strip() == "OK", result.stdout
    bodies = fake_api.message_requests()
    assert bodies, f"no POST /v1/messages reached the fake API:\n{describe_requests(fake_api)}"
    first = bodies[0]
    assert "hello" in message_texts(first, roles=("user",)), describe_requests(fake_api)
    assert first.get("stream") is True
    # the request carries the fake key, and nothing tried a non-loopback host
    recorded = next(r for r in fake_api.requests if r["path"] == "/v1/messages")
    assert recorded["headers"].get("x-api-key") == "sk-ant-fake"
    assert not fake_api.leaks(), [r["path"] for r in fake_api.leaks()]


def test_session_start_hook_runs(claude: Claude, fake_api: FakeAnthropic) -> None:
    """The plugin's SessionStart command hook runs (and exits 0) on startup."""
    sid = new_session_id()
    debug = claude.debug_file()
    result = claude.run(
        ["-p", "hello", "--session-id", sid, "--output-format", "stream-json", "--verbose", "--debug-file", str(debug)]
    ).check()

    # 1. stream-json reports every SessionStart command hook with its exit code.
    responses = [
        e for e in result.events() if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"
    ]
    assert responses, "no SessionStart hook_response event:\n" + "\n".join(
        json.dumps(e)[:300] for e in result.events()[:10]
    )
    assert all(e.get("hook_name") == "SessionStart:startup" for e in responses), responses
    assert all(e.get("exit_code") == 0 for e in responses), responses

    # 2. the debug log names the command: ours, from this checkout.
    runs = list(iter_debug_hook_runs(debug.read_text(encoding="utf-8", errors="replace")))
    hook = f"{REPO_ROOT / 'hooks' / 'hook.py'} SessionStart"
    ours = [r for r in runs if r[0] == "SessionStart:startup" and hook in r[1]]
    assert ours, f"hooks/hook.py SessionStart did not run; hook runs in the debug log: {runs}"
    assert all(status == 0 for _, _, status in ours), ours

    # 3. whatever it printed, it never spilled into <persisted-output>.
    for body in fake_api.message_requests():
        assert "<persisted-output>" not in json.dumps(body), describe_requests(fake_api)
