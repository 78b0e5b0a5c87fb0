"""The project's modules import, and none imports another that imports it back, directly or
through others: the import graph of their module-level imports has no cycle."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("scidraft", "notes", "bibliography", "editor", "collaboration", "accounts", "images",
            "hugosite", "ops")  # fmt: skip


def _module_files(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted name → source file of every module under `packages`, packages by their
    `__init__.py`."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports a module runs or names at its top level: under `if`, `try` and `with`
    too, and under `if TYPE_CHECKING` (a cycle of annotations is still two modules that need
    each other). Imports inside functions and classes are deferred, and not followed."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level_imports(block)
            for handler in node.handlers:
                yield from _module_level_imports(handler.body)
        elif isinstance(node, ast.With):
            yield from _module_level_imports(node.body)


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The project module `name` is, or is in (an imported attribute's module)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module → the project modules its module-level imports name."""
    modules = _module_files(root, packages)
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in _module_level_imports(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                targets |= {_known(alias.name, modules) for alias in node.names}
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*base, node.module] if node.module else base)
            else:
                base = node.module
            # `from package import module` names the module; `from module import name` the
            # module the name is defined in.
            targets |= {_known(f"{base}.{alias.name}", modules) for alias in node.names}
        graph[name] = targets - {None, name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without
    recursion): each is a set of modules that import one another in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_project_module_imports_in_a_circle():
    """No module of the project imports, at its top level, a module that imports it back."""
    graph = import_graph(ROOT, PACKAGES)
    assert "scidraft.markup.stash" in graph["scidraft.markup.pipeline"]  # the graph is read
    assert cycles(graph) == []


def test_every_project_module_imports():
    """Every module of the project imports (an import cycle that breaks at run time fails
    here); the WSGI entry point is left out, since importing it builds the application."""
    for name in _module_files(ROOT, PACKAGES):
        if name.endswith(".wsgi"):
            continue
        assert importlib.import_module(name).__name__ == name


@pytest.fixture
def made_up_project(tmp_path):
    """A package whose modules import each other in the ways the graph must tell apart."""
    package = tmp_path / "circle"
    package.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n",
        "c.py": "from circle.a import thing\nclass C:\n    pass\n",
        "d.py": "def later():\n    from . import a\n",
        "e.py": "import circle.d\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    return tmp_path


def test_the_graph_follows_annotations_and_skips_deferred_imports(made_up_project):
    """A circle through an `if TYPE_CHECKING` import counts; an import inside a function
    does not make one."""
    graph = import_graph(made_up_project, ("circle",))
    assert graph["circle.a"] == {"circle.b"}
    assert graph["circle.b"] == {"circle.c"}
    assert graph["circle.c"] == {"circle.a"}
    assert graph["circle.d"] == set()
    assert graph["circle.e"] == {"circle.d"}
    assert cycles(graph) == [["circle.a", "circle.b", "circle.c"]]
