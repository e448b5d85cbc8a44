"""The hooks module's added cost per tool call, timed in process by ``claude plugin test``.

Every tool call of a session passes the mod's ``tool.call`` hook (issue 18: the checkpoint nudge and the
status line). This copies the plugin twice into a temporary folder, once as it is and once with a module that
registers no hook (the engine's chain alone: the kit needs a module to load), writes one timing test into
each, and runs both with the pinned CLI (``tools/run_claude.sh``). Each scenario makes ``--calls`` Bash calls
through ``$.tool.call`` after a warm-up, ``--rounds`` times; the figure is the median per-call time, and the
added cost its difference from the no-mod copy. The engine beneath is the test's own hooks (answers from
memory), so what is measured is the mod's work and its ``$`` round trips, not a tool's run.

    python benchmarks/mod_tool_call.py [--calls 400] [--rounds 5]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = (".claude-plugin", "hooks", "types")

#: (key, what the row says, the setup before the timed calls, the timed call's arguments)
SCENARIOS = (
    ("anchor-less", "a session with no anchor of its own (most sessions)", "", "{ tool: 'Bash', command: 'ls' }"),
    (
        "kept-below",
        "this session keeps an anchor, fill below the point",
        "await call({ tool: 'Bash', command: NEW })",
        "{ tool: 'Bash', command: 'ls' }",
    ),
    (
        "kept-above",
        "… fill past the point, reminder already given",
        "world.tokens = 60000; await call({ tool: 'Bash', command: NEW }); world.tokens = 3000;"
        " await call({ tool: 'Bash', command: 'ls' }); world.tokens = 60000",
        "{ tool: 'Bash', command: 'ls' }",
    ),
    (
        "subagent",
        "a subagent's call in a session that keeps an anchor",
        "await call({ tool: 'Bash', command: NEW })",
        "{ tool: 'Bash', command: 'ls', agentId: 'a1' }",
    ),
    (
        "writer",
        "`anchor step` itself (reads the anchor's head, updates the store)",
        "await call({ tool: 'Bash', command: NEW })",
        "{ tool: 'Bash', command: STEP }",
    ),
)

TEMPLATE = """
import { test } from 'claude-code/testing'
const ANCHOR = '/p/.claude/anchors/2026-11-30-run.md'
const NEW = 'session-workflow anchor new --task "Run"'
const STEP = `session-workflow anchor step ${ANCHOR} "done: x; next: y"`
const OUT: Record<string, string> = { [NEW]: `${ANCHOR}\\n`, [STEP]: `step 1 -> 2  ${ANCHOR}\\n` }
const store: Record<string, unknown> = {}
function rig(on: any) {
  const world = { tokens: 3000 }
  on('session.id', () => ({ value: 's' }))
  on('session.root', () => ({ value: '/p' }))
  on('session.cwd', () => ({ value: '/p' }))
  on('clock.now', () => ({ value: Date.now() }))
  on('env.get', () => ({ value: undefined }))
  on('store.get', ($: any, e: any) => ({ value: store[e.key] }))
  on('store.set', ($: any, e: any) => { store[e.key] = e.value; return { value: undefined } })
  on('ui.status', () => ({ value: undefined }))
  on('fs.read', () => ({ value: '---\\nstep: 1\\n---\\n\\n# Run\\n' }))
  on('session.usage', ($: any, e: any) => ({
    value: {
      startedAt: 0,
      rateLimits: [],
      context: {
        window: 1000000,
        tokens: world.tokens,
        ...(e.breakdown
          ? { breakdown: { rawMaxTokens: 100000, isAutoCompactEnabled: true, autoCompactThreshold: 67000 } }
          : {}),
      },
    },
  }))
  on('tool.call', ($: any, e: any) => {
    const stdout = OUT[e.command] ?? ''
    return { result: { stdout, stderr: '', interrupted: false }, text: stdout }
  })
  return world
}
"""

TEST = """
test('__KEY__', { timeoutMs: 600000 }, async ($, on) => {
  const world = rig(on)
  const call = (input: any) => $.tool.call(input)
  __SETUP__
  const times: number[] = []
  for (let round = 0; round < __ROUNDS__; round++) {
    for (let i = 0; i < 20; i++) await call(__ARGS__)
    const start = performance.now()
    for (let i = 0; i < __CALLS__; i++) await call(__ARGS__)
    times.push(((performance.now() - start) * 1000) / __CALLS__)
  }
  times.sort((a, b) => a - b)
  console.log(`BENCH __KEY__ ${times[Math.floor(times.length / 2)]}`)
})
"""


def build(folder: Path, with_mod: bool, calls: int, rounds: int) -> None:
    for part in PARTS:
        shutil.copytree(ROOT / part, folder / part)
    if not with_mod:
        # The kit needs a module to load: one that registers no hook stands for the engine's chain alone.
        (folder / "hooks" / "mod" / "register.ts").write_text("export const register = () => {}\n", encoding="utf-8")
    warm_up = ("warm-up", "", "", "{ tool: 'Bash', command: 'ls' }")
    tests = [
        TEST.replace("__KEY__", key).replace("__SETUP__", setup).replace("__ARGS__", args)
        for key, _what, setup, args in (warm_up, *SCENARIOS)
    ]
    body = (TEMPLATE + "".join(tests)).replace("__CALLS__", str(calls)).replace("__ROUNDS__", str(rounds))
    (folder / "bench.test.ts").write_text(body, encoding="utf-8")


def run(folder: Path) -> dict[str, float]:
    proc = subprocess.run(
        ["bash", str(ROOT / "tools" / "run_claude.sh"), "plugin", "test", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    found = {key: float(value) for key, value in re.findall(r"BENCH (\S+) ([0-9.]+)", proc.stdout + proc.stderr)}
    if proc.returncode != 0 or len(found) != len(SCENARIOS) + 1:
        sys.exit(f"claude plugin test {folder} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        with_mod, without = Path(temp, "with-mod"), Path(temp, "without-mod")
        build(with_mod, True, args.calls, args.rounds)
        build(without, False, args.calls, args.rounds)
        base = run(without)
        timed = run(with_mod)
    print(f"per tool call, median of {args.rounds} rounds of {args.calls} calls (µs)")
    print("| scenario | with the mod | without | added |")
    print("|---|---|---|---|")
    for key, what, _setup, _args in SCENARIOS:
        print(f"| {key}: {what} | {timed[key]:.0f} | {base[key]:.0f} | {timed[key] - base[key]:+.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
