"""The resumption benchmark: does the model's first action after a compaction go right?

``python3 benchmarks/resumption/run.py --model {1.5b,0.5b,stub} [--scenarios FILE] [--arms h0,h1,h2] [--out DIR]``

Each scenario is built for real (project, anchor, tasks, transcript), the plugin's SessionStart hook renders the
arm's block, the post-compaction request goes to the model, and the reply's first action is graded. The run
writes ``results.json``, ``table.md`` and ``replies.jsonl`` (every reply, for the grader's fixtures) into DIR.
See benchmarks/resumption/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.resumption import grade, model, scenario, world  # noqa: E402

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "scenarios.json")
DEFAULT_OUT = os.path.join(ROOT, "benchmarks", "results", "resumption")
STOPS = ('\n{"name"', "</tool_call>")
ARM_TEXT = {
    "h0": "none (Claude Code's summary alone)",
    "h1": "the plugin's block without the run record",
    "h2": "the full block (with the run record)",
}


class StubBackend(model.Backend):
    """A deterministic stand-in for CI: it proposes the command the block's cursor names as next (``next: ...
    `cmd` ``), else it repeats the kept tool call; it writes its answer in each of the forms the parser reads, in
    turn, so the smoke test crosses the parser too."""

    name = "stub"

    def __init__(self) -> None:
        self.count = 0

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        last = str(messages[-1]["content"]) if messages[-1]["role"] == "user" else ""
        kept_call = next(m for m in reversed(messages) if m.get("tool_calls"))["tool_calls"][0]["function"]
        kept, name = json.loads(kept_call["arguments"]), str(kept_call["name"])
        arguments: dict[str, Any] = kept
        marker = last.find("next: ")
        if marker >= 0 and "`" in last[marker : marker + 200]:
            start = last.index("`", marker) + 1
            named = last[start : last.index("`", start)]
            edit = last[start - 6 : start - 1] == "edit "
            name, arguments = ("Edit", {"file_path": named}) if edit else ("Bash", {"command": named})
        form = self.count % 4
        self.count += 1
        call = {"name": name, "arguments": arguments}
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if form == 0:
            message["tool_calls"] = [{"type": "function", "function": {**call, "arguments": json.dumps(arguments)}}]
        elif form == 1:
            message["content"] = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
        elif form == 2:
            message["content"] = f"Next I will run this.\n{json.dumps(call)}"
        else:
            shown = arguments.get("command") or f"sed -i 's/a/b/' {arguments.get('file_path', '')}"
            message["content"] = f"```bash\n{shown}\n```"
        usage = {"prompt_tokens": sum(len(str(m.get("content", ""))) for m in messages) // 4, "completion_tokens": 1}
        return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage}


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "load_at_start": [round(value, 2) for value in load],
    }


def summarise(rows: list[dict[str, Any]], arms: list[str]) -> dict[str, Any]:
    """Per arm: n, the count and share (with its 95 % Wilson interval) of each outcome, and prompt sizes."""
    summary: dict[str, Any] = {}
    for arm in arms:
        mine = [row for row in rows if row["arm"] == arm]
        n = len(mine)
        counts = {outcome: sum(1 for row in mine if row["outcome"] == outcome) for outcome in grade.OUTCOMES}
        tokens = sorted(int(row["prompt_tokens"]) for row in mine)
        blocks = sorted(int(row["block_chars"]) for row in mine)
        summary[arm] = {
            "n": n,
            "counts": counts,
            "shares": {
                outcome: {"share": count / n if n else 0.0, "wilson95": list(grade.wilson(count, n))}
                for outcome, count in counts.items()
            },
            "prompt_tokens": {"median": _median(tokens), "min": tokens[0] if tokens else 0, "max": _max(tokens)},
            "block_chars": {"median": _median(blocks), "max": _max(blocks)},
        }
    return summary


def _median(values: list[int]) -> float:
    if not values:
        return 0.0
    middle = len(values) // 2
    return float(values[middle]) if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _max(values: list[int]) -> int:
    return values[-1] if values else 0


def table(summary: dict[str, Any]) -> str:
    """The Markdown table: one row per arm, each outcome as count and share [95 % Wilson interval]."""
    head = "| arm | n | " + " | ".join(grade.OUTCOMES) + " | prompt tokens (median) | block chars (median) |"
    lines = [head, "|" + "---|" * (len(grade.OUTCOMES) + 4)]
    for arm, item in summary.items():
        cells = []
        for outcome in grade.OUTCOMES:
            count, share = item["counts"][outcome], item["shares"][outcome]
            low, high = share["wilson95"]
            cells.append(f"{count} ({share['share']:.0%} [{low:.0%}–{high:.0%}])")
        tokens, block = item["prompt_tokens"]["median"], item["block_chars"]["median"]
        lines.append(f"| {arm} | {item['n']} | " + " | ".join(cells) + f" | {tokens:.0f} | {block:.0f} |")
    return "\n".join(lines) + "\n"


def run_one(
    backend: model.Backend, case: scenario.Scenario, arm: str, root: str, settings: dict[str, Any], seed: int
) -> dict[str, Any]:
    """Build the scenario afresh in ``root``, render the arm's block, ask the model, grade the reply."""
    world.remove(root)
    built, calls = world.build(case, root)
    block = world.hook_block(built, arm)
    messages = world.request(case, built, calls, block)
    request = {"messages": messages, "tools": world.TOOLS, "seed": seed, **settings}
    started = time.monotonic()
    answer = backend.complete(request)
    seconds = time.monotonic() - started
    message = answer["choices"][0].get("message", {})
    action = grade.first_action(message)
    usage = answer.get("usage", {})
    return {
        "scenario": case.id,
        "arm": arm,
        "seed": seed,
        "outcome": grade.grade(case, action),
        "action": None if action is None else action.as_dict(),
        "reply": {"content": message.get("content") or "", "tool_calls": message.get("tool_calls") or []},
        "finish_reason": answer["choices"][0].get("finish_reason"),
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0),
        "block_chars": len(block),
        "block_sha256": hashlib.sha256(block.encode("utf-8")).hexdigest()[:16],
        "seconds": round(seconds, 2),
    }


def write_results(out: str, document: dict[str, Any], rows: list[dict[str, Any]], arms: list[str]) -> str:
    """results.json and table.md from the graded rows; returns the table."""
    document["summary"] = summarise(rows, arms)
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
    text = table(document["summary"])
    with open(os.path.join(out, "table.md"), "w", encoding="utf-8") as handle:
        handle.write(text)
    return text


def regrade(out: str, scenarios_path: str) -> str:
    """Grade a finished run's saved replies again with this grader (replies.jsonl and results.json in ``out``)."""
    cases = {case.id: case for case in scenario.load(scenarios_path)}
    with open(os.path.join(out, "results.json"), encoding="utf-8") as handle:
        document = json.load(handle)
    rows = []
    with open(os.path.join(out, "replies.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            action = grade.first_action(row["reply"])
            row["action"] = None if action is None else action.as_dict()
            row["outcome"] = grade.grade(cases[row["scenario"]], action)
            rows.append(row)
    with open(os.path.join(out, "replies.jsonl"), "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    return write_results(out, document, rows, list(document["arms"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, choices=(*model.MODELS, "stub"))
    parser.add_argument("--scenarios", default=SCENARIOS, help="a scenario file (default: the repository's)")
    parser.add_argument("--arms", default=",".join(world.ARMS), help="comma-separated, of h0,h1,h2")
    parser.add_argument("--out", default=DEFAULT_OUT, help="where results.json, table.md and replies.jsonl go")
    parser.add_argument("--limit", type=int, default=0, help="only the first N scenarios (a quick profile)")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N scenarios (seeds unchanged)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per scenario and arm (seed + repeat)")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=96, help="output tokens per reply (the first action)")
    parser.add_argument("--ctx", type=int, default=6144, help="the model's context length")
    parser.add_argument(
        "--shard",
        default="",
        help="K/N: only the scenarios whose index is K mod N (seeds unchanged: N processes"
        " side by side give the run of one, on a machine with idle cores)",
    )
    parser.add_argument("--regrade", action="store_true", help="grade the saved replies in --out again, no model")
    parser.add_argument(
        "--threads", type=int, default=1, help="1: on a shared machine two threads wait on each other per token"
    )
    args = parser.parse_args(argv)
    arms = [arm for arm in args.arms.split(",") if arm]
    if not arms or any(arm not in world.ARMS for arm in arms):
        parser.error(f"--arms: a comma-separated list of {', '.join(world.ARMS)}")
    try:
        cases = scenario.load(args.scenarios)
    except (OSError, ValueError) as error:
        print(f"resumption: {args.scenarios}: {error}", file=sys.stderr)
        return 2
    if args.regrade:
        print(regrade(args.out, args.scenarios))
        return 0
    if args.limit:
        cases = cases[: args.limit]
    indexed = list(enumerate(cases))[args.skip :]
    if args.shard:
        shard, count = (int(part) for part in args.shard.split("/"))
        indexed = [(index, case) for index, case in indexed if index % count == shard]
    sha256 = ""
    try:
        if args.model == "stub":
            backend: model.Backend = StubBackend()
        else:
            spec = model.MODELS[args.model]
            path = model.ensure_model(spec, os.environ, ROOT)
            sha256 = spec.sha256
            backend = model.LlamaBackend(path, args.ctx, args.threads)
    except model.ModelError as error:
        print(f"resumption: {error}", file=sys.stderr)
        return 1
    # Sampling stops where a second call starts: only the first action is graded, and what the seed drew up to
    # there is the same with or without the stop (it saves half the decoding on a 2-core machine).
    settings = {"temperature": args.temperature, "top_p": 0.8, "top_k": 20, "max_tokens": args.max_tokens}
    settings["stop"] = list(STOPS)
    os.makedirs(args.out, exist_ok=True)
    document: dict[str, Any] = {
        "model": args.model if args.model == "stub" else model.MODELS[args.model].name,
        "sha256": sha256,
        "scenarios": os.path.relpath(args.scenarios, ROOT) if args.scenarios.startswith(ROOT) else args.scenarios,
        "scenario_count": len(indexed),
        "shard": args.shard,
        "repeats": args.repeats,
        "arms": {arm: ARM_TEXT[arm] for arm in arms},
        "seeds": [],
        "temperature": args.temperature,
        "sampling": settings,
        "context_length": args.ctx,
        "threads": args.threads,
        "complete": False,
        "wall_seconds": 0.0,
        "machine": machine(),
        "command": " ".join(["python3", "benchmarks/resumption/run.py", *(argv if argv is not None else sys.argv[1:])]),
    }
    base = world.new_root()
    rows: list[dict[str, Any]] = []
    started = time.time()
    try:
        with open(os.path.join(args.out, "replies.jsonl"), "w", encoding="utf-8") as replies:
            for index, case in indexed:
                for repeat in range(args.repeats):
                    for arm in arms:
                        seed = args.seed + index * 1000 + repeat
                        row = run_one(backend, case, arm, os.path.join(base, "world"), settings, seed)
                        rows.append(row)
                        replies.write(json.dumps(row) + "\n")
                        replies.flush()
                        print(f"{case.id} {arm} r{repeat}: {row['outcome']} ({row['seconds']} s)", file=sys.stderr)
                # After each scenario: a run stopped early still leaves its results so far (complete: false).
                document.update(seeds=sorted({row["seed"] for row in rows}), wall_seconds=round(time.time() - started))
                write_results(args.out, document, rows, arms)
    finally:
        world.remove(base)
    document["complete"] = True
    print(write_results(args.out, document, rows, arms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
