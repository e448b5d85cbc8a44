"""No test reads the wall clock at import.

A "now" read when a module is collected is stale by the time a test runs: on a loaded machine a serial run can
reach a test minutes later, and a fresh file then looks "updated at a future time". So every ``tests/**/*.py`` is
parsed and a clock call that runs at import fails here: at module level, in a class body, in a default argument
or a decorator (both evaluated when the ``def`` runs). Inside a function body (a test, a fixture, a helper) a
clock read is the test's own "now".
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# Calls that read the clock. The ``time`` conversions read it only without their time argument.
CLOCKS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.process_time",
        "time.process_time_ns",
        "time.clock_gettime",
        "time.clock_gettime_ns",
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
    }
)
CLOCK_WITHOUT_ARGUMENT = {"time.localtime": 0, "time.gmtime": 0, "time.ctime": 0, "time.asctime": 0, "time.strftime": 1}


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a name or an attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def import_names(tree: ast.Module) -> dict[str, str]:
    """Each name a module's imports bind, mapped to what it stands for (``dt`` -> ``datetime.datetime``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]  # ``import a.b`` binds ``a``
                names[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def is_clock_call(call: ast.Call, names: dict[str, str]) -> bool:
    name = dotted(call.func)
    if name is None:
        return False
    first, _, rest = name.partition(".")
    resolved = names.get(first, first) + (f".{rest}" if rest else "")
    if resolved in CLOCKS:
        return True
    if resolved in CLOCK_WITHOUT_ARGUMENT:
        return len(call.args) + len(call.keywords) <= CLOCK_WITHOUT_ARGUMENT[resolved]
    return False


def import_time_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of ``body`` that run when it runs: everything but the bodies of functions and lambdas."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(node.decorator_list)
            pending.extend(node.args.defaults)
            pending.extend(default for default in node.args.kw_defaults if default is not None)
        elif isinstance(node, ast.Lambda):
            pending.extend(node.args.defaults)
            pending.extend(default for default in node.args.kw_defaults if default is not None)
        else:
            pending.extend(ast.iter_child_nodes(node))
    return found


def clock_reads_at_import(source: str, filename: str = "<test>") -> list[int]:
    """The line numbers of the clock calls that run when ``source`` is imported."""
    tree = ast.parse(source, filename)
    names = import_names(tree)
    nodes = import_time_nodes(tree.body)
    return sorted(node.lineno for node in nodes if isinstance(node, ast.Call) and is_clock_call(node, names))


@pytest.mark.parametrize(
    "source",
    [
        "import time\nNOW = time.time()",
        "import time\nNOW = float(int(time.time()))",
        "import time as t\nNOW = t.monotonic()",
        "from time import time\nNOW = time()",
        "from time import time as clock\nSTAMPS = [clock() for _ in range(3)]",
        "import datetime\nTODAY = datetime.date.today()",
        "from datetime import datetime\nNOW = datetime.now()",
        "import datetime as dt\nNOW = dt.datetime.utcnow()",
        "import time\nSTAMP = time.strftime('%Y')",
        "import time\nclass Project:\n    now = time.time()",
        "import time\ndef aged(path, now=time.time()):  # clock\n    return now",
        "import time\ndef aged(path, *, now=time.time()):  # clock\n    return now",
        "import time\nimport pytest\n@pytest.mark.parametrize('now', [time.time()])  # clock\ndef test(now):\n    pass",
        "import time\nF = lambda now=time.time(): now",
        "import time\nif True:\n    NOW = time.time_ns()",
    ],
)
def test_a_clock_read_at_import_is_found(source: str) -> None:
    lines = source.split("\n")
    marked = [number for number, line in enumerate(lines, start=1) if line.endswith("# clock")]
    assert clock_reads_at_import(source) == (marked or [len(lines)])  # the marked line, else the last


@pytest.mark.parametrize(
    "source",
    [
        "import time\ndef now():\n    return time.time()",
        "import time\nclass Project:\n    def __init__(self):\n        self.now = time.time()",
        "import time\nF = lambda: time.time()",
        "import time\nSTAMP = time.strftime('%Y', time.gmtime(0))",
        "import time\nLOCAL = time.localtime(2_000_000_000)",
        "NOW = 2_000_000_000.0\ndef time():\n    return NOW",
        "import os\nMTIME = os.path.getmtime",
    ],
)
def test_a_clock_read_in_a_function_or_of_a_given_time_is_not(source: str) -> None:
    assert clock_reads_at_import(source) == []


def test_no_test_module_reads_the_clock_at_import() -> None:
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in clock_reads_at_import(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, "read the clock inside the test (a fixture or a helper), not at import: " + ", ".join(found)
