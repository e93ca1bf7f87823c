"""Metric v3's scanner reads the same records line by line (``feed``) and as a stream
(``scan_stream``), on generated sessions mixing trace lines, model lines written with and
without spaces, normalised and broken operations and audits."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.ingest.native import ScanRecords, SessionScanner
from pytest_entropy.testing import strategies as es
from tests.unit.test_v3_ingestion import witness

_WITNESS = witness()


@st.composite
def trace_lines(draw: st.DrawFn) -> str:
    envelope = draw(es.trace_envelopes())
    if envelope["operations"] and draw(st.booleans()):
        broken = draw(st.booleans())
        envelope["operations"][0]["normalization"] = {"version": 1} if broken else _WITNESS
    if draw(st.booleans()):
        envelope["version"] = 2  # fails the guard: its audits go (v3) or stay (v2)
    audits = draw(
        st.lists(st.fixed_dictionaries({"ref": es.refs(), "args": es.args()}), max_size=3)
    )
    message: dict[str, Any] = {
        "role": "toolResult",
        "details": {"trace": envelope, "audits": audits},
    }
    if draw(st.booleans()):  # a trace line that also names a model
        message.update(role="assistant", provider="p", model=draw(st.sampled_from(["a", "b"])))
    return json.dumps({"type": "message", "message": message}, separators=(",", ":"))


def model_lines() -> st.SearchStrategy[str]:
    change = st.builds(
        lambda sep, model: json.dumps(
            {"type": "model_change", "provider": "zro", "modelId": model}, separators=sep
        ),
        st.sampled_from([(",", ":"), (", ", ": ")]),
        st.sampled_from(["k1", "k2"]),
    )
    return st.one_of(change, st.just('{"type":"message","message":{"role":"user"}}'), st.just(""))


sessions = st.lists(st.one_of(trace_lines(), model_lines()), max_size=8)


def _records(lines: list[str], version: int, stream: bool) -> list[Any]:
    records = ScanRecords()
    scanner = SessionScanner(
        records.traces.append,
        on_audit=records.audit_calls.append,
        on_value=records.value_observations.append,
        metric_version=version,
    )
    if stream:
        scanner.scan_stream(io.BytesIO("".join(line + "\n" for line in lines).encode()))
    else:
        scanner.feed_lines(lines)
    return [records.traces, records.audit_calls, records.value_observations, scanner.current_model]


@given(sessions, st.sampled_from([2, 3]))
def test_feed_and_stream_read_alike(lines: list[str], version: int) -> None:
    assert _records(lines, version, stream=False) == _records(lines, version, stream=True)


@given(sessions)
def test_v3_differs_from_v2_only_where_the_rules_do(lines: list[str]) -> None:
    v2_traces, v2_audits, _, _ = _records(lines, 2, stream=True)
    v3_traces, v3_audits, _, _ = _records(lines, 3, stream=True)
    # v3 accepts every trace v2 accepts (and the normalised ones), and keeps no more audits
    # than v2 except those of a normalised trace v2 rejected.
    assert len(v3_traces) >= len(v2_traces)
    if not any('"normalization"' in line for line in lines):
        assert [t.operations for t in v3_traces] == [t.operations for t in v2_traces]
        assert len(v3_audits) <= len(v2_audits)
