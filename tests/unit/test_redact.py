"""--redact-values: long, secret-shaped or secret-keyed values become digests; counts stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_entropy.core.pool import merge_observation_window
from pytest_entropy.core.records import ValueObservation
from pytest_entropy.core.redact import (
    REDACT_BOUND,
    is_redacted,
    looks_secret,
    redact_observation,
    redact_observed_value,
)
from pytest_entropy.core.steering import Steering
from pytest_entropy.run.watch import CompileLoop
from pytest_entropy.sources.locate import directory_session_files
from tests.cli.test_steering_cli import RATCHET
from tests.sessions_support import write_native_sessions as write_sessions

SECRETS = [
    "sk-" + "A1b2C3d4" * 4,
    "sk-proj-" + "x" * 40,
    "sk-ant-api03-" + "y" * 40,
    "ghp_" + "a" * 36,
    "github_pat_" + "b" * 40,
    "AKIAIOSFODNN7EXAMPLE",
    "AIza" + "c" * 35,
    "xoxb-1234567890-abcdef",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "Authorization: Bearer abcdefghijklmnop",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
]
PLAIN = ["pdf", "economy", "src/app.py", "sk-", "ghp_short", "bearer of news", "x" * REDACT_BOUND]


@pytest.mark.parametrize("secret", SECRETS)
def test_secret_shapes_are_redacted(secret: str) -> None:
    assert looks_secret(secret)
    shown = redact_observed_value("query", secret)
    assert is_redacted(shown) and secret not in shown
    assert redact_observed_value("query", secret) == shown  # deterministic: counts still add


@pytest.mark.parametrize("value", PLAIN)
def test_short_ordinary_values_stay(value: str) -> None:
    assert redact_observed_value("format", value) == value


def test_long_values_secret_keys_and_non_strings() -> None:
    long = "x" * (REDACT_BOUND + 1)
    assert is_redacted(redact_observed_value("body", long))
    assert is_redacted(redact_observed_value("apiKey", "abc"))
    assert is_redacted(redact_observed_value("client_secret", "abc"))
    assert redact_observed_value("max_tokens", "abc") == "abc"
    for value in (7, 2.5, True):
        assert redact_observed_value("token", value) == value
    digest = redact_observed_value("body", long)
    assert redact_observed_value("body", digest) == digest  # redacting twice is once
    assert redact_observed_value("body", long + "y") != digest
    same = ValueObservation("r", "k", "pdf", 3)
    assert redact_observation(same) is same


def test_a_redacted_pool_keeps_every_count() -> None:
    values = ["pdf", "x" * 500, "ghp_" + "z" * 36, "pdf", "x" * 500]
    window = [{"ref": "mcp.a", "key": "q", "value": v} for v in values]
    plain = merge_observation_window(None, [{"file": "a", "observations": window}]).file
    redacted_window = [
        redact_observation(ValueObservation("mcp.a", "q", v)).to_json() for v in values
    ]
    redacted = merge_observation_window(None, [{"file": "a", "observations": redacted_window}])
    (entry,) = redacted.file["entries"]
    assert entry["total"] == plain["entries"][0]["total"] == 5
    assert sorted(v["count"] for v in entry["values"]) == [1, 2, 2]
    assert "pdf" in json.dumps(redacted.file) and "ghp_" not in json.dumps(redacted.file)


def test_the_watch_loop_steers_and_redacts(tmp_path: Path) -> None:
    sessions, state = tmp_path / "sessions", tmp_path / "state"
    sessions.mkdir()
    traces = [dict(t) for t in RATCHET["input"]["traces"]]
    traces.append(
        {
            "taskKey": "secret",
            "operations": [
                {
                    "ref": "memory.expand",
                    "args": {"session": "ghp_" + "q" * 36},
                    "outcome": "succeeded",
                }
            ],
        }
    )
    write_sessions(sessions / "a.jsonl", traces)  # every call audited: the quarantine is vetoed
    surface = RATCHET["input"]["surface"]

    def loop(**more: object) -> CompileLoop:
        return CompileLoop(
            window=lambda: directory_session_files(sessions),
            surface=surface,
            state_dir=state,
            **more,  # type: ignore[arg-type]
        )

    assert loop().tick().status == "rejected"
    result = loop(steering=Steering(partial=True), redact_values=True).tick()
    assert result.status == "compiled" and result.written
    (compiled,) = [n for n in result.notices if n.kind == "compiled"]
    assert "mcp.report.render.format" in compiled.text and "hid" not in compiled.text
    artifact = json.loads((state / "compiled.json").read_text(encoding="utf-8"))
    assert artifact["quarantined"] == []
    pool = (state / "observation-pool.json").read_text(encoding="utf-8")
    assert "ghp_" not in pool and "[redacted sha256:" in pool
