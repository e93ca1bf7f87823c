"""Every dotted ``pytest_entropy.…`` path the project writes names a module that exists.

The first layout's top-level modules (``pytest_entropy.store``, ``pytest_entropy.assertions``,
...) were answered by an import hook until issue 32 removed it; a docstring, doc page or test
that still spells an old path would now point a reader (or an import) at nothing. The check
reads the source tree, not the import system: a path is walked folder by folder and module by
module, and what is left after the module must be a name its source mentions.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pytest_entropy"
# Where paths are written: the package, its tests, docs, benchmarks and examples.
SCANNED = ("pytest_entropy", "tests", "docs", "bench", "examples")
# (CHANGELOG.md is history: it names the old paths to say they are gone.)
TOP_FILES = ("README.md",)
REFERENCE = re.compile(r"\bpytest_entropy(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# Built modules with no .py source: the Rust extension (native/) and the C kernels.
BUILT = re.compile(r"^_core$|^_\w+_native$")


def _texts() -> list[tuple[Path, str]]:
    found = []
    paths = [REPO / name for name in TOP_FILES]
    for folder in SCANNED:
        paths += sorted((REPO / folder).rglob("*.py")) + sorted((REPO / folder).rglob("*.md"))
    for path in paths:
        if path.is_file() and path.resolve() != Path(__file__).resolve():
            found.append((path, path.read_text(encoding="utf-8", errors="replace")))
    return found


def _resolves(reference: str) -> bool:
    parts = reference.split(".")[1:]
    folder = PACKAGE
    module: Path | None = PACKAGE / "__init__.py"
    for part in parts:
        if folder is not None and (folder / part / "__init__.py").is_file():
            folder, module = folder / part, folder / part / "__init__.py"
            continue
        if folder is not None and (folder / f"{part}.py").is_file():
            folder, module = None, folder / f"{part}.py"
            continue
        if folder is not None and BUILT.match(part):
            return True  # a built module (its attributes are not checked here)
        if part.startswith("__"):
            return True  # __file__, __path__, __version__: every module has its dunders
        # An attribute of the module reached so far: its source must define or import the
        # name, or list it as a string (``__all__``, the lazy table of ``__init__.py``).
        if module is None:
            return False
        name = re.escape(part)
        defined = re.compile(
            rf"(?:def|class)\s+{name}\b|^\s*{name}\s*[:=]|import[^\n]*\b{name}\b|\"{name}\"",
            re.MULTILINE,
        )
        return defined.search(module.read_text(encoding="utf-8")) is not None
    return True


def test_every_written_module_path_exists() -> None:
    missing = sorted(
        f"{path.relative_to(REPO)}: {reference}"
        for path, text in _texts()
        for reference in set(REFERENCE.findall(text))
        if not _resolves(reference)
    )
    assert missing == []


def test_an_old_layout_path_is_reported() -> None:
    assert not _resolves("pytest_entropy.store")
    assert not _resolves("pytest_entropy.assertions.assert_ratchet")
    assert _resolves("pytest_entropy.state.store")
    assert _resolves("pytest_entropy.testing.assertions.assert_ratchet")
    assert _resolves("pytest_entropy.measure")
