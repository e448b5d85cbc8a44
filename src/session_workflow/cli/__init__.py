"""The ``session-workflow`` command: the parser and error type below one module per group.

``parser`` (``OneLineParser``: a command without its verb prints ``short_help``, exit 2; an unknown option is named
with the command as typed; ``CliError(message, code)``; ``add_verbs(parser, verbs, argv, dest, metavar)``: a verb
is ``(help line, setup(parser, rest))`` and only the invoked one's parser is built), ``main`` (the argparse tree:
``GROUPS`` names each group module), one module per group (``anchor``, ``anchor_writer`` (the writer verbs),
``state``, ``tasks``, ``inject``, ``demo``, ``doctor`` (the checks that need the domain, and the screen)). Each
group module has ``setup(parser, argv)``; handlers are ``args.run(args, places) -> int`` (``places``: the run's
``core.places.Places``, built once by ``main``). ``health``: the doctor's domain-free checks, each a
``Check(mark, text, fix, essential)`` (``OK`` ✔, ``FAIL`` ✘, ``INFO`` ·; the machine, the settings files, the plugin
and the mod); a check that needs the domain goes in ``cli/doctor.py`` (an anchor state is one function in
``ANCHOR_STATES``). Every JSON the CLI prints goes through ``core.text.visible_json``.
"""
