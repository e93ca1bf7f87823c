"""User-facing notices of the compile loop (spec §9.6).

No proposal-kind jargon reaches these texts: a tightening reads "tightened ref.key to {...}",
a quarantine "hid ref (...)", review suggestions are counted by plain-language groups.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_entropy.core.jscompat import (
    JS_WHITESPACE,
    js_round,
    js_string,
    js_to_exponential,
    js_to_fixed,
)
from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS

__all__ = [
    "DEFAULT_REVIEW_HINT",
    "format_compile_notice",
    "format_duration",
    "format_external_refs_note",
    "format_review_notice",
    "format_score_change",
]

DEFAULT_REVIEW_HINT = "/fabric entropy"
_WHITESPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")
_GROUP_NAMES = {
    "declare-enum": ("enum declaration", "enum declarations"),
    "overload-split": ("action split", "action splits"),
    "sequence-fuse": ("sequence fusion", "sequence fusions"),
}


def format_duration(elapsed_ms: float) -> str:
    """``1.5s`` from one second up, else whole milliseconds (at least ``1ms``)."""
    if elapsed_ms >= 1000:
        return js_to_fixed(elapsed_ms / 1000, 1) + "s"
    return f"{js_string(max(1.0, js_round(elapsed_ms)))}ms"


def _utf16_cut(text: str, units: int) -> str:
    encoded = text.encode("utf-16-le", "surrogatepass")
    return encoded[: units * 2].decode("utf-16-le", "surrogatepass")


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        text = _WHITESPACE_RUN.sub(" ", value).strip(JS_WHITESPACE)
        text = text or '""'
    else:
        text = js_string(value)
    if len(text.encode("utf-16-le", "surrogatepass")) // 2 > 32:
        text = _utf16_cut(text, 31) + "…"
    return text


def _detail(proposal: Mapping[str, Any]) -> str:
    if proposal["kind"] == "enum-tighten":
        values = ", ".join(_render_value(value) for value in proposal["values"])
        return f"tightened {proposal['ref']}.{proposal['key']} to {{{values}}}"
    return f"hid {proposal['ref']} ({proposal['failed']} failed, {proposal['succeeded']} succeeded)"


def format_score_change(before: float, after: float) -> str:
    """Enough decimals to tell the scores apart, a signed delta, and "lower is better"."""
    if after == before:
        return f"entropy score unchanged at {js_to_fixed(before, 6)} (lower is better)"
    precision = 6
    while precision < 12 and js_to_fixed(before, precision) == js_to_fixed(after, precision):
        precision += 1
    delta = after - before
    magnitude = js_to_fixed(abs(delta), precision)
    rendered = magnitude if float(magnitude) != 0 else js_to_exponential(abs(delta), 2)
    verb = "improved" if delta < 0 else "changed"
    sign = "+" if delta > 0 else "−"
    return (
        f"entropy score {verb} {js_to_fixed(before, precision)} → {js_to_fixed(after, precision)}"
        f" ({sign}{rendered}; lower is better)"
    )


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def format_compile_notice(
    proposals: Iterable[Mapping[str, Any]],
    before_score: float,
    after_score: float,
    elapsed_ms: float,
    review_count: int = 0,
    *,
    review_hint: str = DEFAULT_REVIEW_HINT,
) -> str:
    """The notice for a newly saved artifact that changed the effective surface."""
    applied = [p for p in proposals if p.get("kind") in AUTO_APPLY_PROPOSAL_KINDS]
    parts = [f"entropy: background optimization complete ({format_duration(elapsed_ms)})"]
    parts.extend(_detail(proposal) for proposal in applied[:3])
    if len(applied) > 3:
        parts.append(f"+{len(applied) - 3} more")
    if not applied:
        parts.append("surface updated")
    parts.append(format_score_change(before_score, after_score))
    parts.append("safety checks passed")
    if review_count:
        suggestions = _plural(review_count, "suggestion", "suggestions")
        parts.append(f"{suggestions} await review ({review_hint})")
    return " · ".join(parts)


def format_review_notice(
    review: Iterable[Mapping[str, Any]], *, review_hint: str = DEFAULT_REVIEW_HINT
) -> str:
    """The notice for a changed, non-empty set of review suggestions."""
    groups: dict[str, int] = {}
    for proposal in review:
        kind = str(proposal.get("kind"))
        groups[kind] = groups.get(kind, 0) + 1
    total = sum(groups.values())
    parts = [f"entropy: {_plural(total, 'suggestion', 'suggestions')} await review"]
    for kind, count in groups.items():
        one, many = _GROUP_NAMES.get(kind, (kind, kind))
        parts.append(_plural(count, one, many))
    parts.append(f"inspect with {review_hint}")
    return " · ".join(parts)


def format_external_refs_note(refs: Iterable[str]) -> str:
    """The note naming ``$ref`` targets outside their schema, which replay never fetches and
    so does not enforce (the first three, then a count)."""
    listed = sorted(set(refs))
    shown = ", ".join(repr(ref) for ref in listed[:3])
    more = f" and {len(listed) - 3} more" if len(listed) > 3 else ""
    return (
        f"note: {len(listed)} schema $ref target(s) lie outside their schema; they are never"
        f" fetched, so they were not enforced: {shown}{more}"
    )
