"""Shared primitives and the plugin's environment: atomic writes, bounded reads, JSON-lines logs, text measures;
where the run's folders are, its options, its error guard.

The building blocks every contract shares; use them, do not re-write them:

- ``text``: ``utf16_len``, ``utf8_len``, ``one_line`` (flatten controls, strip invisible characters),
  ``strip_invisible``, ``escaped`` (paths and names shown exactly, nothing hidden: every name a report, preface or
  message shows), ``shell_command`` / ``shell_quote`` (the one way a command the plugin writes or prints is built:
  each word one shell word on one visible line, ``$'…'`` byte escapes for hidden characters and backticks; the
  mod's ``shellCommand`` is held to it), ``visible_json`` (a dumped JSON with hidden characters escaped),
  ``cut_utf8``, ``cut_utf16``, ``cut_code_points``, ``without_comments`` (lines without their HTML comments: no
  prompt is ever shown as a cursor or next action).
- ``boundedio``: hang-proof bounded reads: ``read_prefix``, ``read_prefix_as`` (only while the descriptor's
  ``fstat`` is the identity a check saw), ``read_text_prefix``, ``iter_lines_from_start``,
  ``iter_marked_lines_from_end`` (regular files only, O_NONBLOCK, bounded).
- ``jsonload``: ``loads`` (exactly ``json.loads``, tested so in a cold ``python3 -I -S`` on every interpreter) and
  ``dumps_flat`` (a snapshot key) through json's C functions, without importing ``json`` and ``re``: use it on the
  hook path.
- ``atomic``: the one writer: ``update_file(path, transform)``, ``create_new`` (``link_new`` under a lock of its
  own), ``locked``, ``replace_locked``, ``WriteError`` (filelock imported lazily; one temp name per path,
  ``temp_path``, so no write lists a folder).
- ``gitignore``: ``ensure_gitignore(folder)`` (create-only, hot-path safe).
- ``bytecode``: ``Bundle.install(prefix, src, event)``, the import-system finder that serves an event's modules
  from one file of the bytecode the interpreter wrote for them (checked as a .pyc is), and ``save()`` at the hook's
  end when one was imported the standard way (``hooks/hook.py``, SessionStart and PreCompact only).
- ``places``: the run's folders, one value (``Places(env)``) built at the two entries (``hook.io.run_hook`` and the
  CLI's ``main``; ``HookContext.places`` in a hook) and handed down in place of the environment; nothing else reads
  a folder variable (``tests/test_import_graph.py``). Each folder is resolved on first use and kept: ``home``,
  ``config`` (Claude Code's), ``state`` (platformdirs' ``user_state_dir`` from the environment alone, stdlib:
  platformdirs is not shipped, and hooks, CLI and mod agree; held to platformdirs in
  ``tests/core/test_locations.py``), ``top`` (the user's root
  for the ownership check), ``trust``, ``error_log``, ``ledger``, ``tasks_root``, ``task_list_dir(session)``,
  ``kept_index(session)`` (a session's list of kept anchors), ``records(project_dirs)`` (the delivery records);
  ``foreign(folder)`` is the one ownership check; ``outside_projects`` (a folder variable a project's ``env`` block
  can set counts only outside the project), ``ignored_folders`` / ``ignored_project`` (the lines naming an ignored
  variable); ``switch`` / ``hours`` (the options). ``env`` stays on it for a variable's own value only.
- ``locations``: the names of the plugin's folders and the per-project paths: ``anchors_dir``, ``state_path``,
  ``record_name``, ``safe_name`` / ``is_safe_name`` (id → file name without ``re``; ``utf16=True`` is Claude Code's
  mapping, an astral character two dashes); ``leads_outside`` / ``resolves_inside`` (the symlink policy);
  ``any_anchors`` / ``any_kept_anchors`` (the composer's one ``lstat`` for a project whose anchors folder is gone)
  / ``any_work_state`` let the composer skip a part's import.
- ``where``: which folder is the project, the one rule every hook and command uses (``project_dir(places, cwd)``:
  ``CLAUDE_PROJECT_DIR`` in a hook or a terminal, never in the Bash tool; else the first ``cwd`` of the session's
  transcript, ``session_transcript`` by ``CLAUDE_CODE_SESSION_ID``; else the cwd; ``command_project_dir`` adds the
  line naming an ignored ``CLAUDE_PROJECT_DIR``; ``HookContext.project_dir()`` is it for a hook) and Claude Code's
  transcript folder name (``project_slug``); the mod's copy is ``hooks/mod/where.ts``, held to it by
  ``tests/core/test_where.py`` and ``tests/mod/where.test.ts`` (change both sides together).
- ``folders``: how the plugin's own folders are made and checked: ``make_private(folder)`` (each missing level
  0700, whatever the umask: every folder under the user's state, cache and data folders is made with it),
  ``foreign_level(folder, top)`` (the first level, up to the user's root ``Places.top``, not owned by the user
  or root or writable by others: then no record there is read; call it through ``Places.foreign``),
  ``problem_line`` (the one line naming it and the fix); lstat calls only, remembered per process.
- ``jsonlog``: ``append_record(path, record, rotated)``: bounded JSON-lines logs.
- ``errorlog``: an unexpected exception in the user's error log (newest 20 entries of at most 4,096 bytes, at
  ``Places.error_log``; ``errors.record`` is the way in, it never raises); ``entries(places)`` for ``doctor``.
- ``config``: user options: ``Option(key, default, default_text, parse, expected)`` for a ``userConfig`` key in
  plugin.json, read from ``SESSION_WORKFLOW_<KEY>`` over ``CLAUDE_PLUGIN_OPTION_<KEY>`` (``lookup``; a run asks
  ``places.switch`` / ``places.hours``); ``problems(env)`` names bad values once; add a hook's option to
  ``HOOK_OPTIONS`` (hot-path safe).
- ``deps``: where the writers' filelock comes from: ``vendored_dir()`` (the plugin folder's ``vendor/py3NN`` for
  this Python, the sets read from the folders' names; None for an installed wheel) and ``add_vendored()`` (first
  on ``sys.path``: ``bin/session-workflow``, the doctor, and ``atomic`` where it imports filelock).
- ``errors``: ``Failure(message, code)``: the expected failure the CLI prints as one line (``cli.parser.CliError``
  is one); ``guard(where, run, places, say)``: the one error guard of every hook and command (a hook exits 0 and
  records a bug; a command prints a failure's line and exits its code, a bug's line naming where it was recorded
  and exits ``BUG``, 70); ``record`` (a bug into the error log).
- ``context``: ``HookContext`` (payload fields, ``places``, ``now``, ``mod_active``, ``project_dir()`` /
  ``project_dirs()``: ``core.where``'s rule, or the ``project`` a CLI dry run names), ``MOD_PAYLOAD_KEY``.
- ``parts``: ``PreparedPart``: ``name``, ``cap``, ``floor``, ``render(budget) -> str``, ``after_emit(emitted)``.

Repository variables. A project's ``.claude/settings.json`` ``env`` block reaches the hooks and the Bash tool even
in a workspace never trusted (``PATH``, ``PYTHON*``, ``PIP_*``, ``SESSION_WORKFLOW_*``, ``CLAUDE_PLUGIN_OPTION_*``,
``CLAUDE_CODE_TASK_LIST_ID``; in the Bash tool also ``CLAUDE_PLUGIN_DATA``, ``CLAUDE_PROJECT_DIR``,
``CLAUDE_PLUGIN_ROOT``); Claude Code drops ``HOME``, ``XDG_*`` and ``CLAUDE_CONFIG_DIR`` there and sets
``CLAUDECODE``, ``CLAUDE_CODE_SESSION_ID`` and ``AI_AGENT`` over it. A folder the plugin reads as authority comes
only from the latter kind, or through ``Places.outside_projects``. No test-only variable in ``src/``: tests
point ``CLAUDE_CONFIG_DIR``, ``XDG_STATE_HOME`` or ``HOME`` at folders of their own, or monkeypatch.

The mod mirrors some of these rules. Its text rules live in ``hooks/mod/text.ts``, held to Python's by
``tests/core/test_text.py`` and ``tests/mod/text.test.ts`` (change both sides together). Its trust-record name and
identity check (``recordFile``, ``recordVouches`` in ``hooks/mod/checkpoint.ts``) are held to
``locations.record_name`` and the writer's record by ``tests/mod/python-records.ts``, which
``tests/anchor/test_registry.py`` generates and checks (``SESSION_WORKFLOW_UPDATE_GOLDEN=1`` writes it anew).
"""
