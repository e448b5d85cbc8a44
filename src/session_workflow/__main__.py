"""Let a checkout run the CLI without installing: ``PYTHONPATH=src python3 -m session_workflow demo``."""

from session_workflow.cli.main import main

raise SystemExit(main())
