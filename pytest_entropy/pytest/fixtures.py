"""Fixtures for tool authors (``pytest --fixtures`` shows these docstrings).

Loading this module is cheap: the meter, the ratchet and syrupy are imported only when a
fixture is used. The assertion helpers live in :mod:`pytest_entropy.testing.assertions`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_entropy.pytest.options import settings_from_pytest
from pytest_entropy.pytest.stash import SETTINGS_KEY
from pytest_entropy.state.option_table import EntropySettings, is_ci

if TYPE_CHECKING:
    from pytest_entropy.testing.assertions import EntropyMeter, EntropyRatchet

__all__ = [
    "entropy_meter",
    "entropy_ratchet",
    "entropy_sessions",
    "entropy_snapshot",
    "entropy_surface",
]


def _settings(config: pytest.Config) -> EntropySettings:
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None:  # the module was registered without the plugin's configure hook
        settings = settings_from_pytest(config)
        config.stash[SETTINGS_KEY] = settings
    return settings


def _load_surface(settings: EntropySettings) -> dict[str, Any] | None:
    """The configured surface through the one loader every command uses (a file of any
    format or a server, within ``--entropy-mcp-timeout``)."""
    source: str | Path | None = settings.surface_server or settings.surface
    if source is None:
        return None
    from pytest_entropy.sources.surface import load_surface

    return load_surface(
        source, surface_format=settings.surface_format, timeout=settings.mcp_timeout
    )


@pytest.fixture
def entropy_surface(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The surface snapshot named by ``--entropy-surface FILE`` (ini ``entropy_surface``).

    A fresh dict per test, ``{"version": 1, "actions": [{"ref", "inputSchema"}]}``; MCP
    ``tools/list`` results and OpenAI/Anthropic/Gemini tool arrays are converted. The option
    may also name an MCP server: ``module:attribute`` (a server object, listed in memory),
    ``mcp+stdio:COMMAND ARGS`` or an ``http(s)://`` URL. Example::

        def test_no_free_strings(entropy_surface):
            from pytest_entropy.testing.assertions import assert_no_entropy_increase
            assert_no_entropy_increase(entropy_surface, my_server.snapshot())
    """
    settings = _settings(request.config)
    if settings.surface is None and settings.surface_server is None:
        pytest.fail(
            "entropy_surface: no surface configured (pass --entropy-surface FILE or set"
            " entropy_surface in the ini file)",
            pytrace=False,
        )
    surface = _load_surface(settings)
    assert surface is not None
    return surface


@pytest.fixture
def entropy_sessions(request: pytest.FixtureRequest) -> list[Path]:
    """The session files named by ``--entropy-sessions PATH`` (ini ``entropy_sessions``).

    A directory means its ``*.jsonl`` (and ``*.jsonl.gz``) files in name order. Example::

        def test_corpus_is_not_empty(entropy_sessions, entropy_meter):
            assert entropy_meter(entropy_sessions).totals.operations > 0
    """
    settings = _settings(request.config)
    if settings.sessions is None:
        pytest.fail(
            "entropy_sessions: no sessions configured (pass --entropy-sessions PATH or set"
            " entropy_sessions in the ini file)",
            pytrace=False,
        )
    from pytest_entropy.ingest.base import ReadOptions
    from pytest_entropy.sources.locate import expand_session_paths

    # A directory means what it means to `measure` under --entropy-format (default auto).
    return expand_session_paths([settings.sessions], ReadOptions(settings.session_format))


@pytest.fixture
def entropy_meter(request: pytest.FixtureRequest) -> EntropyMeter:
    """Measures traces or session files into an entropy report (metric v2).

    ``entropy_meter()`` measures the configured sessions against the configured surface
    and repairs; pass traces, files or directories, and ``surface=``/``repairs=``, to
    measure anything else. Files are read in ``--entropy-format`` (ini ``entropy_format``,
    default ``auto``), the surface in ``--entropy-surface-format``. Example::

        def test_render_tool_converged(entropy_meter):
            report = entropy_meter("tests/sessions", surface=my_surface)
            assert report.behavioral_score == 0
            assert entropy_meter.hash(report) == "0019f9f7..."
    """
    from pytest_entropy.testing.assertions import EntropyMeter

    settings = _settings(request.config)

    def repairs() -> Any:
        if settings.repairs is None:
            return None
        from pytest_entropy.ingest.surfaces import load_repairs

        return load_repairs(settings.repairs)

    def surface() -> dict[str, Any] | None:
        return _load_surface(settings)

    # Session files are read as `measure` reads them under --entropy-format (default auto).
    return EntropyMeter(
        settings.sessions,
        surface,
        repairs,
        session_format=settings.session_format,
        metric_version=settings.metric_version,
    )


@pytest.fixture
def entropy_ratchet(request: pytest.FixtureRequest) -> EntropyRatchet:
    """The ratchet: ``entropy_ratchet.check(surface_or_report)`` never lets entropy rise.

    Compares with the entry named after the test in ``entropy-baseline.json`` in the
    rootdir (or ``--entropy-baseline FILE`` / ini ``entropy_baseline``): for a surface (any
    format, a path or an MCP server) its schemas, failing on any loosening (a call accepted
    that was refused, named by tool, parameter path and rule), plus the freedom total and
    per-tool freedom; for a report the score, static/behavioral split and rejections per 1k.
    A rise of more than 1e-6 fails, and so does a new tool unless ``allow_new_tools=True``;
    a fall passes and says the baseline can be lowered. A missing entry is created, except
    in CI (``CI`` set and not ``0``/``false``), where it fails. ``--entropy-update``
    rewrites the entry; ``--entropy-accept REF[:PATH]=REASON`` accepts a loosening. A server
    has ``check(..., timeout=SECONDS)`` (default ``--entropy-mcp-timeout``, else 30) to list
    its tools. Example::

        def test_surface_ratchet(entropy_ratchet):
            entropy_ratchet.check(my_server.surface_snapshot())
    """
    from pytest_entropy.testing.assertions import EntropyRatchet

    settings = _settings(request.config)
    return EntropyRatchet(
        settings.baseline,
        default_name=request.node.nodeid,
        update=settings.update,
        ci=is_ci(),
        notes=request.node.user_properties,
        accept=settings.accept,
        timeout=settings.mcp_timeout,
    )


@pytest.fixture
def entropy_snapshot(request: pytest.FixtureRequest) -> Any:
    """syrupy's ``snapshot`` storing an entropy report as its hash plus canonical JSON.

    One ``.entropy.json`` file per assertion; update with ``--snapshot-update``. Needs the
    ``syrupy`` extra (``pip install "pytest-entropy[syrupy]"``). Example::

        def test_report_snapshot(entropy_meter, entropy_snapshot):
            assert entropy_meter() == entropy_snapshot
    """
    # Imported first: without syrupy the test fails naming the extra, not a missing fixture.
    from pytest_entropy.testing.snapshot import EntropyReportExtension

    snapshot = request.getfixturevalue("snapshot")
    return snapshot.use_extension(EntropyReportExtension)
