"""The Rust core's trace reader and the plain scanner read damaged lines identically.

Lines are generated valid, then damaged in the ways real logs are: truncated, bytes
replaced, keys added or duplicated, numbers written oddly, details moved. The plain
scanner's records (traces, audits, values) are also kept apart from its diagnostics: the
same bytes give the same records on a second scan. (The msgspec accelerator these were
first compared with is gone, issue 28.)
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import ScanRecords, SessionScanner
from pytest_entropy.testing import strategies as es
from tests.property.test_native_scan_differential import _compare, _native, _plain

COUNTERS = (
    "lines",
    "empty_lines",
    "ignored_lines",
    "model_lines",
    "trace_lines",
    "oversized_lines",
    "malformed_lines",
    "non_object_lines",
    "lines_without_details",
    "lines_without_trace",
    "traces",
    "rejected_traces",
    "audit_calls",
    "skipped_audits",
)


@st.composite
def trace_lines(draw: st.DrawFn) -> bytes:
    trace = draw(es.trace_envelopes())
    audits = draw(
        st.lists(
            st.one_of(
                st.builds(lambda r, a: {"ref": r, "args": a}, es.refs(), es.args()),
                es.json_values(4),
            ),
            max_size=3,
        )
    )
    details: dict[str, Any] = {"trace": trace, "audits": audits}
    if draw(st.booleans()):
        record: dict[str, Any] = {
            "type": "message",
            "message": {"role": "toolResult", "details": details},
        }
    else:
        record = {"details": details}
    text = es.session_line(record)
    mutation = draw(
        st.sampled_from(
            ["none", "none", "truncate", "replace", "extra", "dup", "number", "negative zero"]
        )
    )
    if mutation == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif mutation == "replace" and text:
        at = draw(st.integers(0, len(text) - 1))
        text = (
            text[:at] + draw(st.sampled_from(['"', "1", "{", "]", "x", "\\", ","])) + text[at + 1 :]
        )
    elif mutation == "extra":
        text = text.replace('"kind"', '"extra":1,"kind"', 1)
    elif mutation == "dup":
        text = text.replace('"outcome":"', '"outcome":"failed","outcome":"', 1)
    elif mutation == "number":
        text = text.replace('"sequence":0', '"sequence":0.0', 1).replace(
            '"version":1', '"version":1.0'
        )
    elif mutation == "negative zero":
        # JSON.parse's -0 (the float -0.0 on both paths, which json.dumps below tells apart)
        text = re.sub(r"([:,\[])0(?=[,}\]])", r"\1-0", text).replace(
            '"args":{', '"args":{"z":[-0,{"k":-0}],'
        )
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = data.replace(b"pi.read", b"pi.r\xffd", 1)
    return data


model_lines = st.builds(
    lambda provider, model, kind: (
        es.session_line({"type": "model_change", "provider": provider, "modelId": model})
        if kind
        else es.session_line(
            {
                "type": "message",
                "message": {"role": "assistant", "provider": provider, "model": model},
            }
        )
    ).encode(),
    st.sampled_from(["p", "", "q"]),
    st.sampled_from(["m", "", "n"]),
    st.booleans(),
)


def scan(data: bytes) -> tuple[list[Any], list[Any], list[Any], ScanDiagnostics]:
    evidence = ScanRecords()
    scanner = SessionScanner(
        evidence.traces.append,
        on_audit=evidence.audit_calls.append,
        on_value=evidence.value_observations.append,
    )
    scanner.scan_stream(io.BytesIO(data))
    return (
        [json.dumps(t.to_json(), sort_keys=True) for t in evidence.traces],
        [json.dumps(a.to_json(), sort_keys=True) for a in evidence.audit_calls],
        [json.dumps(o.to_json(), sort_keys=True) for o in evidence.value_observations],
        scanner.diagnostics,
    )


@given(
    st.lists(st.one_of(trace_lines(), model_lines, st.just(b""), st.just(b"{ nope")), max_size=8)
)
def test_the_rust_core_and_the_plain_scanner_agree(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    plain = _plain(data, 64 << 20, None, None)
    _compare(plain, _native(data, 64 << 20, None, None, 1 << 20))
    records = scan(data)
    for name in COUNTERS[:-2]:  # the meter-only reads harvest no audits
        assert getattr(records[3], name) == getattr(plain[1], name), name
    assert records[3].rejection_reasons == plain[1].rejection_reasons
    assert scan(data)[:3] == records[:3]
