"""Assertion helpers and small objects for tool authors' own tests.

They need no pytest (the fixtures in :mod:`pytest_entropy.pytest.fixtures` hand out the objects)::

    from pytest_entropy.testing.assertions import assert_no_entropy_increase

    def test_new_schema_is_not_looser(old_surface, new_surface):
        assert_no_entropy_increase(old_surface, new_surface)

Failures raise ``AssertionError`` with a short header and a capped list of what rose; the
helpers set ``__tracebackhide__`` so pytest shows the caller's line, not ours.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_entropy.core.canonical import canonical_json, file_text, js_stringify, stable_json_hash
from pytest_entropy.core.fingerprint import static_freedom, surface_freedom_report
from pytest_entropy.core.inputs import surface_from_value
from pytest_entropy.core.jscompat import code_unit_key, js_string, round_metric
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.core.records import RepairRow, Report, Trace
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.surface_diff import (
    AcceptedLoosening,
    SchemaChange,
    accepted_from_value,
    diff_snapshots,
)
from pytest_entropy.report.names import terminal_lines
from pytest_entropy.testing.ratchet import RatchetResult, check_baseline

__all__ = [
    "EntropyComparison",
    "EntropyMeter",
    "EntropyRatchet",
    "FreedomChange",
    "assert_deterministic",
    "assert_no_entropy_increase",
    "assert_ratchet",
    "compare_surfaces",
    "result_hash",
    "snapshot_text",
]

TOLERANCE: Final = 1e-6
MESSAGE_LIMIT: Final = 20
ADDITIONAL = "(additional properties)"

Sessions = str | os.PathLike[str] | Sequence[Any]


# ------------------------------------------------------------------ session inputs


def _is_path(value: Any) -> bool:
    return isinstance(value, str | os.PathLike)


def traces_of(
    sessions: Sessions,
    *,
    session_format: str | None = None,
    surface: Mapping[str, Any] | None = None,
    metric_version: int = 2,
) -> list[Trace | Mapping[str, Any]]:
    """Traces from session files/directories, or the traces themselves when given.

    Files are read as ``pytest-entropy measure --format`` reads them: ``session_format``,
    else the one the running pytest session configured (``--entropy-format``), else
    ``auto``; ``surface`` lets a foreign reader classify failure stages by it."""
    items: list[Any] = [sessions] if isinstance(sessions, str | os.PathLike) else list(sessions)
    if items and all(_is_path(item) for item in items):
        from pytest_entropy.ingest.base import ReadOptions
        from pytest_entropy.run.corpus import read_corpus, records_plan, source_files
        from pytest_entropy.sources.locate import expand_session_paths
        from pytest_entropy.testing.session_defaults import configured_session_format

        options = ReadOptions(
            session_format=session_format or configured_session_format(),
            surface=dict(surface) if surface is not None else None,
            metric_version=metric_version,
        )
        read = read_corpus(
            source_files(expand_session_paths(items, options)), records_plan(options)
        )
        return list(read.records.traces)
    return [Trace.from_json(item) if isinstance(item, Mapping) else item for item in items]


# ------------------------------------------------------------------ surface changes


@dataclass(frozen=True, slots=True)
class FreedomChange:
    """The freedom of one ref (``parameter`` ``None``) or of one of its parameters."""

    ref: str
    parameter: str | None
    before: float | None
    after: float | None

    @property
    def delta(self) -> float:
        return round_metric((self.after or 0.0) - (self.before or 0.0))

    @property
    def rose(self) -> bool:
        return self.delta > TOLERANCE

    def text(self) -> str:
        name = self.ref if self.parameter is None else f"{self.ref}.{self.parameter}"
        if self.before is None:
            kind = "new tool" if self.parameter is None else "new parameter"
            return f"{name}: {kind} (freedom {js_string(self.after or 0.0)})"
        if self.after is None:
            kind = "tool removed" if self.parameter is None else "parameter removed"
            return f"{name}: {kind} (was {js_string(self.before)})"
        sign = "+" if self.delta > 0 else ""
        return (
            f"{name}: {js_string(self.before)} → {js_string(self.after)}"
            f" ({sign}{js_string(self.delta)})"
        )


def _parameters(schema: Any) -> dict[str, float]:
    """Each parameter's share of the ref's static freedom (spec §2.6 object rule)."""
    if type(schema) is not dict or schema.get("type") != "object":
        return {}
    properties = schema.get("properties")
    if type(properties) is not dict or not properties:
        return {}
    required = schema.get("required")
    required_names = set(required) if type(required) is list else set()
    shares = {
        key: round_metric(static_freedom(value, 1) + (0.0 if key in required_names else 0.25))
        for key, value in properties.items()
    }
    if schema.get("additionalProperties") is not False:
        shares[ADDITIONAL] = 0.5
    return shares


def _schemas(surface: Mapping[str, Any]) -> dict[str, Any]:
    return {action["ref"]: action.get("inputSchema") for action in surface["actions"]}


@dataclass(frozen=True, slots=True)
class EntropyComparison:
    """Static freedom (and, with sessions, the score) before and after a surface change."""

    before_total: float
    after_total: float
    changes: tuple[FreedomChange, ...]
    before_report: Report | None = None
    after_report: Report | None = None
    # What the new schemas accept that the old ones refused (containment, not freedom).
    loosened: tuple[SchemaChange, ...] = ()
    accepted: tuple[SchemaChange, ...] = ()
    # Tools whose freedom may rise: containment proved them no looser (or their loosenings
    # were accepted); the v2 freedom prices a typed parameter above an untyped one.
    explained: frozenset[str] = frozenset()

    @property
    def failed(self) -> bool:
        """Whether the change must not pass: a schema loosened, the score rose, or a tool's
        freedom rose that containment does not explain."""
        if self.loosened or self.score_rose:
            return True
        unexplained = [c for c in self.ref_rises if c.ref not in self.explained]
        return bool(unexplained)

    @property
    def ref_rises(self) -> list[FreedomChange]:
        return [c for c in self.changes if c.parameter is None and c.rose]

    @property
    def score_rose(self) -> bool:
        if self.before_report is None or self.after_report is None:
            return False
        return self.after_report.score - self.before_report.score > TOLERANCE

    @property
    def rose(self) -> bool:
        """Whether entropy rose: the total, any tool's freedom, or the sessions' score."""
        total_rose = self.after_total - self.before_total > TOLERANCE
        return total_rose or bool(self.ref_rises) or self.score_rose

    def message(self, limit: int = MESSAGE_LIMIT) -> str:
        delta = round_metric(self.after_total - self.before_total)
        freedom = (
            f"static freedom {js_string(self.before_total)} → {js_string(self.after_total)}"
            f" ({'+' if delta > 0 else ''}{js_string(delta)})"
        )
        loose: list[str] = []
        if self.loosened:
            loose.append(
                f"the surface loosened: {len(self.loosened)} change(s) let a tool accept calls"
                " it refused before"
            )
            loose.extend(f"  loosened: {change.text()}" for change in self.loosened[:limit])
            if len(self.loosened) > limit:
                loose.append(f"  ... and {len(self.loosened) - limit} more loosenings")
        verdict = f"entropy rose: {freedom}" if self.rose else f"entropy did not rise: {freedom}"
        # The first line says the worst news: a rise (as it always did), else a loosening.
        lines = [verdict, *loose] if self.rose else [*loose, verdict]
        lines.extend(f"  accepted: {change.text()}" for change in self.accepted[:limit])
        if self.before_report is not None and self.after_report is not None:
            before, after = self.before_report, self.after_report
            lines.append(
                f"  score over the sessions: {js_string(before.score)} → {js_string(after.score)}"
                f" (static {js_string(before.static_score)} → {js_string(after.static_score)},"
                f" behavioral {js_string(before.behavioral_score)} →"
                f" {js_string(after.behavioral_score)})"
            )
        rising = [c for c in self.changes if c.rose]
        for change in rising[:limit]:
            indent = "  " if change.parameter is None else "    "
            lines.append(indent + change.text())
        if len(rising) > limit:
            lines.append(f"  ... and {len(rising) - limit} more")
        return "\n".join(lines)


def _surface(value: Any, side: str) -> dict[str, Any]:
    if isinstance(value, Mapping) and "actions" in value:
        return surface_from_value(dict(value), source=f"{side} surface")
    from pytest_entropy.sources.surface import load_surface

    return load_surface(value)


def compare_surfaces(
    before_surface: Any,
    after_surface: Any,
    sessions: Sessions | None = None,
    *,
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    accepted: Iterable[AcceptedLoosening] = (),
    session_format: str | None = None,
) -> EntropyComparison:
    """Freedom per ref and parameter, and what loosened, before and after; with sessions,
    both reports too. Each surface is anything :func:`pytest_entropy.load_surface` reads;
    session files are read in ``session_format`` (see :func:`traces_of`)."""
    before = _surface(before_surface, "before")
    after = _surface(after_surface, "after")
    diff = diff_snapshots(before, after, accepted=accepted)
    old, new = _schemas(before), _schemas(after)
    changes: list[FreedomChange] = []
    for ref in sorted(set(old) | set(new), key=code_unit_key):
        old_freedom = static_freedom(old[ref]) if ref in old else None
        new_freedom = static_freedom(new[ref]) if ref in new else None
        changes.append(FreedomChange(ref, None, old_freedom, new_freedom))
        if ref in old and ref in new:
            old_params, new_params = _parameters(old[ref]), _parameters(new[ref])
            for key in sorted(set(old_params) | set(new_params), key=code_unit_key):
                changes.append(FreedomChange(ref, key, old_params.get(key), new_params.get(key)))
    before_report = after_report = None
    if sessions is not None:
        repair_list = list(repairs) if repairs is not None else None
        # Each side's report reads the files with its own surface, as `measure` would.
        before_traces = traces_of(sessions, session_format=session_format, surface=before)
        after_traces = traces_of(sessions, session_format=session_format, surface=after)
        before_report = measure(before_traces, before, repair_list, surface_hash(before))
        after_report = measure(after_traces, after, repair_list, surface_hash(after))
    return EntropyComparison(
        surface_freedom_report(before)["total"],
        surface_freedom_report(after)["total"],
        tuple(changes),
        before_report,
        after_report,
        diff.loosened,
        diff.accepted,
        frozenset(
            ({ref for ref in new if ref in old} | {c.ref for c in diff.accepted})
            - {c.ref for c in diff.loosened}
        ),
    )


def assert_no_entropy_increase(
    before_surface: Any,
    after_surface: Any,
    sessions: Sessions | None = None,
    *,
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    accepted: Iterable[AcceptedLoosening | Mapping[str, Any]] = (),
    session_format: str | None = None,
) -> EntropyComparison:
    """Fail when the new surface accepts a call the old one refused, is freer, or (with
    sessions) scores worse.

    Surfaces are anything :func:`pytest_entropy.load_surface` reads (snapshots, MCP
    ``tools/list`` results, tool arrays, paths, SDK tools, servers). ``sessions`` are session
    files or directories, or traces; files are read in ``session_format``, by default the
    ``--entropy-format`` of the running pytest session (else ``auto``). The failure message
    names every loosening (tool, parameter path, rule) and every tool and parameter whose
    freedom rose; ``accepted`` items ``{ref, path, rule, reason}`` let deliberate loosenings pass::

        assert_no_entropy_increase(load("v1.json"), load("v2.json"), sessions="recorded/")
    """
    __tracebackhide__ = True
    allowed = [
        item if isinstance(item, AcceptedLoosening) else accepted_from_value([dict(item)])[0]
        for item in accepted
    ]
    comparison = compare_surfaces(
        before_surface,
        after_surface,
        sessions,
        repairs=repairs,
        accepted=allowed,
        session_format=session_format,
    )
    if comparison.failed:
        raise AssertionError(terminal_lines(comparison.message()))
    return comparison


def assert_ratchet(
    surface_or_report: Any,
    baseline: str | os.PathLike[str] = "entropy-baseline.json",
    *,
    name: str,
    update: bool = False,
    ci: bool | None = None,
    allow_new_tools: bool = False,
    accept: Sequence[str] = (),
) -> RatchetResult:
    """The ratchet without the fixture: fail when entry ``name`` of ``baseline`` rose.

    ``ci`` defaults to the ``CI`` environment variable (a missing entry fails in CI)::

        assert_ratchet(server.surface_snapshot(), "entropy-baseline.json", name="server")
    """
    __tracebackhide__ = True
    from pytest_entropy.state.config import is_ci

    result = check_baseline(
        Path(baseline),
        name,
        surface_or_report,
        update=update,
        ci=is_ci() if ci is None else ci,
        allow_new_tools=allow_new_tools,
        accept=accept,
    )
    if not result.passed:
        raise AssertionError(terminal_lines(result.message()))
    return result


# ---------------------------------------------------------------------- determinism


def _json_of(value: Any) -> Any:
    if isinstance(value, Report):
        return value.to_json()
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    return value


def result_hash(value: Any) -> str:
    """The stable hash of a report (its report hash) or of any JSON-able result."""
    if isinstance(value, Report):
        return report_hash(value)
    return stable_json_hash(_json_of(value))


def _first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=code_unit_key):
            if key not in a or key not in b:
                return f"{path}.{key} present in one run only"
            found = _first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{path} has {len(a)} items, then {len(b)}"
        return None
    if canonical_json(a) != canonical_json(b):
        return f"{path}: {js_stringify(a)[:80]} then {js_stringify(b)[:80]}"
    return None


def assert_deterministic(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """Call ``fn(*args, **kwargs)`` twice; fail unless both results hash the same.

    Returns the hash. ``fn`` returns a report, anything with ``to_json()``, or JSON::

        assert_deterministic(measure, traces, surface)
    """
    __tracebackhide__ = True
    first = fn(*args, **kwargs)
    second = fn(*args, **kwargs)
    first_hash, second_hash = result_hash(first), result_hash(second)
    if first_hash != second_hash:
        where = _first_difference(_json_of(first), _json_of(second)) or "(no JSON difference)"
        raise AssertionError(
            f"not deterministic: report hashes {first_hash} vs {second_hash}\n  first difference:"
            f" {where}"
        )
    return first_hash


def snapshot_text(value: Any) -> str:
    """A report as a snapshot file: its hash and its canonical JSON, laid out as a file."""
    import json

    body = _json_of(value)
    hashed = report_hash(body) if isinstance(value, Report) else stable_json_hash(body)
    key = "reportHash" if isinstance(value, Report) or "metricVersion" in body else "hash"
    # Canonical key order (the stable hash's) and JavaScript number text: reviewable diffs.
    return file_text({key: hashed, "canonical": json.loads(canonical_json(body))})


# ------------------------------------------------------------------ fixture objects


class EntropyMeter:
    """Measures session files or traces, by default the configured sessions and surface.

    ``entropy_meter()`` measures ``--entropy-sessions`` against ``--entropy-surface``;
    ``entropy_meter(traces_or_paths, surface=...)`` measures anything else.
    """

    _CONFIGURED: Final = object()

    def __init__(
        self,
        sessions: Path | None = None,
        surface: Callable[[], dict[str, Any] | None] | None = None,
        repairs: Callable[[], list[RepairRow] | None] | None = None,
        *,
        session_format: str | None = None,
        metric_version: int = 2,
    ) -> None:
        self._sessions = sessions
        self._surface = surface or (lambda: None)
        self._repairs = repairs or (lambda: None)
        self._session_format = session_format  # None: see traces_of
        self._metric_version = metric_version  # --entropy-metric-version

    def __call__(
        self,
        source: Sessions | None = None,
        *,
        surface: Any = _CONFIGURED,
        repairs: Any = _CONFIGURED,
        catalog_digest: str | None = None,
    ) -> Report:
        if source is None:
            if self._sessions is None:
                raise ValueError(
                    "no sessions configured: pass traces or paths, or set --entropy-sessions"
                )
            source = self._sessions
        chosen_surface = self._surface() if surface is self._CONFIGURED else surface
        chosen_repairs = self._repairs() if repairs is self._CONFIGURED else repairs
        if catalog_digest is None:
            catalog_digest = surface_hash(chosen_surface) if chosen_surface is not None else ""
        version = self._metric_version
        traces = traces_of(
            source,
            session_format=self._session_format,
            surface=chosen_surface,
            metric_version=version,
        )
        return measure(
            traces, chosen_surface, chosen_repairs, catalog_digest, metric_version=version
        )

    def freedom(self, surface: Any = _CONFIGURED) -> dict[str, Any]:
        """Static freedom per action, worst first, with total and mean."""
        chosen = self._surface() if surface is self._CONFIGURED else surface
        if chosen is None:
            raise ValueError("no surface configured: pass one or set --entropy-surface")
        return surface_freedom_report(surface_from_value(dict(chosen)))

    @staticmethod
    def hash(report: Report) -> str:
        """The report hash (``entropyReportHash``)."""
        return report_hash(report)


class EntropyRatchet:
    """Compares surfaces or reports with the committed baseline file; see ``check``."""

    def __init__(
        self,
        path: Path,
        *,
        default_name: str,
        update: bool = False,
        ci: bool = False,
        notes: list[tuple[str, object]] | None = None,
        accept: Sequence[str] = (),
        timeout: float | None = None,
    ) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.default_name = default_name
        self.update = update
        self.ci = ci
        self.results: list[RatchetResult] = []
        self._notes = notes
        self.accept = tuple(accept)

    def check(
        self,
        surface_or_report: Any,
        *,
        name: str | None = None,
        allow_new_tools: bool = False,
        timeout: float | None = None,
    ) -> RatchetResult:
        """Fail if a surface loosened against the baseline entry's schemas, or any tracked
        number rose above it (``name``: the test id).

        Takes a report or any surface :func:`pytest_entropy.load_surface` reads; a server
        has ``timeout`` seconds to list its tools (default: ``--entropy-mcp-timeout``, else
        30). Creates a missing entry locally, fails in CI; ``--entropy-update`` rewrites it;
        ``--entropy-accept REF[:PATH]=REASON`` accepts a deliberate loosening.
        """
        __tracebackhide__ = True
        result = check_baseline(
            self.path,
            name or self.default_name,
            surface_or_report,
            update=self.update,
            ci=self.ci,
            allow_new_tools=allow_new_tools,
            accept=self.accept,
            timeout=self.timeout if timeout is None else timeout,
        )
        self.results.append(result)
        if self._notes is not None and result.status in ("created", "updated", "lowered"):
            self._notes.append(("entropy_ratchet", result.lines()[0]))
        if not result.passed:
            raise AssertionError(terminal_lines(result.message()))
        return result
