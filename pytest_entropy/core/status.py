"""Per-session measurement, trend, ratchet verdict and the status display (spec §4)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.fingerprint import surface_freedom_report, trend_from_scores
from pytest_entropy.core.jscompat import code_unit_key, js_round, js_string, js_to_fixed
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.plain_record import Record
from pytest_entropy.core.records import RepairRow, Report

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ModelTrend",
    "SessionCorpus",
    "SessionReport",
    "format_compiled_line",
    "format_review_line",
    "format_status_lines",
    "measure_session_corpus",
    "ratchet_verdict",
    "surface_hash",
]

RATCHET_HOLDING = "ratchet holding"
RATCHET_SLIPPING = "ratchet slipping"


def surface_hash(surface: Mapping[str, Any]) -> str:
    """``entropySurfaceHash``: the stable hash of the whole snapshot (action order matters)."""
    return stable_json_hash(surface)


class SessionReport(Record, frozen=True):
    file: str
    operations: int
    report: Report

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "operations": self.operations, "report": self.report.to_json()}


class ModelTrend(Record, frozen=True):
    model: str
    sessions: int
    latest_behavioral_score: float
    slope_per_session: float
    latest_rejections_per_1k: float

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "sessions": self.sessions,
            "latestBehavioralScore": self.latest_behavioral_score,
            "slopePerSession": self.slope_per_session,
            "latestRejectionsPer1k": self.latest_rejections_per_1k,
        }


class SessionCorpus(Record, frozen=True):
    """``measureSessionCorpus``: files newest first, kept sessions, latest, trend, models."""

    files: tuple[str, ...]
    sessions: tuple[SessionReport, ...]
    latest: Report | None
    trend: Mapping[str, Any]
    models: tuple[ModelTrend, ...]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "files": list(self.files),
            "sessions": [session.to_json() for session in self.sessions],
        }
        if self.latest is not None:
            out["latest"] = self.latest.to_json()
        out["trend"] = dict(self.trend)
        out["models"] = [model.to_json() for model in self.models]
        return out


def measure_session_corpus(
    files: Sequence[tuple[str, MeterState | None]],
    surface: Mapping[str, Any] | None = None,
    catalog_digest: str | None = None,
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    *,
    metric_version: int = 2,
) -> SessionCorpus:
    """Measure each session file alone (spec §4.3), in metric ``metric_version``.

    ``files`` are ``(name, state)`` pairs, newest first, where ``state`` accumulated that
    file's traces with its own model cursor (``None`` for an unreadable file).
    """
    kept: list[SessionReport] = []
    for name, state in files:
        if state is None or state.traces == 0:
            continue
        report = state.finalize(surface, repairs, catalog_digest, metric_version=metric_version)
        if report.totals.operations == 0:
            continue
        kept.append(SessionReport(name, report.totals.operations, report))
    oldest_first = list(reversed(kept))
    trend = trend_from_scores([session.report.score for session in oldest_first])
    scores_by_model: dict[str, list[float]] = {}
    latest_row: dict[str, Any] = {}
    for session in oldest_first:
        for row in session.report.by_model:
            scores_by_model.setdefault(row.model, []).append(row.behavioral_score)
            latest_row[row.model] = row
    models = tuple(
        ModelTrend(
            model,
            len(scores_by_model[model]),
            latest_row[model].behavioral_score,
            trend_from_scores(scores_by_model[model])["slopePerStep"],
            latest_row[model].invocation_rejections_per_1k,
        )
        for model in sorted(scores_by_model, key=code_unit_key)
    )
    return SessionCorpus(
        files=tuple(name for name, _ in files),
        sessions=tuple(kept),
        latest=kept[0].report if kept else None,
        trend=trend,
        models=models,
    )


def ratchet_verdict(corpus: SessionCorpus) -> str:
    """``ratchet holding`` when the latest session had no rejections and the slope is <= 0."""
    latest = corpus.latest
    if (
        latest is not None
        and latest.totals.invocation_rejections_per_1k == 0
        and corpus.trend["slopePerStep"] <= 0
    ):
        return RATCHET_HOLDING
    return RATCHET_SLIPPING


def _fmt(value: float) -> str:
    return js_to_fixed(value, 6)


def _fmt2(value: float) -> str:
    return js_string(js_round(value * 100) / 100)


def format_status_lines(
    surface: Mapping[str, Any],
    corpus: SessionCorpus,
    *,
    scope: str = "machine",
    compiled_line: str | None = None,
    review_line: str | None = None,
    metric_version: int = 2,
) -> list[str]:
    """The ``/fabric entropy`` display lines in order (spec §4.5); ``metric_version=3``
    names metric v3 and shows its rate (with the static diagnostic beside it, not added).

    ``surface`` is the effective surface the corpus was measured against; ``scope`` is
    ``"machine"`` or ``"project"``. The compiled and review lines are supplied by callers
    that have an artifact store (they are omitted otherwise).
    """
    freedom = surface_freedom_report(surface)
    digest = surface_hash(surface)
    lines = [
        f"entropy: metric v{metric_version} · surface {digest[:12]} ·"
        f" {len(freedom['actions'])} actions",
    ]
    if compiled_line is not None:
        lines.append(compiled_line)
    if review_line is not None:
        lines.append(review_line)
    worst = " · ".join(f"{row['ref']} {_fmt2(row['freedom'])}" for row in freedom["actions"][:4])
    lines.append(
        f"surface freedom (potential): mean {_fmt2(freedom['mean'])}"
        + (f" · worst {worst}" if worst else "")
    )
    if not corpus.sessions or corpus.latest is None:
        lines.append(
            "session entropy (observed): no fabric_exec traces in the latest "
            f"{len(corpus.files)} {scope} sessions"
        )
    else:
        latest = corpus.latest
        behavioral = latest.behavioral_score
        static = latest.static_score
        if metric_version == 3:
            observed = f"rejection rate {_fmt(latest.score)} · static diagnostic {_fmt(static)}"
        else:
            observed = (
                f"behavioral {_fmt(behavioral)} + surface {_fmt(static)} ="
                f" {_fmt(behavioral + static)}"
            )
        lines.append(
            f"session entropy (observed): {len(corpus.sessions)} sessions · latest "
            f"{latest.totals.operations} ops · {observed} · lower is better · slope "
            f"{_fmt(corpus.trend['slopePerStep'])}/session · {ratchet_verdict(corpus)}"
        )
    if len(corpus.models) > 1:
        lines.append(
            "models: "
            + " · ".join(
                f"{model.model} behavioral {_fmt(model.latest_behavioral_score)} · slope "
                f"{_fmt(model.slope_per_session)}"
                for model in corpus.models
            )
        )
    return lines


def format_compiled_line(artifact: Mapping[str, Any] | None, error: str | None) -> str:
    """The status display's ``compiled:`` line (spec §4.5 line 3)."""
    if error is not None:
        return f"compiled: unavailable — {error}"
    if artifact is None:
        return "compiled: none"
    gate = artifact["gate"]
    verdict = "pass" if gate["passed"] else "REJECTED"
    return (
        f"compiled: v{artifact['metricVersion']} · {len(artifact['actions'])} tightened ·"
        f" {len(artifact['quarantined'])} quarantined · {len(artifact['applied'])} applied ·"
        f" gate {verdict} ({_fmt(gate['beforeScore'])} → {_fmt(gate['afterScore'])})"
    )


def format_review_line(
    review: Sequence[Mapping[str, Any]] | None,
    *,
    pool_error: str | None = None,
    has_window_evidence: bool = True,
) -> str:
    """The status display's ``review:`` line (spec §4.5 line 4); ``review=None`` means the
    review could not be computed."""
    from pytest_entropy.core.proposals import format_review_signal

    if pool_error is not None:
        return f"review: unavailable — {pool_error}"
    if not has_window_evidence:
        return "review: no window evidence"
    if review is None:
        return "review: unavailable"
    if not review:
        return "review: none"
    count = len(review)
    shown = " · ".join(format_review_signal(signal) for signal in review[:4])
    more = f" · +{count - 4} more" if count > 4 else ""
    return f"review: {count} suggestion{'s' if count != 1 else ''} · {shown}{more}"
