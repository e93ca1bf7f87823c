"""Incremental reads always equal a full rescan (spec §9.3, V2-CV-27 #7)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.ingest.native import ScanRecords
from pytest_entropy.sources.incremental import ScanRecordCache
from pytest_entropy.sources.scan import read_file_evidence


def trace_line(ref: str, path: str) -> str:
    trace = {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": ["build"],
        "operations": [
            {
                "type": "call",
                "sequence": 0,
                "ref": ref,
                "args": {"path": path},
                "outcome": "succeeded",
            }
        ],
        "counts": {
            "droppedValues": 0,
            "truncatedValues": 0,
            "redactedValues": 0,
            "droppedOperations": 0,
        },
    }
    audits = [{"ref": ref, "args": {"path": path}}]
    return json.dumps(
        {
            "type": "message",
            "message": {"role": "toolResult", "details": {"trace": trace, "audits": audits}},
        }
    )


def model_line(provider: str, model: str) -> str:
    return json.dumps(
        {"type": "model_change", "provider": provider, "modelId": model}, separators=(",", ":")
    )


def as_json(evidence: ScanRecords | None) -> Any:
    assert evidence is not None
    return (
        [t.to_json() for t in evidence.traces],
        [o.to_json() for o in evidence.value_observations],
        [a.to_json() for a in evidence.audit_calls],
    )


lines = st.one_of(
    st.builds(trace_line, st.sampled_from(["pi.read", "mcp.x.run"]), st.sampled_from(["a", "b"])),
    st.builds(model_line, st.sampled_from(["p", "q"]), st.sampled_from(["m", "n"])),
    st.just("{ not json"),
    st.just(""),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(lines, min_size=1, max_size=12), st.data())
def test_appends_in_random_chunks_equal_a_full_rescan(
    tmp_path_factory: Any, content: list[str], data: st.DataObject
) -> None:
    path = tmp_path_factory.mktemp("inc") / "s.jsonl"
    text = "".join(line + "\n" for line in content).encode()
    if data.draw(st.booleans()):
        text = text[:-1]  # the writer has not finished its last line yet
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=5)))
    cache = ScanRecordCache()
    path.write_bytes(b"")
    written = 0
    for cut in [*cuts, len(text)]:
        with open(path, "ab") as stream:
            stream.write(text[written:cut])
        written = max(written, cut)
        incremental = cache.read(path)
        assert as_json(incremental.evidence) == as_json(read_file_evidence(path))


def test_the_spec_incremental_example(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        model_line("provider-a", "model-a") + "\n" + trace_line("pi.read", "a") + "\n",
        encoding="utf-8",
    )
    cache = ScanRecordCache()
    first = cache.read(path)
    assert first.mode == "rescanned"
    assert [t.model for t in first.evidence.traces] == ["provider-a/model-a"]  # type: ignore[union-attr]
    line = trace_line("pi.read", "b")
    with open(path, "a", encoding="utf-8") as stream:
        stream.write(line[:20])  # a half-written line
    half = cache.read(path)
    assert len(half.evidence.traces) == 1  # type: ignore[union-attr]
    assert not half.cached
    with open(path, "a", encoding="utf-8") as stream:
        stream.write(line[20:] + "\n")
    done = cache.read(path)
    assert done.mode == "appended"
    assert done.bytes_scanned == len(line) + 1
    assert [t.model for t in done.evidence.traces] == ["provider-a/model-a"] * 2  # type: ignore[union-attr]
    again = cache.read(path)
    assert again.mode == "reused"
    assert again.bytes_scanned == 0


def test_replacement_truncation_and_rewrite_rescan(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        trace_line("pi.read", "a") + "\n" + trace_line("pi.read", "b") + "\n", encoding="utf-8"
    )
    cache = ScanRecordCache()
    cache.read(path)
    # Truncation: smaller file.
    path.write_text(trace_line("pi.read", "c") + "\n", encoding="utf-8")
    truncated = cache.read(path)
    assert truncated.mode == "rescanned"
    assert as_json(truncated.evidence) == as_json(read_file_evidence(path))
    # Rewritten in place with the same size and a new mtime.
    same_size = trace_line("pi.read", "d") + "\n"
    path.write_text(same_size, encoding="utf-8")
    stamp = os.stat(path).st_mtime_ns + 5_000_000
    os.utime(path, ns=(stamp, stamp))
    rewritten = cache.read(path)
    assert rewritten.mode == "rescanned"
    assert as_json(rewritten.evidence) == as_json(read_file_evidence(path))
    # Replacement: a new inode.
    other = tmp_path / "new.jsonl"
    other.write_text(
        trace_line("mcp.x.run", "e") + "\n" + trace_line("pi.read", "f") + "\n", encoding="utf-8"
    )
    os.replace(other, path)
    replaced = cache.read(path)
    assert replaced.mode == "rescanned"
    assert as_json(replaced.evidence) == as_json(read_file_evidence(path))


def test_the_cache_is_bounded_least_recently_used(tmp_path: Path) -> None:
    cache = ScanRecordCache(capacity=2)
    paths = []
    for name in "abc":
        path = tmp_path / f"{name}.jsonl"
        path.write_text(trace_line("pi.read", name) + "\n", encoding="utf-8")
        paths.append(path)
    cache.read(paths[0])
    cache.read(paths[1])
    cache.read(paths[0])  # refresh a
    cache.read(paths[2])  # evicts b
    assert len(cache) == 2
    assert cache.read(paths[0]).mode == "reused"
    assert cache.read(paths[1]).mode == "rescanned"


def test_unreadable_files_contribute_nothing(tmp_path: Path) -> None:
    assert ScanRecordCache().read(tmp_path / "missing.jsonl").evidence is None
