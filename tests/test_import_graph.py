"""Imports only go down: every module's imports (lazy ones too) form a DAG, and a package imports only packages
on a lower floor (the command line on top, the primitives at the bottom; siblings never import each other).

Imports under ``if TYPE_CHECKING:`` are left out: they never run. Package ``__init__`` files must import nothing,
so a hook pays only for the modules it uses.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "session_workflow"


def module_names() -> dict[str, Path]:
    names = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: anything not inside an ``if TYPE_CHECKING:`` block."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for branch in node.orelse:
                visit(branch)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in runtime_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif node.level == 0 and node.module:
                targets = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
            else:
                raise AssertionError(f"{path}: relative import")
            for target in targets:
                if target in modules and target != name and modules[target].name != "__init__.py":
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := walk(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := walk(node)):
            return cycle
    return None


# The floors of the house, from the ground up. A package may import its own modules and any lower floor's.
FLOORS = {
    "core": 0,
    "tasks": 1,
    "workstate": 1,
    "transcript": 2,
    "anchor": 2,
    "hook": 3,
    "cli": 4,
    "__main__": 5,
}


def package_of(module: str) -> str:
    return module.split(".")[1]


def upward_imports(graph: dict[str, set[str]], floors: dict[str, int]) -> list[str]:
    """Every import from one package to another that is not on a lower floor."""
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if package_of(name) != package_of(target) and floors[package_of(target)] >= floors[package_of(name)]
    )


def test_every_package_has_a_floor() -> None:
    assert {package_of(name) for name in module_names() if name != PACKAGE} == set(FLOORS)


def test_imports_only_go_down() -> None:
    assert upward_imports(edges(module_names()), FLOORS) == []


def test_an_upward_or_sideways_import_is_found() -> None:
    graph = {"p.anchor.writer": {"p.cli.parser", "p.core.text"}, "p.tasks.store": {"p.workstate.state"}}
    assert upward_imports(graph, FLOORS) == ["p.anchor.writer -> p.cli.parser", "p.tasks.store -> p.workstate.state"]


def test_src_has_no_import_cycle() -> None:
    assert find_cycle(edges(module_names())) is None


def test_package_inits_import_nothing() -> None:
    for path in (SRC / PACKAGE).rglob("__init__.py"):
        assert not runtime_imports(ast.parse(path.read_text())), path


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# The folder variables: only ``core.places`` reads them (``core.locations`` names them), so every hook and command
# resolves its folders once, from the value its entry built. The rest may only name them for a child process's
# environment (the doctor asking hooks/python.sh, the demo's own Claude Code folder) or drop one at the CLI's entry.
FOLDER_VARIABLES = {"XDG_STATE_HOME", "HOME", "CLAUDE_CONFIG_DIR", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR"}
FOLDER_VARIABLE_NAMES = {"CONFIG_ENV", "PLUGIN_DATA_ENV", "PROJECT_ENV"}
READS_FOLDER_VARIABLES = {"core.places", "core.locations", "cli.main", "cli.demo", "cli.health"}


def folder_variable_readers(modules: dict[str, Path]) -> set[str]:
    """The modules that name a folder variable, by its text or by its constant's name."""
    found = set()
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            text = node.value if isinstance(node, ast.Constant) else None
            named = node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.alias) else None
            if text in FOLDER_VARIABLES or named in FOLDER_VARIABLE_NAMES:
                found.add(name.removeprefix(PACKAGE + "."))
    return found


def test_only_the_places_read_the_folder_variables() -> None:
    assert folder_variable_readers(module_names()) <= READS_FOLDER_VARIABLES


def test_a_module_reading_a_folder_variable_is_found(tmp_path: Path) -> None:
    (tmp_path / "rogue.py").write_text('import os\nSTATE = os.environ.get("XDG_STATE_HOME")\n')
    (tmp_path / "quiet.py").write_text('"""Mentions XDG_STATE_HOME in prose only."""\n')
    modules = {f"{PACKAGE}.anchor.rogue": tmp_path / "rogue.py", f"{PACKAGE}.anchor.quiet": tmp_path / "quiet.py"}
    assert folder_variable_readers(modules) == {"anchor.rogue"}
