"""Review signals (spec §5.9): the proposals the loop never applies, one line each, and the
key that de-duplicates a review set. ``proposals`` re-exports every name here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.jscompat import code_unit_key, js_string, js_typeof

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

__all__ = [
    "AUTO_APPLY_PROPOSAL_KINDS",
    "V3_AUTO_APPLY_PROPOSAL_KINDS",
    "entropy_review_key",
    "entropy_review_signals",
    "format_review_signal",
]

AUTO_APPLY_PROPOSAL_KINDS = ("enum-tighten", "noise-quarantine")
# The only kind a v3 compile applies (re-exported by core/v3; here so that a report's text
# knows it without a v2 run importing the v3 package).
V3_AUTO_APPLY_PROPOSAL_KINDS = ("normal-form",)
# A review line shows at most this many of a signal's values (spec §5.9).
_REVIEW_VALUES_SHOWN = 4

Proposal: TypeAlias = "dict[str, Any]"


def entropy_review_signals(proposals: Iterable[Proposal]) -> list[Proposal]:
    """The proposals the loop never applies (declare-enum, splits, fusions), in order."""
    return [p for p in proposals if p.get("kind") not in AUTO_APPLY_PROPOSAL_KINDS]


def format_review_signal(proposal: Mapping[str, Any]) -> str:
    """One line per review signal (spec §5.9)."""
    kind = proposal.get("kind")
    if kind == "declare-enum":
        values = list(proposal["values"])
        shown = ", ".join(js_string(value) for value in values[:_REVIEW_VALUES_SHOWN])
        more = ", ..." if len(values) > _REVIEW_VALUES_SHOWN else ""
        return f"declare-enum {proposal['ref']}.{proposal['key']} ({shown}{more})"
    if kind == "overload-split":
        return f"overload-split {proposal['ref']} ({len(proposal['clusters'])} key-set clusters)"
    if kind == "sequence-fuse":
        return "sequence-fuse " + " -> ".join(proposal["sequence"])
    return f"{kind} {proposal.get('ref')}"


def _review_identity(proposal: Mapping[str, Any]) -> list[Any]:
    kind = proposal.get("kind")
    if kind == "declare-enum":
        return [
            kind,
            proposal["ref"],
            proposal["key"],
            [[js_typeof(value), value] for value in proposal["values"]],
        ]
    if kind == "overload-split":
        return [kind, proposal["ref"], [cluster["keys"] for cluster in proposal["clusters"]]]
    if kind == "sequence-fuse":
        return [kind, proposal["sequence"]]
    return [kind, proposal.get("ref")]


def entropy_review_key(review: Iterable[Mapping[str, Any]]) -> str:
    """The de-duplication key of a review set: vocabularies, splits and sequences, never
    evidence counts (spec §5.9)."""
    identities = sorted(
        (js_stringify(_review_identity(proposal)) for proposal in review), key=code_unit_key
    )
    return js_stringify(identities)
