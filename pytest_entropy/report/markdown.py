"""The report as Markdown, for CI job summaries (``$GITHUB_STEP_SUMMARY``).

The same content as the HTML page, from the same document (:mod:`report.document`); the
charts become tables, and the ratchet line a text sparkline. Every name, path and value from
the document goes through :mod:`report.names`: a name is a code span whose fence outlasts any
backtick run in it, other text is escaped prose (no HTML, link or emphasis can start in it),
and a fenced block's fence is longer than any backtick run inside. The certification's summary
(``core.certify.markdown_lines``, which ``--entropy-markdown`` has always written) is kept
verbatim at the top of a certify report; what this module adds comes after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS
from pytest_entropy.report.document import (
    diagnostic_counts,
    document_kind,
    parameter_freedom,
    proposal_evidence,
    ratchet_series,
    score_terms,
)
from pytest_entropy.report.document import human_number as _human_number
from pytest_entropy.report.names import markdown_code, markdown_fence, markdown_text

__all__ = ["certify_corpus_lines", "render_markdown", "sparkline"]

_BARS: Final = "▁▂▃▄▅▆▇█"
# A job summary is read, not searched: past this many rows a table says how many it left out.
_MAX_ROWS: Final = 25


def sparkline(values: Sequence[float]) -> str:
    """One block character per value, scaled between the smallest and the largest.

    >>> sparkline([0.0, 0.5, 1.0])
    '▁▅█'
    """
    if not values:
        return ""
    low, high = min(values), max(values)
    span = high - low
    if span <= 0:
        return _BARS[0] * len(values)
    top = len(_BARS) - 1
    return "".join(_BARS[round((value - low) / span * top)] for value in values)


class _Code(str):
    """A cell shown as a code span: a tool's name."""

    __slots__ = ()


class _Markup(str):
    """A cell that is our own Markdown (``**score**``), written as it is."""

    __slots__ = ()


def human_number(value: Any) -> str:
    """:func:`report.document.human_number`, as Markdown prose (a document read back by
    ``report --from`` may hold a string where a number belongs)."""
    return markdown_text(_human_number(value))


def _cell(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "—" if value is None else ("yes" if value else "no")
    if isinstance(value, _Code):
        return markdown_code(value, table=True)
    if isinstance(value, _Markup):
        return str(value)
    return human_number(value) if isinstance(value, int | float) else markdown_text(str(value))


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    if not rows:
        return ["_none_", ""]
    lines = [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    lines.extend(
        "| " + " | ".join(_cell(value) for value in row) + " |" for row in rows[:_MAX_ROWS]
    )
    if len(rows) > _MAX_ROWS:
        lines.append(f"\n_{len(rows) - _MAX_ROWS} more rows in the HTML or JSON report._")
    lines.append("")
    return lines


def _decomposition(columns: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    split = [(name, score_terms(report)) for name, report in columns]
    rows = [
        [term.label, term.value, term.weight] + [terms[i].contribution for _, terms in split]
        for i, term in enumerate(split[0][1])
    ]
    rows.append(
        [_Markup("**score**"), columns[0][1].get("score"), None]
        + [r.get("score") for _, r in columns]
    )
    headers = ["term", "value", "weight"] + [f"share ({name})" for name, _ in split]
    return ["### Score decomposition", "", *_table(headers, rows)]


def _tools(report: Mapping[str, Any], title: str = "Tools, worst first") -> list[str]:
    rows = [
        [
            _Code(r["ref"]),
            r["score"],
            r["calls"],
            r["failed"],
            r["shapeEntropyBits"],
            r["failureStageEntropyBits"],
            r["churnRate"],
            r["staticFreedom"],
        ]
        for r in report.get("refs") or []
    ]
    headers = ("tool", "score", "calls", "failed", "shape", "stages", "churn", "freedom")
    return [f"### {title}", "", *_table(headers, rows)]


def _diagnostics(diagnostics: Mapping[str, Any] | None) -> list[str]:
    lines = ["### Diagnostics", "", *_table(("counter", "count"), diagnostic_counts(diagnostics))]
    samples = list((diagnostics or {}).get("samples") or [])
    if samples:
        lines += [*markdown_fence([str(sample) for sample in samples]), ""]
    return lines


def _parameters(surface: Mapping[str, Any] | None) -> list[str]:
    if surface is None:
        return []
    rows = [[_Code(r.ref), r.parameter, r.freedom, r.rule] for r in parameter_freedom(surface)]
    return [
        "### Surface freedom per parameter",
        "",
        *_table(("tool", "parameter", "freedom", "priced by"), rows),
    ]


def _inputs(inputs: Sequence[str]) -> list[str]:
    return [f"Inputs: {', '.join(markdown_code(name) for name in inputs)}.", ""] if inputs else []


def _measure(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> list[str]:
    report = doc["report"]
    split = (
        f"invocation-rejection rate (metric v3) · static diagnostic"
        f" {human_number(report['staticScore'])}, not part of the score"
        if report.get("metricVersion") == 3
        else f"static {human_number(report['staticScore'])} + behavioral"
        f" {human_number(report['behavioralScore'])}"
    )
    return [
        f"## Entropy report: score {human_number(report['score'])}",
        "",
        f"{split} · {human_number(report['totals']['operations'])} operations · lower is better",
        "",
        *_decomposition([("report", report)]),
        *_tools(report),
        *_parameters(surface),
        *_diagnostics(doc.get("diagnostics")),
        f"Report hash {markdown_code(str(doc.get('reportHash')))} · metric"
        f" v{markdown_text(str(report.get('metricVersion')))}.",
        "",
        *_inputs(inputs),
    ]


def _status(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> list[str]:
    corpus = doc["corpus"]
    series = ratchet_series(corpus)
    sessions = list(reversed(corpus.get("sessions") or []))
    rows = [
        [
            label,
            item["operations"],
            item["report"]["staticScore"],
            item["report"]["behavioralScore"],
            item["report"]["score"],
        ]
        for label, item in zip(series.labels, sessions, strict=True)
    ]
    models = [
        [
            m["model"],
            m["sessions"],
            m["latestBehavioralScore"],
            m["slopePerSession"],
            sparkline(
                [
                    v
                    for line in series.models
                    if line.model == m["model"]
                    for v in line.values
                    if v is not None
                ]
            ),
        ]
        for m in corpus.get("models") or []
    ]
    latest = corpus.get("latest")
    lines = [
        f"## Entropy status: {markdown_text(str(doc['verdict']))}",
        "",
        f"Ratchet {markdown_code(sparkline(series.scores))} over {len(series.scores)} sessions"
        f" (oldest → newest) · slope {human_number(series.slope)}/session.",
        "",
        *markdown_fence([str(line) for line in doc.get("lines") or []]),
        "",
        "### Sessions, oldest first",
        "",
        *_table(("session", "operations", "static", "behavioral", "score"), rows[-_MAX_ROWS:]),
        "### Models",
        "",
        *_table(("model", "sessions", "latest behavioral", "slope", "trend"), models),
    ]
    if latest is not None:
        lines += _decomposition([("latest session", latest)])
        lines += _tools(latest, "Tools in the latest session, worst first")
    freedom = ((doc.get("surface") or {}).get("freedom") or {}).get("actions") or []
    lines += [
        "### Surface freedom",
        "",
        *_table(("tool", "freedom"), [[_Code(r["ref"]), r["freedom"]] for r in freedom]),
    ]
    lines += _parameters(surface)
    lines += _diagnostics(doc.get("diagnostics"))
    digest = str((doc.get("surface") or {}).get("digest"))
    lines += [f"Surface digest {markdown_code(digest)}.", ""]
    return lines + _inputs(inputs)


def _compile(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> list[str]:
    before, after = doc["report"], doc.get("after")
    gate = doc.get("gate") or {}
    proposals = [
        [
            p.get("kind"),
            _Code(p.get("ref")),
            "automatic" if p.get("kind") in AUTO_APPLY_PROPOSAL_KINDS else "review",
            proposal_evidence(p),
        ]
        for p in doc.get("proposals") or []
    ]
    after_text = f" → {human_number(after['score'])}" if after is not None else ""
    lines = [
        f"## Entropy compile: {markdown_text(str(doc['status']))}",
        "",
        f"score {human_number(before['score'])}{after_text} · gate"
        f" {'passed' if gate.get('passed') else 'not passed'}"
        + (f" · delta {human_number(gate['delta'])}" if "delta" in gate else ""),
        "",
    ]
    lines += [f"- gate: {markdown_text(str(reason))}" for reason in gate.get("reasons") or []]
    columns = [("before", before)] + ([("after", after)] if after is not None else [])
    lines += _decomposition(columns)
    lines += ["### Proposals", "", *_table(("kind", "tool", "applied", "evidence"), proposals)]
    lines += _tools(before, "Tools before, worst first")
    lines += _parameters(surface)
    return lines + _inputs(inputs)


def _trial_lines(trial: Mapping[str, Any]) -> list[str]:
    totals = trial.get("totals") or {}
    classes = [[key, totals.get(key, 0)] for key in totals]
    divergences = [
        [_Code(r.get("ref")), r.get("trialClass"), r.get("count")]
        for r in trial.get("divergences") or []
    ]
    return [
        "### Trial classes",
        "",
        *_table(("class", "calls"), classes),
        "### Divergences",
        "",
        *_table(("tool", "class", "calls"), divergences),
    ]


def _trial(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> list[str]:
    return [
        f"## Entropy trial: {markdown_text(str(doc['verdict']))}",
        "",
        f"score {human_number(doc['declaredScore'])} → {human_number(doc['effectiveScore'])}"
        f" (delta {human_number(doc['delta'])})",
        "",
        *_trial_lines(doc),
        *_parameters(surface),
        *_inputs(inputs),
    ]


def certify_corpus_lines(doc: Mapping[str, Any]) -> list[str]:
    """The user's corpus checks (scope ``corpus``) after the spec's certification summary,
    or nothing when none ran; names and paths in them escaped as Markdown."""
    from pytest_entropy.core.certify.scopes import corpus_summary

    summary = corpus_summary(doc)
    if summary is None:
        return []
    passed, total, ok = summary
    rows = []
    for check in doc["corpusChecks"]["checks"]:
        if check["passed"]:
            mark = "✓ pass"
        else:
            mark = "✗ **fail**" if check.get("gating", True) else "✗ fail (not gating)"
        rows.append(
            f"| {markdown_code(str(check['id']), table=True)} | {mark}"
            f" | {markdown_text(str(check['evidence']))}"
            f" | {markdown_text(str(check.get('reason', '')))} |"
        )
    return [
        "",
        f"### Your corpus (scope `corpus`): {'PASS' if ok else 'FAIL'}",
        "",
        f"{passed} of {total} checks passed.",
        "",
        "| Check | Result | Evidence | Reason |",
        "| --- | --- | --- | --- |",
        *rows,
    ]


def _certify(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> list[str]:
    from pytest_entropy.core.certify import markdown_lines

    lines = [*markdown_lines(doc), *certify_corpus_lines(doc), ""]
    corpus = doc.get("corpus")
    if corpus is not None:
        lines += _decomposition([("corpus", corpus)])
        lines += _tools(corpus, "Corpus tools, worst first")
    trial = doc.get("trial")
    if trial is not None:
        lines += _trial_lines(trial)
    return lines + _inputs(inputs)


_KINDS: Final = {
    "measure": _measure,
    "status": _status,
    "compile": _compile,
    "trial": _trial,
    "certify": _certify,
}


def render_markdown(
    document: Mapping[str, Any],
    *,
    kind: str | None = None,
    surface: Mapping[str, Any] | None = None,
    inputs: Sequence[str] = (),
) -> str:
    """The Markdown for one command's ``--json`` document (``kind`` detected when omitted)."""
    from pytest_entropy.core.errors import EntropyInputError

    kind = kind or document_kind(document)
    try:
        lines = _KINDS[kind](document, surface, inputs)
    except KeyError as error:
        raise EntropyInputError(f"this {kind} document lacks {error}") from None
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"
