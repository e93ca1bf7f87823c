"""Explanations in plain words (``--explain``): proposals and parameter freedom. Pure.

Nothing here changes a number: explanations restate the evidence, the thresholds of
spec §5 each proposal met, and for a parameter the rule of spec §2.6 that priced it and
what would lower it. They are added to a command's output (an ``explanations`` key) only
when asked for, so every hashed or reference output stays as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_entropy.core.fingerprint import ENUM_SATURATION_BITS, static_freedom
from pytest_entropy.core.jscompat import js_string, value_key
from pytest_entropy.core.proposals import (
    AUTO_APPLY_PROPOSAL_KINDS,
    ENUM_CANDIDATE_ANNOTATION,
    ENUM_MAX_DISTINCT,
    ENUM_MIN_DISTINCT,
    ENUM_MIN_OBSERVATIONS,
    ENUM_MIN_TOP_SHARE,
    FUSE_MIN_EXECUTIONS,
    FUSE_MIN_OCCURRENCES,
    QUARANTINE_MIN_CALLS,
    QUARANTINE_MIN_STAGE_ENTROPY_BITS,
    SPLIT_MIN_CLUSTER_CALLS,
    SPLIT_MIN_SHAPE_ENTROPY_BITS,
    Proposal,
    ProposalEvidence,
)

__all__ = [
    "ParameterFreedom",
    "explain_freedom",
    "explain_proposals",
    "parameter_freedom",
]

_SHOWN_VALUES = 8


# ---------------------------------------------------------------------- freedom


@dataclass(frozen=True, slots=True)
class ParameterFreedom:
    """One parameter's share of its tool's static freedom (spec §2.6)."""

    ref: str
    parameter: str
    freedom: float
    rule: str


def _rule(schema: Any, required: bool) -> str:
    """The §2.6 rule that priced one property (its type, enum or const), and the optional tax."""
    if type(schema) is not dict:
        rule = "not a schema: 0.5"
    elif "anyOf" in schema or "oneOf" in schema:
        rule = "best branch + 0.1 per extra branch"
    elif "enum" in schema:
        rule = "enum: log2(values) / saturation"
    elif "const" in schema:
        rule = "const: 0"
    else:
        rule = f"type {schema.get('type', '(none)')}"
    return rule if required else rule + " + 0.25 optional"


def parameter_freedom(surface: Mapping[str, Any]) -> list[ParameterFreedom]:
    """Each action's freedom split by parameter, worst first (an open object adds 0.5).

    Only an object schema with properties splits; any other schema is one row, ``(whole)``.
    """
    rows: list[ParameterFreedom] = []
    for action in surface.get("actions") or []:
        ref = str(action.get("ref"))
        schema = action.get("inputSchema")
        properties = schema.get("properties") if type(schema) is dict else None
        if type(schema) is not dict or schema.get("type") != "object" or not properties:
            rows.append(ParameterFreedom(ref, "(whole)", static_freedom(schema), "whole schema"))
            continue
        required = schema.get("required")
        names = {n for n in required if type(n) is str} if type(required) is list else set()
        for key in sorted(properties):
            value = static_freedom(properties[key], 1) + (0.0 if key in names else 0.25)
            rows.append(ParameterFreedom(ref, key, value, _rule(properties[key], key in names)))
        if schema.get("additionalProperties") is not False:
            rows.append(ParameterFreedom(ref, "(additional)", 0.5, "open object: 0.5"))
    rows.sort(key=lambda row: (-row.freedom, row.ref, row.parameter))
    return rows


def _advice(schema: Any, parameter: str, required: bool) -> str:
    """What would lower one parameter's freedom (spec §2.6 read backwards)."""
    if parameter == "(additional)":
        return "set additionalProperties: false (-0.5)"
    if parameter == "(whole)":
        if type(schema) is not dict or schema.get("type") != "object":
            return "declare an object schema with properties"
        return "declare the properties the tool takes"
    tax = "" if required else "; make it required (-0.25)"
    if type(schema) is not dict:
        return "give it a schema" + tax
    if "anyOf" in schema or "oneOf" in schema:
        return "fewer branches (0.1 each beyond the first), or tighten the freest one" + tax
    if type(schema.get("enum")) is list:
        count = len(schema["enum"])
        if count <= 1:
            return "already closed" + tax
        return f"drop enum values ({count} now; every halving saves 1/{ENUM_SATURATION_BITS})" + tax
    if "const" in schema:
        return "already closed" + tax
    kind = schema.get("type")
    if kind == "string":
        return (
            "free string 1.0: declare an enum (or a const); a pattern or format checks calls"
            " but is not priced" + tax
        )
    if kind in ("number", "integer"):
        return f"free {kind} 0.5: declare an enum (or a const)" + tax
    if kind == "boolean":
        return "boolean 0.1: a const would make it 0" + tax
    if kind == "array":
        return "0.5 + half its items' freedom: tighten the items" + tax
    if kind == "object":
        return "sum of its properties: close it and tighten them" + tax
    return "no type: declare one (0.75 now)" + tax


def explain_freedom(surface: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``freedom --explain``: per parameter, worst first, its freedom, the rule that priced
    it and what would lower it."""
    schemas: dict[str, Any] = {}
    for action in surface.get("actions") or []:
        schemas[str(action.get("ref"))] = action.get("inputSchema")
    out = []
    for row in parameter_freedom(surface):
        schema = schemas.get(row.ref)
        prop: Any = schema
        required = True
        if row.parameter not in ("(whole)", "(additional)") and type(schema) is dict:
            prop = schema["properties"][row.parameter]
            names = schema.get("required")
            required = type(names) is list and row.parameter in names
        out.append(
            {
                "ref": row.ref,
                "parameter": row.parameter,
                "freedom": row.freedom,
                "rule": row.rule,
                "advice": _advice(prop, row.parameter, required),
            }
        )
    return out


# -------------------------------------------------------------------- proposals


def _values(values: Sequence[Any]) -> str:
    shown = ", ".join(js_string(value) for value in values[:_SHOWN_VALUES])
    more = f", ... ({len(values)} in all)" if len(values) > _SHOWN_VALUES else ""
    return f"[{shown}{more}]"


def _declared_enum(surface: Mapping[str, Any] | None, ref: str, key: str) -> list[Any] | None:
    schema = None
    for action in (surface or {}).get("actions") or ():
        if type(action) is dict and action.get("ref") == ref:
            schema = action.get("inputSchema")  # later duplicates win, as the proposals read
    if type(schema) is not dict or type(schema.get("properties")) is not dict:
        return None
    target = schema["properties"].get(key)
    if type(target) is not dict or type(target.get("enum")) is not list:
        return None
    return list(target["enum"])


def _threshold(name: str, value: Any, bound: str) -> dict[str, Any]:
    return {"name": name, "value": value, "bound": bound}


def _enum(
    proposal: Proposal, evidence: ProposalEvidence | None, surface: Mapping[str, Any] | None
) -> tuple[dict[str, Any], str]:
    ref, key = proposal["ref"], proposal["key"]
    tally = evidence.tallies.get((ref, key)) if evidence is not None else None
    observed = [row[1] for row in tally.ranked()] if tally is not None else []
    distinct = len(observed) if tally is not None else proposal["distinct"]
    thresholds = [
        _threshold("observations", proposal["calls"], f">= {ENUM_MIN_OBSERVATIONS}"),
        _threshold(
            "distinct observed values", distinct, f"{ENUM_MIN_DISTINCT} to {ENUM_MAX_DISTINCT}"
        ),
        _threshold("top share", proposal["topShare"], f">= {ENUM_MIN_TOP_SHARE}"),
    ]
    facts: dict[str, Any] = {"thresholds": thresholds}
    words = (
        f"{ref}.{key}: {js_string(proposal['calls'])} observations of {distinct} distinct"
        f" values, top share {js_string(proposal['topShare'])} (met: at least"
        f" {ENUM_MIN_OBSERVATIONS} observations, {ENUM_MIN_DISTINCT} to {ENUM_MAX_DISTINCT}"
        f" distinct, top share at least {ENUM_MIN_TOP_SHARE})"
    )
    if proposal["kind"] == "enum-tighten":
        declared = _declared_enum(surface, ref, key) or []
        kept = {value_key(value) for value in proposal["values"]}
        removes = [m for m in declared if _primitive(m) and value_key(m) not in kept]
        domain = {value_key(m) for m in declared if _primitive(m)}
        ignored = [value for value in observed if value_key(value) not in domain]
        facts.update(declared=declared, keeps=list(proposal["values"]), removes=removes)
        words += (
            f"; the declared enum of {len(declared)} values keeps {_values(proposal['values'])}"
            f" and would refuse {_values(removes)}"
        )
        if ignored:
            facts["ignoredOutsideEnum"] = ignored
            words += (
                f"; {len(ignored)} observed values outside the declared enum are ignored"
                f" {_values(ignored)} (the floor rule: a compile never widens)"
            )
    else:
        facts["values"] = list(proposal["values"])
        words += (
            f"; the parameter is annotated {ENUM_CANDIDATE_ANNOTATION}, so a human may declare"
            f" the enum {_values(proposal['values'])} (review only)"
        )
    return facts, words


def _primitive(value: Any) -> bool:
    return type(value) in (str, bool, int, float)


def _split(proposal: Proposal) -> tuple[dict[str, Any], str]:
    clusters = proposal["clusters"]
    facts = {
        "thresholds": [
            _threshold(
                "shape entropy bits",
                proposal["shapeEntropyBits"],
                f">= {SPLIT_MIN_SHAPE_ENTROPY_BITS}",
            ),
            _threshold("disjoint key-set clusters", len(clusters), ">= 2"),
            _threshold(
                "calls of the smallest cluster",
                min(c["calls"] for c in clusters),
                f">= {SPLIT_MIN_CLUSTER_CALLS}",
            ),
        ]
    }
    shapes = "; ".join("{" + ", ".join(c["keys"]) + "}" + f" x{c['calls']}" for c in clusters)
    words = (
        f"{proposal['ref']}: calls take {len(clusters)} disjoint argument shapes ({shapes}),"
        f" shape entropy {js_string(proposal['shapeEntropyBits'])} bits (met: at least"
        f" {SPLIT_MIN_SHAPE_ENTROPY_BITS}); one tool per shape would price each alone"
        " (review only)"
    )
    return facts, words


def _fuse(proposal: Proposal) -> tuple[dict[str, Any], str]:
    facts = {
        "thresholds": [
            _threshold("occurrences", proposal["occurrences"], f">= {FUSE_MIN_OCCURRENCES}"),
            _threshold("executions", f"{FUSE_MIN_EXECUTIONS} or more", f">= {FUSE_MIN_EXECUTIONS}"),
        ]
    }
    words = (
        " -> ".join(proposal["sequence"])
        + f": ran {proposal['occurrences']} times in successful runs of distinct tools (met:"
        f" at least {FUSE_MIN_OCCURRENCES} occurrences in {FUSE_MIN_EXECUTIONS} executions);"
        " one tool doing all of it would save the model the choices (review only)"
    )
    return facts, words


def _quarantine(proposal: Proposal) -> tuple[dict[str, Any], str]:
    facts = {
        "thresholds": [
            _threshold("calls", proposal["calls"], f">= {QUARANTINE_MIN_CALLS}"),
            _threshold(
                "failed vs succeeded",
                f"{proposal['failed']} vs {proposal['succeeded']}",
                "failed > succeeded",
            ),
            _threshold(
                "failure-stage entropy bits",
                proposal["failureStageEntropyBits"],
                f">= {QUARANTINE_MIN_STAGE_ENTROPY_BITS}",
            ),
        ]
    }
    words = (
        f"{proposal['ref']}: {proposal['failed']} of {proposal['calls']} calls failed"
        f" ({proposal['succeeded']} succeeded), failing at several stages"
        f" ({js_string(proposal['failureStageEntropyBits'])} bits; met: at least"
        f" {QUARANTINE_MIN_CALLS} calls, more failed than succeeded, at least"
        f" {QUARANTINE_MIN_STAGE_ENTROPY_BITS} bit); the quarantine hides the tool"
    )
    return facts, words


def explain_proposals(
    proposals: Sequence[Proposal],
    *,
    evidence: ProposalEvidence | None,
    surface: Mapping[str, Any] | None,
    gains: Mapping[int, float],
    statuses: Mapping[int, str] | None = None,
) -> list[dict[str, Any]]:
    """One explanation per proposal, in proposal order: its evidence, the thresholds it
    met, the values it would remove, its own gain (auto proposals, when measured), and with
    ``statuses`` what the compile did with it; ``text`` says it in one sentence."""
    out = []
    for index, proposal in enumerate(proposals):
        kind = proposal["kind"]
        if kind in ("enum-tighten", "declare-enum"):
            facts, words = _enum(proposal, evidence, surface)
        elif kind == "overload-split":
            facts, words = _split(proposal)
        elif kind == "sequence-fuse":
            facts, words = _fuse(proposal)
        else:
            facts, words = _quarantine(proposal)
        entry: dict[str, Any] = {"kind": kind}
        if "sequence" in proposal:
            entry["sequence"] = list(proposal["sequence"])
        else:
            entry["ref"] = proposal["ref"]
        if "key" in proposal:
            entry["key"] = proposal["key"]
        entry.update(facts)
        gain = gains.get(index)
        if kind in AUTO_APPLY_PROPOSAL_KINDS:
            entry["gain"] = gain
            if gain is not None:
                words += f"; alone it lowers the score by {js_string(gain)}"
        if statuses is not None and kind in AUTO_APPLY_PROPOSAL_KINDS:
            entry["status"] = statuses.get(index, "review only")
            words += f" [{entry['status']}]"
        entry["text"] = words
        out.append(entry)
    return out
