"""ingest/paths gives the text pathlib gives, so names in messages and reports do not change
when a command walks its files without importing pathlib (issue 32)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.ingest.paths import as_path, join_path, normal_path, path_like

posix_only = pytest.mark.skipif(os.name != "posix", reason="the text rules are POSIX's")

# Names made of what changes a path's text: separators, dots and ordinary characters.
_PIECES = st.sampled_from(["/", "//", ".", "..", "a", "b.jsonl", " ", "é", "~", "\\"])
_TEXT = st.lists(_PIECES, max_size=10).map("".join)


@posix_only
def test_every_short_path_reads_as_pathlib_reads_it() -> None:
    for length in range(7):
        for pieces in itertools.product("/.a", repeat=length):
            text = "".join(pieces)
            assert normal_path(text) == str(PurePosixPath(text)), text
            assert join_path(text, "x.jsonl") == str(PurePosixPath(text) / "x.jsonl"), text


@posix_only
@given(_TEXT, st.sampled_from(["a.jsonl", ".hidden", "..", "sub"]))
def test_generated_paths_read_as_pathlib_reads_them(text: str, name: str) -> None:
    assert normal_path(text) == str(Path(text))
    assert join_path(text, name) == str(Path(text) / name)


def test_a_path_like_is_read_through_fspath() -> None:
    assert normal_path(Path("a") / "b") == str(Path("a/b"))
    assert as_path("a/b") == Path("a/b")
    given_path = Path("x")
    assert as_path(given_path) is given_path


def test_path_like_keeps_the_kind_it_is_given() -> None:
    assert path_like("dir", "dir/a.jsonl") == "dir/a.jsonl"
    kept = path_like(Path("dir"), "dir/a.jsonl")
    assert isinstance(kept, Path) and kept == Path("dir/a.jsonl")
