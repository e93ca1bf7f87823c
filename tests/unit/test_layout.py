"""The layout of DESIGN.md (revision 2), held against the code.

The layer contracts themselves are import-linter's (``[tool.importlinter]`` in
``pyproject.toml``, run by ``.ci/run``); this module checks what a contract cannot say.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_entropy"
TOP_LEVEL = {"__init__.py", "__main__.py", "_version.py", "plugin.py"}
ROOMS = {"core", "ingest", "sources", "state", "run", "report", "testing", "cli", "pytest"}
MAX_LINES = 600


def _import_cycles() -> list[list[str]]:
    """Strongly connected components of more than one module in the package's import graph
    (every import counts: inside functions and under ``TYPE_CHECKING`` too)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("pytest_entropy", include_external_packages=False)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        # Tarjan's algorithm, iterative over an explicit work list.
        work = [(module, iter(sorted(graph.find_modules_directly_imported_by(module))))]
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    imported = sorted(graph.find_modules_directly_imported_by(child))
                    work.append((child, iter(imported)))
                elif child in on_stack:
                    low[node] = min(low[node], order[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == order[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return cycles


def test_no_import_cycle_anywhere() -> None:
    assert _import_cycles() == []


def test_top_level_holds_only_the_shims() -> None:
    modules = {path.name for path in PACKAGE.glob("*.py")}
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert modules == TOP_LEVEL
    assert folders == ROOMS


@pytest.mark.parametrize(
    "module", sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py"))
)
def test_no_module_over_the_size_limit(module: str) -> None:
    lines = (PACKAGE / module).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it along a real seam"


def test_importing_the_package_installs_no_import_hook() -> None:
    """No meta-path finder of ours, and the first layout's top-level paths are gone."""
    code = (
        "import sys; before = list(sys.meta_path); import pytest_entropy, importlib.util;"
        "print(len(sys.meta_path) - len(before));"
        "old = ('assertions', 'store', 'fixtures', 'strategies', 'sessions', 'engine');"
        "print(sum(importlib.util.find_spec('pytest_entropy.' + name) is None for name in old))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    assert out == ["0", "6"]


def test_importing_the_package_under_w_error_prints_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import pytest_entropy"],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_public_names_import() -> None:
    """The curated API is the one public import path: every name of ``__all__`` resolves,
    to the object its home module defines, and nothing else is lazily exported."""
    import importlib

    import pytest_entropy

    assert set(pytest_entropy.__all__) == {*pytest_entropy._LAZY, "__version__"}
    for name in pytest_entropy.__all__:
        assert getattr(pytest_entropy, name) is not None
        assert name in dir(pytest_entropy)
    for name, home in pytest_entropy._LAZY.items():
        module = importlib.import_module(home, "pytest_entropy")
        assert getattr(pytest_entropy, name) is getattr(module, name)
    removed = "store"  # a first-layout module: no longer an attribute either
    with pytest.raises(AttributeError):
        getattr(pytest_entropy, removed)
    import pytest_entropy.plugin as plugin

    for name in plugin.__all__:
        assert callable(getattr(plugin, name))


def test_the_curated_api_imports_no_pytest() -> None:
    code = (
        "import sys, pytest_entropy;"
        "[getattr(pytest_entropy, name) for name in pytest_entropy.__all__];"
        "heavy = ('pytest', '_pytest', 'hypothesis', 'syrupy');"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "[]"
