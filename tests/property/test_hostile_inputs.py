"""Hostile inputs: no exception escapes, every line is accounted for, garbage changes nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.artifact import parse_compiled_surface_artifact
from pytest_entropy.core.canonical import file_text, stable_json_hash
from pytest_entropy.core.enforce import validate_call
from pytest_entropy.core.fingerprint import static_freedom, surface_freedom_report
from pytest_entropy.core.gate import apply_proposals_to_surface
from pytest_entropy.core.meter import MeterState, report_hash
from pytest_entropy.core.pool import merge_observation_window, parse_observation_pool
from pytest_entropy.core.validation import accepts
from pytest_entropy.ingest.native import SessionScanner
from pytest_entropy.state.store import COMPILED, POOL, load_path
from pytest_entropy.testing import strategies as es


def trace_line(trace: dict[str, Any], model_cursor: bool) -> bytes:
    record = {"type": "message", "message": {"role": "toolResult", "details": {"trace": trace}}}
    return json.dumps(record, separators=(",", ":")).encode()


def damage(draw: st.DrawFn, line: bytes) -> bytes:
    """A copy of ``line`` that can never count. (A random byte flip is not used: it can turn
    a line into a different valid one, which must then count.)"""
    kinds = ["truncate", "nan", "deep", "surrogate", "wrong-shape", "extra-key", "bom", "cut"]
    kind = draw(st.sampled_from(kinds))
    if kind == "truncate":
        return line[: draw(st.integers(0, max(0, len(line) - 2)))]
    if kind == "nan":
        return line.replace(b'"sequence":0', b'"sequence":NaN', 1).replace(
            b'"version":1', b'"version":Infinity', 1
        )
    if kind == "deep":
        return b'{"pi-fabric.execution":' + b"[" * 5000 + b"]" * 4999 + b"}"
    if kind == "surrogate":
        return line.replace(b'"call"', b'"c\\ud800ll"', 1).replace(
            b'"kind":"pi-fabric.execution"', b'"kind":"pi-fabric.execution\\ud800"', 1
        )
    if kind == "wrong-shape":
        return b'["pi-fabric.execution", 1e400, {"details": 5}]'
    if kind == "extra-key":
        return line.replace(b'"kind"', b'"normalization":{},"kind"', 1)
    if kind == "bom":
        return b"\xef\xbb\xbf" + line[:-1]
    return line[:-1] + b"\r"


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[bytes], list[bytes]]:
    """(all lines, the lines that must count): valid traces and models, plus damage."""
    good: list[bytes] = []
    everything: list[bytes] = []
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.integers(0, 4)) == 0:
            line = es.session_line(
                {
                    "type": "model_change",
                    "provider": "p",
                    "modelId": draw(st.sampled_from(["a", "b"])),
                }
            ).encode()
            good.append(line)
            everything.append(line)
            continue
        original = trace_line(draw(es.trace_envelopes()), False)
        line = original + b"\r" if draw(st.booleans()) else original  # CRLF lines count
        good.append(line)
        everything.append(line)
        if draw(st.booleans()):
            everything.append(damage(draw, original))
        if draw(st.booleans()):
            everything.append(draw(st.binary(max_size=40)).replace(b"\n", b" "))
    return everything, good


def scan(lines: list[bytes], terminated: bool) -> tuple[MeterState, SessionScanner]:
    state = MeterState()
    scanner = SessionScanner(meter=state, on_audit=lambda call: None, on_value=lambda value: None)
    data = b"\n".join(lines) + (b"\n" if terminated and lines else b"")
    scanner.scan_stream(io.BytesIO(data))
    return state, scanner


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.booleans())
def test_damaged_lines_never_escape_and_never_count(
    corpus: tuple[list[bytes], list[bytes]], terminated: bool
) -> None:
    everything, good = corpus
    state, scanner = scan(everything, terminated)
    clean, _ = scan(good, True)
    d = scanner.diagnostics
    data = b"\n".join(everything) + (b"\n" if terminated and everything else b"")
    expected_lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    assert d.lines == expected_lines
    assert (
        d.empty_lines + d.ignored_lines + d.model_lines + d.trace_lines + d.oversized_lines
        == d.lines
    )
    assert (
        d.traces + d.rejected_traces + d.lines_without_trace + d.lines_without_details
        <= d.trace_lines
    )
    assert report_hash(state.finalize()) == report_hash(clean.finalize())


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(es.json_values(max_leaves=40))
def test_any_json_value_as_a_schema(schema: Any) -> None:
    surface = {"version": 1, "actions": [{"ref": "t.x", "inputSchema": schema}]}
    static_freedom(schema)
    surface_freedom_report(surface)
    stable_json_hash(schema)
    file_text(surface)
    assert accepts(schema, {"a": 1}) in (True, False)
    apply_proposals_to_surface(
        surface, [{"kind": "enum-tighten", "ref": "t.x", "key": "a", "values": [1]}]
    )
    assert validate_call("t.x", {"a": 1}, surface, None).stage in (None, "validate")


def test_schema_cycles_and_depth_return_quickly() -> None:
    deep: Any = {"type": "string"}
    for _ in range(10_000):
        deep = {"type": "object", "properties": {"a": deep}}
    for schema in (
        {"$ref": "#"},
        {"$defs": {"x": {"$ref": "#/$defs/x"}}, "$ref": "#/$defs/x"},
        deep,
    ):
        assert accepts(schema, {"a": {"a": "x"}}) in (True, False)
        assert static_freedom(schema) >= 0
        assert len(stable_json_hash(schema)) == 64
        surface = {"version": 1, "actions": [{"ref": "t.x", "inputSchema": schema}]}
        apply_proposals_to_surface(
            surface, [{"kind": "enum-tighten", "ref": "t.x", "key": "a", "values": ["x"]}]
        )


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_damaged_artifacts_and_pools_are_reported_never_raised(
    tmp_path: Path, data: st.DataObject
) -> None:
    artifact = {
        "version": 1, "metricVersion": 2,
        "actions": [{"ref": "a.b", "inputSchema": {"type": "object"}, "baseSchemaDigest": "d"}],
        "quarantined": [{"ref": "c.d", "baseSchemaDigest": "e"}],
        "applied": [{"kind": "enum-tighten", "ref": "a.b", "detail": "x"}],
        "gate": {"passed": True, "beforeScore": 0.5, "afterScore": 0.25, "reasons": []},
        "evidenceDigest": "f",
    }  # fmt: skip
    pool = merge_observation_window(
        None, [{"file": "w", "observations": [{"ref": "r", "key": "k", "value": "v"}]}]
    ).file
    for kind, value in ((COMPILED, artifact), (POOL, pool)):
        text = file_text(value)
        if data.draw(st.booleans()):
            mutated = text[: data.draw(st.integers(0, len(text)))]
        else:
            at = data.draw(st.integers(0, len(text) - 1))
            character = data.draw(st.sampled_from(['"', "1", "}", "[", "-", "t", " ", "\\"]))
            mutated = text[:at] + character + text[at + 1 :]
        path = tmp_path / kind.filename
        path.write_text(mutated, encoding="utf-8")
        loaded = load_path(path, kind)
        if loaded.error is not None:
            assert loaded.error in (f"{kind.label} is malformed JSON", f"{kind.label} is invalid")
        else:
            parser = parse_compiled_surface_artifact if kind is COMPILED else parse_observation_pool
            assert loaded.file == parser(json.loads(mutated))
