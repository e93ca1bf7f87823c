"""The mechanical surface rewrite and the score gate (spec §7.1-§7.2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_entropy.core.canonical import json_copy
from pytest_entropy.core.jscompat import code_unit_key, js_string, round_metric
from pytest_entropy.core.records import Report

__all__ = ["apply_proposals_shared", "apply_proposals_to_surface", "evaluate_gate"]


def apply_proposals_to_surface(
    surface: Mapping[str, Any], proposals: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """The mechanical rewrite (spec §7.1): pure, input untouched, actions re-sorted by ref."""
    return _apply(surface, proposals, share=False)


def apply_proposals_shared(
    surface: Mapping[str, Any], proposals: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """:func:`apply_proposals_to_surface`'s value, with every schema the proposals leave
    alone shared with ``surface`` (the same object, not a copy); a tightened schema is
    copied before it is changed, so ``surface`` stays untouched. For a caller that only
    reads the result (the compiler: a shared schema is then known unchanged without being
    hashed)."""
    return _apply(surface, proposals, share=True)


def _apply(
    surface: Mapping[str, Any], proposals: Iterable[Mapping[str, Any]], *, share: bool
) -> dict[str, Any]:
    actions = [
        {
            "ref": action["ref"],
            "inputSchema": action.get("inputSchema", {})
            if share
            else json_copy(action.get("inputSchema", {})),
        }
        for action in surface.get("actions") or ()
    ]
    copied: set[int] = set()  # with ``share``: the actions whose schema is a copy already
    removed: set[str] = set()
    for proposal in proposals:
        kind = proposal.get("kind")
        if kind == "noise-quarantine":
            removed.add(proposal["ref"])
        elif kind == "enum-tighten":
            for index, action in enumerate(actions):
                if action["ref"] != proposal["ref"]:
                    continue
                schema = action["inputSchema"]
                if type(schema) is dict:
                    properties = schema.get("properties")
                    if type(properties) is dict and type(properties.get(proposal["key"])) is dict:
                        if share and index not in copied:
                            copied.add(index)
                            schema = action["inputSchema"] = json_copy(schema)
                            properties = schema["properties"]
                        tightened = dict(properties[proposal["key"]])
                        tightened["enum"] = json_copy(list(proposal["values"]))
                        properties[proposal["key"]] = tightened
                break
    survivors = [action for action in actions if action["ref"] not in removed]
    survivors.sort(key=lambda action: code_unit_key(action["ref"]))
    return {"version": 1, "actions": survivors}


def _score_and_successes(report: Report | Mapping[str, Any]) -> tuple[float, int]:
    if isinstance(report, Report):
        return report.score, report.totals.succeeded
    return report["score"], report["totals"]["succeeded"]


def evaluate_gate(
    before: Report | Mapping[str, Any], after: Report | Mapping[str, Any]
) -> dict[str, Any]:
    """``evaluateGate`` (spec §7.2): the score must not rise and no success may be lost."""
    before_score, before_ok = _score_and_successes(before)
    after_score, after_ok = _score_and_successes(after)
    reasons = []
    if after_score > before_score:
        reasons.append(f"score increased {js_string(before_score)} → {js_string(after_score)}")
    if after_ok < before_ok:
        reasons.append(f"successful calls dropped {js_string(before_ok)} → {js_string(after_ok)}")
    return {
        "passed": not reasons,
        "beforeScore": before_score,
        "afterScore": after_score,
        "delta": round_metric(after_score - before_score),
        "reasons": reasons,
    }
