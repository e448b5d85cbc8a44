"""The ``session-workflow`` command: the parser and error type below one module per group.

``parser`` (``OneLineParser``: a command without its verb prints ``short_help``, exit 2; an unknown option is named
with the command as typed; ``CliError(message, code)``; ``add_verbs(parser, verbs, argv, dest, metavar)``: a verb
is ``(help line, setup(parser, rest))`` and only the invoked one's parser is built), ``main`` (the argparse tree:
``GROUPS`` names each group module), one module per group (``anchor``, ``anchor_writer`` (the writer verbs),
``state``, ``tasks``, ``inject``, ``demo``, ``doctor`` (the checks that need the domain, and the screen)). Each
group module has ``setup(parser, argv)``; handlers are ``args.run(args) -> int``. A check of ``doctor`` that needs
no domain package goes in ``core.health``, else in ``cli/doctor.py`` (an anchor state is one function in
``ANCHOR_STATES``). Every JSON the CLI prints goes through ``core.text.visible_json``.
"""
