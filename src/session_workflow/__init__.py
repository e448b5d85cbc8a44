"""session-workflow: put a long run's load-bearing state back after Claude Code compacts, resumes or clears.

One subpackage per contract plus the plumbing, one module per concern; pure functions (parse, fit, render,
compose) apart from I/O (stdin, directory scans, writes). Each package's docstring holds the rules for the code in
it. Imports only go down, floor by floor: ``core`` (0); ``tasks``, ``workstate`` (1); ``anchor``, ``transcript``
(2); ``hook`` (3); ``cli`` (4). A package imports its own modules and lower floors only, never a sibling: the
domain never knows its command line (the writers raise ``core.errors.Failure``, the CLI prints it), and the part
contract (``core.parts``, ``core.context``) sits below the parts. ``tests/test_import_graph.py`` fails on an
upward or sideways import and on any cycle, lazy imports included, ``TYPE_CHECKING`` blocks excluded; a new
package needs a floor there. Package ``__init__`` files import nothing, so a hook pays only for the modules it uses.

Python 3.9 compatible (``from __future__ import annotations``), mypy --strict, ruff (line length 120). Concise
docstrings that say why. No dead code, and no function that only tests call. Exact outputs get golden tests.
"""

# The one source of the version: pyproject.toml reads it, plugin.json and marketplace.json must agree.
__version__ = "0.1.0"
