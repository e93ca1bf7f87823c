"""The ratchet in a tool author's suite: a loosening fails, ``--entropy-accept`` records a
reasoned acceptance in the baseline, ``--entropy-update`` upgrades an old baseline."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ("pytester",)

TEST = """
import json, pathlib

def test_surface(entropy_ratchet):
    entropy_ratchet.check(json.loads(pathlib.Path("tools.json").read_text()), name="server")
"""


def _tools(pytester: pytest.Pytester, schema: dict[str, object]) -> None:
    value = {"tools": [{"name": "search", "inputSchema": schema}]}
    (pytester.path / "tools.json").write_text(json.dumps(value), encoding="utf-8")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_loosen_fail_accept_pass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(TEST)
    _tools(pytester, {"type": "object", "properties": {"query": {"type": "string"}}})
    run(pytester).assert_outcomes(passed=1)  # the baseline is created
    _tools(pytester, {"type": "object", "properties": {"query": {}}})
    failed = run(pytester)
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [
            "*the surface loosened against the baseline 'server'*",
            '*loosened: search:query: type ("string" → null)*',
            "*--entropy-accept REF?:PATH?=REASON*",
        ]
    )
    run(pytester, "--entropy-accept", "search:query=clients send numbers too").assert_outcomes(
        passed=1
    )
    entry = json.loads((pytester.path / "entropy-baseline.json").read_text())["entries"]["server"]
    assert entry["accepted"] == [
        {"ref": "search", "path": "query", "rule": "type", "reason": "clients send numbers too"}
    ]
    monkeypatch.setenv("CI", "1")
    run(pytester).assert_outcomes(passed=1)  # the file carries the acceptance


def test_old_baselines_are_upgraded_by_update(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "1")
    pytester.makepyfile(TEST)
    _tools(pytester, {"type": "object", "properties": {"query": {"type": "string"}}})
    old = {"kind": "surface", "freedomTotal": 1.75, "refs": {"search": 1.75}}
    (pytester.path / "entropy-baseline.json").write_text(
        json.dumps({"kind": "pytest-entropy.baseline", "version": 1, "entries": {"server": old}})
    )
    run(pytester).assert_outcomes(passed=1)
    run(pytester, "--entropy-update").assert_outcomes(passed=1)
    entry = json.loads((pytester.path / "entropy-baseline.json").read_text())["entries"]["server"]
    assert entry["schemas"] == {
        "search": {"type": "object", "properties": {"query": {"type": "string"}}}
    }
    _tools(pytester, {"type": "object", "properties": {"query": {}}})
    run(pytester).assert_outcomes(failed=1)
