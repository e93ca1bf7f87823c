"""``entropy_meter`` and the assertion helpers read session files in ``--entropy-format``
(ini ``entropy_format``), as the ``entropy_sessions`` fixture and ``measure --format`` do,
and the surface in ``--entropy-surface-format``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.testing.assertions import compare_surfaces
from pytest_entropy.testing.session_defaults import configured_session_format
from tests.unit.test_readers import mcp_log

pytest_plugins = ("pytester",)

RENDER = {"type": "object", "properties": {"format": {"enum": ["pdf", "html"]}}}
SURFACE = {"version": 1, "actions": [{"ref": "render", "inputSchema": RENDER}]}

PROBE = """
import json
from pytest_entropy.testing.assertions import assert_no_entropy_increase, compare_surfaces

def test_probe(entropy_meter, entropy_sessions, entropy_surface):
    report = entropy_meter()
    compared = compare_surfaces(entropy_surface, entropy_surface, entropy_sessions)
    asserted = assert_no_entropy_increase(entropy_surface, entropy_surface, entropy_sessions)
    with open("probe.json", "w", encoding="utf-8") as out:
        json.dump(
            {
                "hash": entropy_meter.hash(report),
                "operations": report.totals.operations,
                "compared": compared.before_report.totals.operations,
                "asserted": asserted.after_report.totals.operations,
            },
            out,
        )
"""


def _probe(pytester: pytest.Pytester, *args: str) -> dict[str, Any]:
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1)
    value: dict[str, Any] = json.loads((pytester.path / "probe.json").read_text("utf-8"))
    return value


def _measured_hash(capsys: pytest.CaptureFixture[str], sessions: Path, surface: Path) -> str:
    argv = ["measure", "--sessions", str(sessions), "--surface", str(surface), "--format", "mcp"]
    capsys.readouterr()  # what the inner pytest runs printed
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    digest: str = json.loads(captured.out)["reportHash"]
    return digest


def test_the_meter_and_the_assertions_read_the_configured_format(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = pytester.path / "logs"
    sessions.mkdir()
    mcp_log(sessions)  # an MCP JSON-RPC log, no native trace in it
    surface = pytester.path / "surface.json"
    surface.write_text(json.dumps(SURFACE), encoding="utf-8")
    pytester.makepyfile(test_probe=PROBE)
    ini = f"[pytest]\nentropy_sessions = {sessions}\nentropy_surface = {surface}\n"
    pytester.makeini(ini)
    outer = configured_session_format()

    mcp = _probe(pytester, "--entropy-format=mcp", "--entropy-surface-format=snapshot")
    # The fixture measures exactly what `measure --format mcp` measures, surface included
    # (the reader classifies the refused enum value by it).
    assert mcp["hash"] == _measured_hash(capsys, sessions, surface)
    assert mcp["operations"] == mcp["compared"] == mcp["asserted"] == 7
    assert _probe(pytester) == mcp  # auto recognises the log

    native = _probe(pytester, "--entropy-format=fabric")
    assert native["operations"] == native["compared"] == native["asserted"] == 0
    pytester.makeini(ini + "entropy_format = fabric\n")
    assert _probe(pytester)["operations"] == 0
    assert _probe(pytester, "--entropy-format=mcp")["operations"] == 7  # command line wins

    # Each inner run restored the outer session's default when it ended.
    assert configured_session_format() == outer


def test_the_helpers_take_a_format_outside_pytest(tmp_path: Path) -> None:
    log = mcp_log(tmp_path)
    auto = compare_surfaces(SURFACE, SURFACE, log)
    native = compare_surfaces(SURFACE, SURFACE, log, session_format="fabric")
    assert auto.before_report is not None and native.before_report is not None
    assert auto.before_report.totals.operations == 7
    assert native.before_report.totals.operations == 0
