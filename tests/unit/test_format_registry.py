"""Adding a format is one module and one registry line (``tests/toy_format.py`` is the module)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.ingest import registry
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.surfaces import load_surface
from tests import toy_format

_CALLS = (
    'search\t{"query": "a"}\tok\nsearch\t{"query": "b", "limit": 3}\tok\nfetch\t{"id": 7}\terror\n'
)


@pytest.fixture
def toy_registered() -> Iterator[None]:
    # The one line: everything else the format needs is in its module.
    registry.register_session_format(toy_format.FORMAT)
    registry.register_surface_format(toy_format.SURFACE_FORMAT)
    try:
        yield
    finally:
        registry.unregister_session_format("toy")
        registry.unregister_surface_format("toy")


def _measure(*argv: str) -> tuple[int, dict[str, Any]]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(["measure", *argv, "--json"])
    return code, json.loads(buffer.getvalue()) if code == 0 else {}


def _toy_corpus(root: Path) -> Path:
    root.mkdir()
    (root / "one.toy").write_text("TOYCALLS\n" + _CALLS)
    (root / "ignored.jsonl").write_text("")
    return root


def test_a_registered_format_is_detected_listed_and_measured(
    tmp_path: Path, toy_registered: None
) -> None:
    corpus = _toy_corpus(tmp_path / "corpus")
    assert "toy" in registry.session_formats()
    assert "toy" in registry.surface_formats()
    assert registry.resolve_format(corpus / "one.toy", ReadOptions()) == "toy"
    # Named, the format's own directory rule picks the files.
    assert registry.directory_files(corpus, ReadOptions("toy")) == [corpus / "one.toy"]
    code, named = _measure("--format", "toy", "--sessions", str(corpus))
    assert code == 0
    totals = named["report"]["totals"]
    assert (totals["traces"], totals["operations"], totals["failed"]) == (1, 3, 1)
    assert sorted(row["ref"] for row in named["report"]["refs"]) == ["toy.fetch", "toy.search"]
    # Detected, the same file measures the same.
    code, detected = _measure("--sessions", str(corpus / "one.toy"))
    assert code == 0
    assert detected["reportHash"] == named["reportHash"]


def test_a_registered_format_is_given_pathlib_paths(tmp_path: Path) -> None:
    # A command walks its files as text (ingest/paths.py); a registered format's detector,
    # directory rule and reader are still handed the pathlib.Path their contract names.
    corpus = _toy_corpus(tmp_path / "corpus")
    given: list[tuple[str, type]] = []

    def detect(path: Any, head: bytes) -> bool:
        given.append(("detector", type(path)))
        return toy_format.detect_toy(path, head)

    def files(root: Any) -> list[Path]:
        given.append(("directory rule", type(root)))
        return toy_format.toy_files(root)

    def read(path: Any, options: ReadOptions, diagnostics: Any) -> Iterator[bytes]:
        given.append(("reader", type(path)))
        return toy_format.read_toy(path, options, diagnostics)

    fmt = registry.SessionFormat("toy", read, detector=detect, directory_files=files)
    registry.register_session_format(fmt)
    try:
        assert _measure("--format", "toy", "--sessions", str(corpus))[0] == 0
        assert _measure("--sessions", str(corpus / "one.toy"))[0] == 0
        listed = registry.directory_files(str(corpus), ReadOptions("toy"))
    finally:
        registry.unregister_session_format("toy")
    assert {kind for kind, _ in given} == {"detector", "directory rule", "reader"}
    assert all(issubclass(cls, Path) for _, cls in given), given
    # A listing keeps the kind of path it is asked about.
    assert listed == [str(corpus / "one.toy")]


def test_a_registered_surface_format_reads_with_its_prefix(
    tmp_path: Path, toy_registered: None
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"toy": {"search": {"type": "object"}}}))
    surface = load_surface(path, surface_format="toy")
    assert surface == {
        "version": 1,
        "actions": [{"ref": "toy.search", "inputSchema": {"type": "object"}}],
    }


def test_an_unregistered_format_is_gone(tmp_path: Path) -> None:
    corpus = _toy_corpus(tmp_path / "corpus")
    assert "toy" not in registry.session_formats()
    assert registry.resolve_format(corpus / "one.toy", ReadOptions()) == "fabric"
    code, _ = _measure("--format", "toy", "--sessions", str(corpus))
    assert code == 2


def test_a_name_registers_once(toy_registered: None) -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.register_session_format(toy_format.FORMAT)
    with pytest.raises(ValueError, match="already registered"):
        registry.register_session_format(type(toy_format.FORMAT)("fabric", toy_format.read_toy))


def test_the_built_in_table_says_what_the_reader_modules_define() -> None:
    # The registry names each built-in format and holds its detector without importing the
    # reader (issue 32, item 2); loading the entry must give the module's own format, whose
    # detector is the very function the registry ran.
    import importlib

    built_in = [
        entry for entry in registry._SESSION_FORMATS if isinstance(entry, registry._BuiltIn)
    ]
    assert len(built_in) == 13
    for entry in built_in:
        loaded = registry.session_format(entry.name)
        assert loaded is not None and loaded.name == entry.name
        assert loaded.detector is entry.detector
        assert loaded is importlib.import_module(f"pytest_entropy.ingest.{entry._module}").FORMAT
    for surface_entry in registry._SURFACE_FORMATS:
        surface = registry.surface_format(surface_entry.name)
        assert surface is not None and surface.name == surface_entry.name
