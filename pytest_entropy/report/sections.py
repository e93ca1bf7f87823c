"""The sections of each report kind's page (measure, status, compile, trial, certify)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.core.meter import report_hash
from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS
from pytest_entropy.report.charts import bar_chart, decomposition_chart, ratchet_chart
from pytest_entropy.report.document import (
    diagnostic_counts,
    human_number,
    parameter_freedom,
    proposal_evidence,
    ratchet_series,
    score_terms,
)
from pytest_entropy.report.names import html_text as escape
from pytest_entropy.report.text import TRIAL_CLASSES
from pytest_entropy.report.widgets import Page, card, cell, meta_list, section, table

__all__ = ["page_of"]


def report_hash_of(report: Mapping[str, Any] | None) -> str | None:
    """The report hash of an embedded report (``None`` without one)."""
    return None if report is None else report_hash(report)


def _chart(svg: str) -> str:
    return f'<div class="chart">{svg}</div>'


def _decomposition(columns: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """The score's terms, weights and shares: a chart and a table (one column per report)."""
    split = [(name, score_terms(report)) for name, report in columns]
    headers = ["term", "value", "weight"] + [f"share of score ({name})" for name, _ in split]
    rows = []
    for index, term in enumerate(split[0][1]):
        rows.append(
            [term.label, term.value, term.weight]
            + [terms[index].contribution for _, terms in split]
        )
    totals = ["score", columns[0][1].get("score"), None] + [
        report.get("score") for _, report in columns
    ]
    v3 = columns[0][1].get("metricVersion") == 3
    return section(
        "decomposition",
        "Score decomposition",
        _chart(decomposition_chart(split)),
        table("terms", headers, [*rows, totals], sortable=False),
        note=_V3_NOTE if v3 else _V2_NOTE,
    )


_V2_NOTE = (
    "score = (Σ per-tool terms + 4·navigation + flow) / max(1, successful actions);"
    " static share = the static freedom term, behavioral share = the rest"
)
_V3_NOTE = (
    "metric v3: score = calls rejected at resolve, prepare or validate / all action calls;"
    " the static diagnostic (0.25 × the calls-weighted schema freedom) is not part of it"
)


def _tools(report: Mapping[str, Any], title: str = "Tools, worst first") -> str:
    rows = [
        [
            row["ref"],
            row["score"],
            row["calls"],
            row["succeeded"],
            row["failed"],
            row["shapeEntropyBits"],
            row["failureStageEntropyBits"],
            row["churnRate"],
            row["lexiconRows"],
            row["staticFreedom"],
        ]
        for row in report.get("refs") or []
    ]
    headers = (
        "tool",
        "score",
        "calls",
        "ok",
        "failed",
        "shape bits",
        "stage bits",
        "churn",
        "lexicon",
        "static freedom",
    )
    return section(
        "tools", title, table("tools-table", headers, rows), note="click a header to sort"
    )


def _models(report: Mapping[str, Any]) -> str:
    rows = [
        [
            row["model"],
            row["operations"],
            row["succeeded"],
            row["invocationRejectionsPer1k"],
            row["behavioralScore"],
        ]
        for row in report.get("byModel") or []
    ]
    if not rows:
        return ""
    headers = ("model", "operations", "ok", "rejections/1k", "behavioral")
    return section("models", "Models", table("models-table", headers, rows))


def _diagnostics(diagnostics: Mapping[str, Any] | None) -> str:
    counts = diagnostic_counts(diagnostics)
    samples = list((diagnostics or {}).get("samples") or [])
    parts = [table("diagnostics-table", ("counter", "count"), counts, sortable=False)]
    if samples:
        parts.append("<pre>" + "\n".join(escape(str(s)) for s in samples) + "</pre>")
    return section(
        "diagnostics",
        "Diagnostics",
        *parts,
        note="every non-zero counter of the scan: skipped lines, unreadable files, rejected"
        " traces; nothing read is hidden",
    )


def _freedom(
    actions: Sequence[Mapping[str, Any]], surface: Mapping[str, Any] | None, note: str = ""
) -> str:
    if not actions and surface is not None:
        actions = surface_freedom_report(surface)["actions"]
    parts = [
        table(
            "freedom-table",
            ("tool", "static freedom"),
            [[row["ref"], row["freedom"]] for row in actions],
        )
    ]
    if surface is not None:
        rows = [[r.ref, r.parameter, r.freedom, r.rule] for r in parameter_freedom(surface)]
        parts.append("<h3>Per parameter</h3>")
        parts.append(table("parameter-table", ("tool", "parameter", "freedom", "priced by"), rows))
    return section("freedom", "Surface freedom", *parts, note=note or "worst first")


def _meta(items: Sequence[tuple[str, Any]], inputs: Sequence[str]) -> str:
    shown = [(label, str(value)) for label, value in items if value not in (None, "")]
    shown.extend(("input", str(name)) for name in inputs)
    return section("meta", "Report", meta_list(shown))


def _verdict_tone(good: bool) -> str:
    return "ok" if good else "bad"


def _measure(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> Page:
    report = doc["report"]
    totals = report["totals"]
    actions = [{"ref": r["ref"], "freedom": r["staticFreedom"]} for r in report.get("refs") or []]
    actions.sort(key=lambda row: -float(row["freedom"]))
    return Page(
        "Entropy report",
        (
            card("score", report["score"]),
            card(
                "static diagnostic" if report.get("metricVersion") == 3 else "static share",
                report["staticScore"],
            ),
            card("behavioral share", report["behavioralScore"]),
            card("operations", totals["operations"]),
            card("rejections / 1k actions", totals["invocationRejectionsPer1k"]),
        ),
        (
            _decomposition([("report", report)]),
            _tools(report),
            _models(report),
            _freedom(actions, surface, note="the called tools' static freedom, worst first"),
            _meta(
                [
                    ("report hash", doc.get("reportHash")),
                    ("metric version", report.get("metricVersion")),
                    ("catalog digest", report.get("catalogDigest")),
                ],
                inputs,
            ),
            _diagnostics(doc.get("diagnostics")),
        ),
    )


def _status(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> Page:
    corpus = doc["corpus"]
    series = ratchet_series(corpus)
    verdict = str(doc["verdict"])
    latest = corpus.get("latest")
    sessions = [
        [
            label,
            item["operations"],
            item["report"]["staticScore"],
            item["report"]["behavioralScore"],
            item["report"]["score"],
        ]
        for label, item in zip(series.labels, reversed(corpus.get("sessions") or []), strict=True)
    ]
    models = [
        [
            m["model"],
            m["sessions"],
            m["latestBehavioralScore"],
            m["slopePerSession"],
            m["latestRejectionsPer1k"],
        ]
        for m in corpus.get("models") or []
    ]
    review = [[r.get("kind"), r.get("ref"), proposal_evidence(r)] for r in doc.get("review") or []]
    parts = [
        section(
            "ratchet",
            "Ratchet",
            _chart(ratchet_chart(series, verdict))
            if series.scores
            else '<p class="empty">no session in the window had operations</p>',
            "<pre>" + "\n".join(escape(str(line)) for line in doc.get("lines") or []) + "</pre>",
            note="the ratchet holds when the latest session had no invocation rejections and"
            " the least-squares slope is at most 0",
        ),
        section(
            "sessions",
            "Sessions, oldest first",
            table(
                "sessions-table",
                ("session", "operations", "static", "behavioral", "score"),
                sessions,
            ),
        ),
        section(
            "models",
            "Models",
            table(
                "models-table",
                ("model", "sessions", "latest behavioral", "slope/session", "latest rejections/1k"),
                models,
            ),
        ),
    ]
    if latest is not None:
        parts.append(_decomposition([("latest session", latest)]))
        parts.append(_tools(latest, "Tools in the latest session, worst first"))
    freedom = (doc.get("surface") or {}).get("freedom") or {}
    parts.append(_freedom(freedom.get("actions") or [], surface))
    parts.append(
        section(
            "review", "Review signals", table("review-table", ("kind", "tool", "evidence"), review)
        )
    )
    parts.append(
        _meta(
            [
                ("surface digest", (doc.get("surface") or {}).get("digest")),
                # The status document names its generation even when no session was kept.
                ("metric version", (latest or {}).get("metricVersion", doc.get("metricVersion"))),
                ("compiled artifact", "present" if doc.get("compiled") else "none"),
                ("sessions in window", len(corpus.get("files") or [])),
            ],
            [*inputs, *(corpus.get("files") or [])],
        )
    )
    parts.append(_diagnostics(doc.get("diagnostics")))
    trend = corpus.get("trend") or {}
    return Page(
        "Entropy status",
        (
            card("verdict", verdict, tone=_verdict_tone(verdict == "ratchet holding")),
            card("latest score", latest["score"] if latest else "—"),
            card("slope / session", trend.get("slopePerStep", 0)),
            card("sessions", len(series.scores)),
        ),
        tuple(parts),
    )


def _proposals(proposals: Sequence[Mapping[str, Any]]) -> str:
    rows = [
        [
            p.get("kind"),
            p.get("ref"),
            "automatic" if p.get("kind") in AUTO_APPLY_PROPOSAL_KINDS else "review",
            proposal_evidence(p),
        ]
        for p in proposals
    ]
    return section(
        "proposals",
        "Proposals",
        table("proposals-table", ("kind", "tool", "applied", "evidence"), rows),
        note="automatic kinds are applied behind the gate; review kinds are suggestions",
    )


def _compile(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> Page:
    before = doc["report"]
    after = doc.get("after")
    gate = doc.get("gate") or {}
    status = str(doc["status"])
    columns = [("before", before)] + ([("after", after)] if after is not None else [])
    reasons = [[reason] for reason in gate.get("reasons") or []]
    applied = [
        [row.get("kind"), row.get("ref"), row.get("detail")]
        for row in (doc.get("artifact") or {}).get("applied") or []
    ]
    gate_rows = [
        ["passed", gate.get("passed")],
        ["score before", gate.get("beforeScore", before.get("score"))],
        ["score after", gate.get("afterScore", (after or {}).get("score"))],
        ["delta", gate.get("delta")],
    ]
    parts = [
        _decomposition(columns),
        _proposals(doc.get("proposals") or []),
        section(
            "gate",
            "Gate and replay",
            table("gate-table", ("", "value"), gate_rows, sortable=False),
            table("reasons-table", ("reason the gate gave",), reasons, sortable=False),
            "<h3>Applied</h3>",
            table("applied-table", ("kind", "tool", "detail"), applied),
            note="the gate keeps a compile only when the score does not rise and the replay"
            " of the recorded calls rejects no successful call",
        ),
        _tools(before, "Tools before, worst first"),
    ]
    if surface is not None:
        parts.append(_freedom([], surface))
    unsupported = doc.get("unsupportedPatterns") or []
    parts.append(
        _meta(
            [
                ("status", status),
                ("metric version", before.get("metricVersion")),
                ("catalog digest", before.get("catalogDigest")),
                ("evidence digest", (doc.get("artifact") or {}).get("evidenceDigest")),
                ("patterns not enforced", ", ".join(str(p) for p in unsupported)),
            ],
            inputs,
        )
    )
    return Page(
        "Entropy compile",
        (
            card("status", status, tone=_verdict_tone(status != "rejected")),
            card("score before", before["score"]),
            card("score after", after["score"] if after else "—"),
            card("delta", gate.get("delta", 0)),
            card("proposals", len(doc.get("proposals") or [])),
        ),
        tuple(parts),
    )


def _trial_section(trial: Mapping[str, Any]) -> list[str]:
    totals = trial.get("totals") or {}
    classes = [(label, float(totals.get(key, 0))) for key, label in TRIAL_CLASSES]
    divergences = [
        [row.get("ref"), row.get("trialClass"), row.get("count")]
        for row in trial.get("divergences") or []
    ]
    return [
        section(
            "trial",
            "Trial: replayed calls by class",
            _chart(
                bar_chart("trial-classes", "recorded calls by trial class", classes, series="calls")
            ),
            note=f"{human_number(totals.get('operations', 0))} calls replayed against the"
            " declared and the compiled surface",
        ),
        section(
            "divergences",
            "Divergences",
            table("divergences-table", ("tool", "class", "calls"), divergences),
            note="the calls where the compiled surface decided differently",
        ),
    ]


def _trial(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> Page:
    totals = doc.get("totals") or {}
    wins = totals.get("typedFailureWin", 0) + totals.get("quarantineWin", 0)
    costs = totals.get("tighteningCost", 0) + totals.get("quarantineCost", 0)
    verdict = str(doc["verdict"])
    parts = _trial_section(doc)
    if surface is not None:
        parts.append(_freedom([], surface))
    parts.append(_meta([("verdict", verdict)], inputs))
    return Page(
        "Entropy trial",
        (
            card("verdict", verdict, tone=_verdict_tone(totals.get("tighteningCost", 0) == 0)),
            card("declared score", doc["declaredScore"]),
            card("compiled score", doc["effectiveScore"]),
            card("delta", doc["delta"]),
            card("wins", wins),
            card("costs", costs, tone="warn" if costs else ""),
        ),
        tuple(parts),
    )


def _certify(doc: Mapping[str, Any], surface: Any, inputs: Sequence[str]) -> Page:
    evaluation = doc.get("evaluation") or {}
    checks = evaluation.get("checks") or []
    passed = bool(evaluation.get("passed"))
    good = sum(1 for check in checks if check.get("passed"))
    rows = [
        [
            check.get("id"),
            cell("pass" if check.get("passed") else "FAIL"),
            str(check.get("evidence", "")),
        ]
        for check in checks
    ]
    counts = [("passed", float(good)), ("failed", float(len(checks) - good))]
    parts = [
        section(
            "checks",
            "Checks",
            _chart(
                bar_chart(
                    "checks-chart",
                    "certification checks",
                    counts,
                    series="checks",
                    color="#009E73" if passed else "#D55E00",
                )
            ),
            table("checks-table", ("check", "result", "evidence"), rows),
        )
    ]
    # The checks on the user's own corpus (scope corpus), in a section of their own.
    own = doc.get("corpusChecks") or {}
    own_checks = own.get("checks") or []
    if own_checks:
        own_rows = [
            [
                check.get("id"),
                cell(
                    "pass"
                    if check.get("passed")
                    else ("FAIL" if check.get("gating", True) else "fail (not gating)")
                ),
                str(check.get("evidence", "")),
                str(check.get("reason", "")),
            ]
            for check in own_checks
        ]
        parts.append(
            section(
                "corpus-checks",
                "Your corpus (scope corpus)",
                table("corpus-checks-table", ("check", "result", "evidence", "reason"), own_rows),
            )
        )
    corpus = doc.get("corpus")
    if corpus is not None:
        parts.append(_decomposition([("corpus", corpus)]))
        parts.append(_tools(corpus, "Corpus tools, worst first"))
    trial = doc.get("trial")
    if trial is not None:
        parts.extend(_trial_section(trial))
    info = doc.get("surface") or {}
    parts.append(
        _meta(
            [
                ("kind", doc.get("kind")),
                ("metric version", doc.get("metricVersion")),
                ("surface", info.get("path")),
                ("surface digest", info.get("digest")),
                ("corpus report hash", report_hash_of(corpus)),
            ],
            inputs,
        )
    )
    return Page(
        "Entropy certification",
        (
            card("verdict", "PASS" if passed else "FAIL", tone=_verdict_tone(passed)),
            card("checks passed", f"{good} of {len(checks)}"),
            *(
                (
                    card(
                        "your corpus",
                        f"{sum(1 for c in own_checks if c.get('passed'))} of {len(own_checks)}",
                        tone=_verdict_tone(bool(own.get("passed"))),
                    ),
                )
                if own_checks
                else ()
            ),
            *((card("corpus score", corpus["score"]),) if corpus is not None else ()),
        ),
        tuple(parts),
    )


_PAGES: Final[dict[str, Callable[[Mapping[str, Any], Any, Sequence[str]], Page]]] = {
    "measure": _measure,
    "status": _status,
    "compile": _compile,
    "trial": _trial,
    "certify": _certify,
}


def page_of(
    kind: str,
    document: Mapping[str, Any],
    *,
    surface: Mapping[str, Any] | None,
    inputs: Sequence[str],
) -> Page:
    """The page for ``kind``; a document that lacks what its kind needs is an input error."""
    try:
        build = _PAGES[kind]
    except KeyError:
        raise EntropyInputError(f"unknown report kind {kind!r}") from None
    try:
        return build(document, surface, inputs)
    except (KeyError, TypeError, ValueError) as error:
        raise EntropyInputError(
            f"this {kind} document lacks what its report needs: {error!r}"
        ) from None
