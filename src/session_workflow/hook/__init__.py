"""Hook plumbing: the SessionStart composer, its context and part contract, hook I/O, PreCompact, UserPromptSubmit.

``compose`` (the SessionStart composer), ``parts`` (its registry), ``io`` (``run_hook(handler)``,
``hook_json(event, text)``, ``write_stdout(bytes)``), ``precompact``, ``prompt_submit``, ``tool_edit`` (PreToolUse /
PostToolUse on Write, Edit, MultiEdit: an anchor the session edits keeps its trust).

The entry. hooks.json starts every hook as ``/bin/sh hooks/python.sh -I -S hooks/hook.py EVENT``. ``python.sh``
(POSIX sh builtins only: about one ``/bin/sh`` start) execs the first ``python3`` on PATH that is neither in a
relative entry nor inside the project (``CLAUDE_PROJECT_DIR``, the working directory; links resolved);
``bin/session-workflow`` sources it too, and ``doctor`` asks it (``--which``). ``hook.py`` is the one entry: it
decides the bytecode rule inline (to ``$CLAUDE_PLUGIN_DATA/pycache`` when that exists outside the project and the
working directory, else none), puts ``<root>/src`` on ``sys.path``, calls the event's handler from its
``HANDLERS`` table and ``os._exit(0)`` in a ``finally``; a new hook is one row there and one entry in hooks.json.
For the events in ``BUNDLED`` (SessionStart and PreCompact, about forty modules each) it first puts a
``core.bytecode.Bundle`` on ``sys.meta_path``: their modules' bytecode in one file per event, beside the .pyc files.

The SessionStart contract. Each part module exposes ``prepare(ctx: HookContext) -> PreparedPart | None`` that does
all its I/O once and returns None when there is nothing to say. ``render(budget)`` does no I/O and must return
text within ``budget`` (anchor: UTF-16 units; tasks, recovery, work state: UTF-8 bytes, which are never fewer than
UTF-16 units), naming whatever it cut; a part may remember what it rendered for ``after_emit`` (the anchor and
work-state parts do). Side effects that must only follow a successful injection (telemetry, ``.gitignore``) go in
``after_emit``. Block order: work state, anchor, tasks, run record, recovery. The composer takes its parts from
``parts.PARTS``, the registry, and names none itself: ``Part(name, sources, present, "module:prepare", label=,
switch=, note=, facts=)``, where ``present(ctx, folders, restored)`` is a cheap ``core`` check that there is
something on disk for it (its module is imported only then), ``label`` heads the line that stands for it when an
earlier block holds it, ``switch`` the option that switches it off (the block says so in one line), ``note`` a line
for the block's head and ``facts`` what the compaction ledger keeps of its reading, even when it had nothing to say
(the run record's look); a new part is one entry and its module. A ``prepare`` that returns
``core.parts.Elsewhere`` says another channel delivers its state (the mod's work-state section). A part that
raises, in ``prepare`` or ``render``, is named in the block's "could not be read" line and goes to the error log
(``core.errors.record``); so does the composer itself, whose block then names every part of the source as left
out. Every hook runs inside
``core.errors.guard`` (``io.run_hook``, ``tool_edit.run``): it exits 0 and records a bug.

The hot path (every module a hook imports). Only cheap stdlib modules: ``os``, ``sys``, ``json``, ``re``,
``stat``, ``errno``, ``time``, ``marshal`` (``core.bytecode``). ``re`` (and with it ``json``, which imports it)
costs about a third of a hook's start: import ``re`` inside the function that needs a pattern, and parse with
``core.jsonload``. Not ``typing`` at run time (``TYPE_CHECKING = False`` / ``if TYPE_CHECKING:`` for
annotation-only imports), nor ``dataclasses``, ``pathlib``, ``datetime``, ``tempfile``, ``argparse``,
``logging``, ``asyncio``, ``inspect``, ``contextlib``, nor any third-party module. ``filelock`` is imported only
by ``core.atomic`` where there is no flock, which loads it itself (platformdirs is not shipped:
``core.places.Places.state`` gives its answer from the environment); the one hook-path exception is ``hashlib``,
imported only in ``anchor.registry.digest_of`` (an anchor of ours whose identity moved but whose size
did not: about 2 ms, once). Every hook exits 0, prints nothing on bad input, and reads bounded prefixes/suffixes
only. No regex with nested or adjacent unbounded repeats over file content (string methods instead);
``tests/reliability/test_linear_time.py`` fuzzes every such parser with 64 KB adversarial lines under
``tox -e stress``. Check with ``python3 -X importtime hooks/hook.py SessionStart < payload``. What must be tested
cold, as ``python3 -I -S``: ``tests/README.md``.
"""
