"""The sessions gate as test items: ``entropy-gate::max-score`` and ``entropy-gate::baseline``.

``--entropy-max-score X`` and ``--entropy-baseline FILE`` (with ``--entropy-sessions``) gate
the corpus the way ``pytest-entropy measure`` reads it. Each is one item after the project's
own tests, so pytest's summary line counts a failed gate (before, a run could end in a green
``3 passed`` with exit status 1). Both items share one measurement per process; an empty
corpus (no operations) fails them, naming what was read, unless ``--entropy-allow-empty``.
Their lines also reach the entropy section of the terminal summary (through the items'
user properties, so they cross from pytest-xdist workers too). Without
``--entropy-certify``, the measurement is written to ``--entropy-json`` (the bytes of
``pytest-entropy measure --json``), ``--entropy-markdown`` and ``--entropy-html`` (the
``measure`` report kind) by the process that measured it; a file that cannot be written
fails the gate items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_entropy.pytest.stash import GATE_LINE

if TYPE_CHECKING:
    from pytest_entropy.core.records import Report
    from pytest_entropy.state.config import EntropySettings
    from pytest_entropy.testing.ratchet import RatchetResult

__all__ = [
    "GATE_LINE",
    "GateCollector",
    "GateFailed",
    "GateItem",
    "GateMeasurement",
    "gate_items",
    "measure_gate",
]

NODE: Final = "entropy-gate"
MAX_SCORE: Final = "max-score"
BASELINE: Final = "baseline"
CORPUS_BASELINE_ENTRY: Final = "corpus"
_MEASUREMENT_KEY: pytest.StashKey[GateMeasurement] = pytest.StashKey()


class GateFailed(Exception):
    """The sessions gate did not pass (or could not measure the corpus)."""


@dataclass(slots=True)
class GateMeasurement:
    """The gate's one measurement: the report and its header line, or why there is none;
    ``warnings`` name files the read passed over."""

    report: Report | None
    lines: list[str]
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Measured:
    report: Report
    warnings: list[str]
    document: dict[str, Any]  # the measure --json document
    surface: dict[str, Any] | None


def _measure_sessions(settings: EntropySettings) -> _Measured:
    from pytest_entropy.core.errors import EntropyInputError
    from pytest_entropy.core.status import surface_hash
    from pytest_entropy.ingest.base import ReadOptions
    from pytest_entropy.ingest.surfaces import load_repairs
    from pytest_entropy.run.corpus import measure_plan, read_corpus, source_files
    from pytest_entropy.run.empty import check_not_empty
    from pytest_entropy.sources.locate import session_listing
    from pytest_entropy.sources.surface import load_surface

    if settings.sessions is None:
        raise EntropyInputError("the gate needs --entropy-sessions")
    named_surface = settings.surface_server or (
        str(settings.surface) if settings.surface is not None else None
    )
    surface = (
        load_surface(
            named_surface, surface_format=settings.surface_format, timeout=settings.mcp_timeout
        )
        if named_surface is not None
        else None
    )
    repairs = load_repairs(settings.repairs) if settings.repairs is not None else None
    # The same rule as `pytest-entropy measure`: every file scanned alone, in order, with
    # the surface at hand for foreign readers that classify failure stages by it.
    options = ReadOptions(
        session_format=settings.session_format,
        surface=surface,
        metric_version=settings.metric_version,
    )
    exclude = [str(path) for path in (settings.surface, settings.repairs) if path is not None]
    listing = session_listing([settings.sessions], options, exclude)
    read = read_corpus(source_files(listing.files, listing.skipped), measure_plan(options))
    diagnostics = read.diagnostics
    problems = diagnostics.unreadable_files + diagnostics.unrecognized_files
    if settings.strict and problems:
        shown = "; ".join(
            diagnostics.samples[:3]
            or (diagnostics.unreadable_names + diagnostics.unrecognized_names)[:3]
        )
        raise EntropyInputError(
            f"--entropy-strict: {problems} unreadable or unrecognised session file(s): {shown}"
        )
    check_not_empty(
        diagnostics,
        allow_empty=settings.allow_empty,
        session_format=settings.session_format,
        flags="--entropy-",
    )
    from pytest_entropy.report.text import corpus_warnings

    warnings = corpus_warnings(diagnostics, flags="--entropy-")
    digest = surface_hash(surface) if surface is not None else ""
    report = read.state.finalize(surface, repairs, digest, metric_version=settings.metric_version)
    from pytest_entropy.core.meter import report_hash

    document = {
        "reportHash": report_hash(report),
        "report": report.to_json(),
        "diagnostics": diagnostics.to_json(),
    }
    return _Measured(report, warnings, document, surface)


def _write_reports(settings: EntropySettings, measured: _Measured) -> list[str]:
    """``--entropy-json``/``--entropy-markdown``/``--entropy-html`` of the gated measurement
    (certification writes its own report instead); the summary lines naming them."""
    if settings.certify:
        return []
    from pytest_entropy.core.canonical import file_text
    from pytest_entropy.report.files import write_report_files
    from pytest_entropy.state.store import write_file_atomic

    inputs = [str(settings.sessions)] if settings.sessions is not None else []
    lines = []
    if settings.json is not None:
        write_file_atomic(settings.json, file_text(measured.document), mode=0o644)
        lines.append(f"  JSON report: {settings.json}")
    for label, path, name in (
        ("Markdown", settings.markdown, "markdown"),
        ("HTML report", settings.html, "html"),
    ):
        if path is not None:
            write_report_files(
                measured.document,
                kind="measure",
                surface=measured.surface,
                inputs=inputs,
                **{name: path},
            )
            lines.append(f"  {label}: {path}")
    return lines


def measure_gate(config: pytest.Config, settings: EntropySettings) -> GateMeasurement:
    """Measure the gated corpus once per process (cached on the config)."""
    cached = config.stash.get(_MEASUREMENT_KEY, None)
    if cached is not None:
        return cached
    try:
        read = _measure_sessions(settings)
    except Exception as error:
        line = f"entropy gate: cannot measure the sessions: {error}"
        measured = GateMeasurement(None, [line], error=line)
    else:
        from pytest_entropy.core.jscompat import js_string

        report, warnings = read.report, read.warnings
        hashed = read.document["reportHash"]
        header = (
            f"entropy gate: sessions score {js_string(report.score)} (static"
            f" {js_string(report.static_score)}, behavioral {js_string(report.behavioral_score)})"
            f" · report {hashed[:12]}"
        )
        measured = GateMeasurement(report, [*warnings, header], warnings=warnings)
        try:
            measured.lines.extend(_write_reports(settings, read))
        except Exception as error:  # pygal missing, a directory not writable: the gate fails
            line = f"entropy gate: cannot write the report: {error}"
            measured.lines.append(line)
            measured.error = line
        _junit_gate(config, report, hashed)
    config.stash[_MEASUREMENT_KEY] = measured
    return measured


def _junit_gate(config: pytest.Config, report: Report, hashed: str) -> None:
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a pytest without the junitxml stash key
        return
    xml = config.stash.get(xml_key, None)
    if xml is not None:
        xml.add_global_property("entropy_sessions_score", report.score)
        xml.add_global_property("entropy_sessions_report_hash", hashed)


def _ratchet(settings: EntropySettings, report: Report) -> RatchetResult:
    from pytest_entropy.state.config import is_ci
    from pytest_entropy.testing.ratchet import check_baseline

    return check_baseline(
        settings.baseline,
        CORPUS_BASELINE_ENTRY,
        report,
        update=settings.update,
        ci=is_ci(),
        size_factor=settings.size_factor,
    )


class GateItem(pytest.Item):
    """One gate: ``max-score`` (the score within ``--entropy-max-score``) or ``baseline``
    (the corpus ratchet entry of ``--entropy-baseline``)."""

    def __init__(self, *, settings: EntropySettings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings

    def _lines(self, lines: list[str]) -> None:
        from pytest_entropy.report.names import terminal_line

        # Display lines (the summary prints them): a name's controls are escaped.
        self.user_properties.extend((GATE_LINE, terminal_line(line)) for line in lines)

    def runtest(self) -> None:
        from pytest_entropy.report.names import terminal_line

        measured = measure_gate(self.config, self.settings)
        self._lines(measured.lines)
        report = measured.report
        if report is None or measured.error is not None:
            raise GateFailed(terminal_line(measured.error or "the sessions could not be measured"))
        self.user_properties.append(("entropy_sessions_score", report.score))
        if self.name == MAX_SCORE:
            from pytest_entropy.core.jscompat import js_string

            limit = self.settings.max_score
            if limit is None:  # pragma: no cover - the item exists only with the option
                return
            within = report.score <= limit
            verdict = "within" if within else "ABOVE"
            line = f"  score {js_string(report.score)} is {verdict} the maximum {limit:g}"
            self._lines([line])
            if not within:
                raise GateFailed(f"{terminal_line(measured.lines[-1])}\n{terminal_line(line)}")
            return
        result = _ratchet(self.settings, report)
        lines = [f"  {line}" for line in result.lines()]
        self._lines(lines)
        if not result.passed:
            raise GateFailed("\n".join(map(terminal_line, [measured.lines[-1], *lines])))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GateFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{NODE}::{self.name}"


class GateCollector(pytest.Collector):
    """The parent of the gate items (there may be no test file at all)."""

    def __init__(self, *, settings: EntropySettings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings

    def collect(self) -> list[pytest.Item]:
        names = []
        if self.settings.max_score is not None:
            names.append(MAX_SCORE)
        if self.settings.baseline_given:
            names.append(BASELINE)
        return [GateItem.from_parent(self, name=name, settings=self.settings) for name in names]


def gate_items(session: pytest.Session, settings: EntropySettings) -> list[pytest.Item]:
    """The gate items under one ``entropy-gate`` collector."""
    collector = GateCollector.from_parent(session, name=NODE, nodeid=NODE, settings=settings)
    return list(collector.collect())
