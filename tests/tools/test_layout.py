"""Each layout check passes on a minimal valid plugin and fails on a fixture broken in one way."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tools import layout

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "plugin"
    (root / ".claude-plugin").mkdir(parents=True)
    shutil.copy(REPO / ".claude-plugin" / "plugin.json", root / ".claude-plugin" / "plugin.json")
    shutil.copy(REPO / ".claude-plugin" / "icon.png", root / ".claude-plugin" / "icon.png")
    (root / "LICENSE").write_text("MIT\n")
    (root / "hooks").mkdir()
    (root / "hooks" / "hook.py").write_text("")
    hooks = {
        "hooks": {
            "SessionStart": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "python3",
                            "args": ["-I", "${CLAUDE_PLUGIN_ROOT}/hooks/hook.py"],
                            "timeout": 10,
                        }
                    ]
                }
            ]
        }
    }
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    (root / "commands").mkdir()
    (root / "commands" / "anchor.md").write_text("---\ndescription: Snapshot the anchor\n---\nSee `references/a.md`.\n")
    (root / "skills" / "demo").mkdir(parents=True)
    (root / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: >\n  Folded text.\n---\n[failure modes](../../references/a.md)\n"
    )
    (root / "references").mkdir()
    (root / "references" / "a.md").write_text("# A\n")
    return root


def _edit_json(path: Path, change: dict[str, object]) -> None:
    data = json.loads(path.read_text())
    data.update(change)
    path.write_text(json.dumps(data))


def test_valid_fixture_passes(plugin: Path) -> None:
    assert layout.check(str(plugin)) == []
    assert layout.main([str(plugin)]) == 0


def test_manifest_missing_field_fails(plugin: Path) -> None:
    path = plugin / ".claude-plugin" / "plugin.json"
    data = json.loads(path.read_text())
    del data["repository"]
    path.write_text(json.dumps(data))
    assert layout.check_manifest(str(plugin)) == ["plugin.json: missing repository"]


def test_manifest_that_does_not_parse_fails(plugin: Path) -> None:
    (plugin / ".claude-plugin" / "plugin.json").write_text("{")
    assert layout.check_manifest(str(plugin))[0].startswith("plugin.json: cannot parse")


@pytest.mark.parametrize("network", [{"hosts": ["example.com"]}, {"hosts": None}, ["example.com"]])
def test_network_hosts_must_be_empty(plugin: Path, network: object) -> None:
    _edit_json(plugin / ".claude-plugin" / "plugin.json", {"network": network})
    assert layout.check_manifest(str(plugin)) == ['plugin.json: network must be {"hosts": []}']


def test_missing_license_file_fails(plugin: Path) -> None:
    (plugin / "LICENSE").unlink()
    assert layout.check_manifest(str(plugin)) == ["LICENSE: missing"]


def test_hook_arg_that_does_not_exist_fails(plugin: Path) -> None:
    (plugin / "hooks" / "hook.py").unlink()
    assert layout.check_hooks(str(plugin)) == ["hooks.json: ${CLAUDE_PLUGIN_ROOT}/hooks/hook.py does not exist"]


def test_unquoted_plugin_root_in_shell_form_fails(plugin: Path) -> None:
    spec = json.loads((plugin / "hooks" / "hooks.json").read_text())
    entry = spec["hooks"]["SessionStart"][0]["hooks"][0]
    del entry["args"]
    entry["command"] = "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/hook.py"
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(spec))
    assert layout.check_hooks(str(plugin)) == [
        "hooks.json: unquoted ${CLAUDE_PLUGIN_ROOT} in shell-form command 'python3 ${CLAUDE_PLUGIN_ROOT}/hooks/hook.py'"
    ]
    entry["command"] = 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/hook.py"'
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(spec))
    assert layout.check_hooks(str(plugin)) == []


def test_hook_without_timeout_fails(plugin: Path) -> None:
    spec = json.loads((plugin / "hooks" / "hooks.json").read_text())
    del spec["hooks"]["SessionStart"][0]["hooks"][0]["timeout"]
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(spec))
    assert layout.check_hooks(str(plugin)) == ["hooks.json: 'python3' has no timeout"]


def test_missing_mod_module_fails(plugin: Path) -> None:
    _edit_json(plugin / "hooks" / "hooks.json", {"modules": ["./mod/register.ts"]})
    assert layout.check_hooks(str(plugin)) == ["hooks.json: module ./mod/register.ts does not exist"]


def test_command_without_description_fails(plugin: Path) -> None:
    (plugin / "commands" / "anchor.md").write_text("---\nargument-hint: x\n---\nbody\n")
    assert layout.check_docs(str(plugin)) == ["commands/anchor.md: frontmatter has no description"]


def test_command_with_broken_frontmatter_fails(plugin: Path) -> None:
    (plugin / "commands" / "anchor.md").write_text("---\ndescription: [unclosed\n---\n")
    assert layout.check_docs(str(plugin))[0].startswith("commands/anchor.md: frontmatter does not parse")


def test_skill_name_must_match_folder(plugin: Path) -> None:
    (plugin / "skills" / "demo" / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\n")
    assert layout.check_docs(str(plugin)) == ["skills/demo/SKILL.md: name 'other' is not the folder name"]


def test_skill_without_frontmatter_fails(plugin: Path) -> None:
    (plugin / "skills" / "demo" / "SKILL.md").write_text("# no frontmatter\n")
    assert layout.check_docs(str(plugin)) == ["skills/demo/SKILL.md: no frontmatter"]


def test_dead_link_and_dead_code_path_fail(plugin: Path) -> None:
    (plugin / "references" / "a.md").unlink()
    assert layout.check_links(str(plugin)) == [
        "commands/anchor.md: names references/a.md, which does not exist",
        os.path.join("skills", "demo", "SKILL.md") + ": names ../../references/a.md, which does not exist",
    ]


def test_web_links_are_not_checked(plugin: Path) -> None:
    (plugin / "README.md").write_text("[site](https://example.com/x) [mail](mailto:a@b) [here](#usage)\n")
    assert layout.check_links(str(plugin)) == []


def test_icon_not_square_fails(plugin: Path) -> None:
    icon = plugin / ".claude-plugin" / "icon.png"
    data = bytearray(icon.read_bytes())
    data[20:24] = (300).to_bytes(4, "big")
    icon.write_bytes(bytes(data))
    assert layout.check_icon(str(plugin)) == [
        "icon: ./.claude-plugin/icon.png is 512x300; it must be square, 512-2048 px"
    ]


def test_icon_not_png_fails(plugin: Path) -> None:
    (plugin / ".claude-plugin" / "icon.png").write_bytes(b"GIF89a")
    assert layout.check_icon(str(plugin)) == ["icon: ./.claude-plugin/icon.png is not a PNG"]
