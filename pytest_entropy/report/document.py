"""What a rendered report shows, computed from a command's ``--json`` document.

The HTML and Markdown renderers both start here, so a report rendered while the command
runs and one rendered later by ``pytest-entropy report --from FILE.json`` are the same: every
number on the page comes from the JSON document (plus, optionally, the surface for the
per-parameter freedom). Nothing in this module formats text; it only derives data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.explain import ParameterFreedom, parameter_freedom
from pytest_entropy.core.meter import ENTROPY_WEIGHTS

__all__ = [
    "KINDS",
    "ModelLine",
    "ParameterFreedom",
    "RatchetSeries",
    "ScoreTerm",
    "diagnostic_counts",
    "document_kind",
    "human_number",
    "parameter_freedom",
    "ratchet_series",
    "score_terms",
]

KINDS: Final = ("measure", "status", "compile", "trial", "certify")

_COMPILE_STATUSES: Final = frozenset({"compiled", "converged", "rejected"})


def document_kind(document: Mapping[str, Any]) -> str:
    """Which command wrote ``document`` (one of :data:`KINDS`), from its top-level keys."""
    if not isinstance(document, Mapping):
        raise EntropyInputError("a report document is a JSON object")
    if "reportHash" in document and "report" in document:
        return "measure"
    if "corpus" in document and "verdict" in document and "lines" in document:
        return "status"
    if document.get("status") in _COMPILE_STATUSES and "report" in document:
        return "compile"
    if "verdict" in document and "divergences" in document and "totals" in document:
        return "trial"
    if "evaluation" in document and "checks" in (document.get("evaluation") or {}):
        return "certify"
    raise EntropyInputError(
        "not the --json output of measure, status, compile, trial or certify"
        f" (top-level keys: {', '.join(sorted(str(key) for key in document)) or 'none'})"
    )


def human_number(value: Any) -> str:
    """A number the way a person reads it: at most six decimals, no trailing zeros, no -0.

    >>> human_number(-0.00002199999999999945)
    '-0.000022'
    >>> human_number(3.0)
    '3'
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass(frozen=True, slots=True)
class ScoreTerm:
    """One term of the score: its raw value, its weight and its share of the score."""

    name: str
    label: str
    value: float
    weight: float
    contribution: float
    static: bool


_TERM_LABELS: Final = (
    ("shape", "argument shapes (bits)", "shapeEntropyBits"),
    ("failureStage", "failure stages (bits)", "failureStageEntropyBits"),
    ("churn", "argument churn", "churnRate"),
    ("lexicon", "repair lexicon rows", "lexiconRows"),
    ("staticFreedom", "static freedom", "staticFreedom"),
    ("navigation", "discovery navigation", "navigationRatio"),
    ("flow", "workflow flow (bits)", "flowEntropyBits"),
)


def score_terms(report: Mapping[str, Any]) -> list[ScoreTerm]:
    """The score split into its weighted terms (spec §3.4), each term's share of the score
    (a metric v3 report: its one term, the invocation-rejection rate).

    The score is ``(Σ per-tool terms + 4·navigation + flow) / max(1, succeeded)``, so a
    per-tool term's share is its weighted sum over the tools divided by the successes; the
    shares add up to the score within the report's rounding.
    """
    if report.get("metricVersion") == 3:
        # Metric v3's score is one rate, not a weighted sum: the decomposition has one term.
        score = float(report.get("score", 0))
        label = "invocation rejections / action calls"
        return [ScoreTerm("rejections", label, score, 1.0, score, False)]
    refs = report.get("refs") or []
    successes = max(1, int((report.get("totals") or {}).get("succeeded", 0)))
    per_tool = {
        "shape": sum(float(row.get("shapeEntropyBits", 0)) for row in refs),
        "failureStage": sum(float(row.get("failureStageEntropyBits", 0)) for row in refs),
        "churn": sum(float(row.get("churnRate", 0)) for row in refs),
        "lexicon": sum(float(row.get("lexiconRows", 0)) for row in refs),
        "staticFreedom": sum(float(row.get("staticFreedom", 0)) for row in refs),
        "navigation": float(report.get("navigationRatio", 0)),
        "flow": float(report.get("flowEntropyBits", 0)),
    }
    terms = []
    for name, label, key in _TERM_LABELS:
        weight = float(ENTROPY_WEIGHTS[name])
        terms.append(
            ScoreTerm(
                name=name,
                label=label,
                value=float(report.get(key, 0)),
                weight=weight,
                contribution=weight * per_tool[name] / successes,
                static=name == "staticFreedom",
            )
        )
    return terms


@dataclass(frozen=True, slots=True)
class ModelLine:
    """One model's behavioral score per session (``None`` where the model did not run)."""

    model: str
    values: tuple[float | None, ...]
    slope: float


@dataclass(frozen=True, slots=True)
class RatchetSeries:
    """The ratchet chart's data, oldest session first."""

    labels: tuple[str, ...]
    scores: tuple[float, ...]
    static: tuple[float, ...]
    behavioral: tuple[float, ...]
    fit: tuple[float, ...]
    slope: float
    models: tuple[ModelLine, ...]


def _short_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def ratchet_series(corpus: Mapping[str, Any]) -> RatchetSeries:
    """Per-session scores oldest first, the least-squares line and one line per model.

    The line is drawn through the mean with the corpus trend's slope (spec §4.1), so its
    slope is exactly the one the status line prints.
    """
    sessions = list(reversed(corpus.get("sessions") or []))
    scores = tuple(float(item["report"]["score"]) for item in sessions)
    static = tuple(float(item["report"]["staticScore"]) for item in sessions)
    behavioral = tuple(float(item["report"]["behavioralScore"]) for item in sessions)
    slope = float((corpus.get("trend") or {}).get("slopePerStep", 0))
    count = len(scores)
    mean_x = (count - 1) / 2 if count else 0.0
    mean_y = sum(scores) / count if count else 0.0
    fit = tuple(mean_y + slope * (index - mean_x) for index in range(count))
    slopes = {row["model"]: float(row["slopePerSession"]) for row in corpus.get("models") or []}
    models = []
    for model in slopes:
        values: list[float | None] = []
        for item in sessions:
            row = next(
                (r for r in item["report"].get("byModel") or [] if r["model"] == model), None
            )
            values.append(None if row is None else float(row["behavioralScore"]))
        models.append(ModelLine(model, tuple(values), slopes[model]))
    return RatchetSeries(
        labels=tuple(_short_name(str(item["file"])) for item in sessions),
        scores=scores,
        static=static,
        behavioral=behavioral,
        fit=fit,
        slope=slope,
        models=tuple(models),
    )


def diagnostic_counts(diagnostics: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    """Every non-zero diagnostic counter, in the JSON's order (zeros say nothing)."""
    if not diagnostics:
        return []
    return [
        (key, value)
        for key, value in diagnostics.items()
        if key != "samples" and value not in (0, {}, [], None)
    ]


def proposal_evidence(proposal: Mapping[str, Any]) -> str:
    """The evidence behind one proposal, as ``key value`` pairs (everything but kind and ref)."""
    parts = []
    for key, value in proposal.items():
        if key in ("kind", "ref"):
            continue
        if isinstance(value, Sequence) and not isinstance(value, str):
            value = ", ".join(str(item) for item in value)
        parts.append(f"{key} {human_number(value)}")
    return " · ".join(parts)
