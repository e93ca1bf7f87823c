"""Patterns compiled at their first use (``core/patterns.py``, issue 32).

The session format detectors hold their patterns as :class:`LazyPattern`: a native session's
head (the demo's) is told apart from every foreign format without compiling one of them, and
a foreign head compiles only what its detectors reach. The substring tests placed before some
patterns are implied by the patterns themselves, so they change no answer.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_entropy.core.patterns import LazyPattern
from pytest_entropy.ingest import detectors
from pytest_entropy.ingest.registry import _HEAD_BYTES

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo" / "sessions"
_DETECTORS = [getattr(detectors, name) for name in detectors.__all__ if name.startswith("detect_")]


def _patterns() -> dict[str, LazyPattern[bytes]]:
    return {k: v for k, v in vars(detectors).items() if isinstance(v, LazyPattern)}


def test_a_lazy_pattern_compiles_once_and_behaves_as_re() -> None:
    pattern = LazyPattern(rb"a(b+)")
    assert pattern._compiled is None
    assert pattern.search(b"xabbb").group(1) == b"bbb"  # type: ignore[union-attr]
    compiled = pattern._compiled
    assert compiled is not None and compiled.pattern == rb"a(b+)"
    assert pattern.match(b"xab") is None and pattern.match(b"ab") is not None
    assert pattern.sub(b"-", b"abab") == b"--"
    assert pattern._compiled is compiled
    text = LazyPattern(r"\d+", re.ASCII)
    assert text.sub(lambda m: str(int(m.group()) * 2), "a1b22") == "a2b44"


def test_a_native_head_compiles_no_detector_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(DEMO.glob("*.jsonl"))
    assert files, f"the demo corpus is missing: {DEMO}"
    patterns = _patterns()
    assert len(patterns) >= 15
    for pattern in patterns.values():
        monkeypatch.setattr(pattern, "_compiled", None)
    for path in files:
        head = path.read_bytes()[:_HEAD_BYTES]
        assert not any(detector(path, head) for detector in _DETECTORS)
    assert [name for name, p in patterns.items() if p._compiled is not None] == []


_PIECES = st.sampled_from(
    [b"{", b"[", b" ", b'"id"', b": ", b'"x"', b", ", b'"result"', b'"history"', b"[{",
     b'"node_type"', b'"Action"', b'"Thought"', b'"source"', b'"agent"', b'"action"', b"}"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=14).map(b"".join))
@example(b'{"id": "x", "result": 1}')
@example(b'{"node_type": "Action"}')
@example(b'{"history": [{"source": "agent", "action": 1}]}')
def test_the_substring_tests_change_no_answer(head: bytes) -> None:
    path = Path("session.json")
    start = head.lstrip()[:1]
    bfcl = detectors._RESULT_ENTRY.match(head) is not None
    toolbench = start == b"{" and detectors._TREE_NODE.search(head) is not None
    openhands_object = start == b"{" and all(
        p.search(head) is not None
        for p in (detectors._HISTORY, detectors._EVENT_SOURCE, detectors._EVENT_KIND)
    )
    assert detectors.detect_bfcl(path, head) == bfcl
    assert detectors.detect_toolbench(path, head) == toolbench
    if start != b"[":
        assert detectors.detect_openhands(path, head) == openhands_object
