"""Proposals, review signals, the pure surface rewrite and the gate (spec §5, §7.1-§7.2).

Proposals are plain JSON objects with the reference's key order (spec §5.1), so they print,
hash and compare exactly as the reference's do:

* ``enum-tighten`` ``{kind, ref, key, values, calls, distinct, topShare}`` (auto-applied);
* ``declare-enum`` (same fields; review only);
* ``overload-split`` ``{kind, ref, shapeEntropyBits, clusters: [{keys, calls}]}`` (review);
* ``sequence-fuse`` ``{kind, sequence, occurrences}`` (review);
* ``noise-quarantine`` ``{kind, ref, calls, succeeded, failed, failureStageEntropyBits}``
  (auto-applied).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .canonical import js_stringify, json_copy
from .jscompat import code_unit_key, js_own_keys, js_string, js_typeof, round_metric, value_key
from .records import Operation, RepairRow, Report, Trace, ValueObservation

__all__ = [
    "AUTO_APPLY_PROPOSAL_KINDS",
    "ENUM_CANDIDATE_ANNOTATION",
    "MAX_PROPOSALS_PER_KIND",
    "apply_proposals_to_surface",
    "entropy_review_key",
    "entropy_review_signals",
    "evaluate_gate",
    "format_review_signal",
    "propose_entropy_reductions",
]

ENUM_MIN_OBSERVATIONS = 8
ENUM_MAX_DISTINCT = 8
ENUM_MIN_TOP_SHARE = 0.5
SPLIT_MIN_SHAPE_ENTROPY_BITS = 1
SPLIT_MIN_CLUSTER_CALLS = 2
FUSE_MIN_SEQUENCE_LENGTH = 3
FUSE_MAX_SEQUENCE_LENGTH = 6
FUSE_MIN_OCCURRENCES = 3
FUSE_MIN_EXECUTIONS = 3
QUARANTINE_MIN_CALLS = 3
QUARANTINE_MIN_STAGE_ENTROPY_BITS = 1
MAX_PROPOSALS_PER_KIND = 8
ENUM_CANDIDATE_ANNOTATION = "x-fabric-enum-candidate"
AUTO_APPLY_PROPOSAL_KINDS = ("enum-tighten", "noise-quarantine")

Proposal = dict[str, Any]
_SEQUENCE_JOIN = "→"


# ------------------------------------------------------------------------ inputs


def _report_rows(report: Report | Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Ref rows as JSON objects, in report order."""
    if isinstance(report, Report):
        return [row.to_json() for row in report.refs]
    return list(report.get("refs", ()))


def _operations(trace: Trace | Mapping[str, Any]) -> Sequence[Any]:
    if isinstance(trace, Trace):
        return trace.operations
    return [
        Operation(op["ref"], op["args"], op["outcome"], op.get("failureStage"))
        for op in trace.get("operations", ())
    ]


def _schemas_by_ref(surface: Mapping[str, Any] | None) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    if surface is None:
        return schemas
    for action in surface.get("actions") or ():
        if type(action) is dict and type(action.get("ref")) is str:
            schemas[action["ref"]] = action.get("inputSchema")
    return schemas


def _observation_fields(observation: ValueObservation | Mapping[str, Any]) -> tuple[Any, ...]:
    if isinstance(observation, ValueObservation):
        weight = 1 if observation.count is None else observation.count
        return observation.ref, observation.key, observation.value, weight
    count = observation.get("count")
    return (
        observation["ref"],
        observation["key"],
        observation["value"],
        1 if count is None else count,
    )


def _is_primitive(value: Any) -> bool:
    t = type(value)
    return t is str or t is bool or t is int or t is float


# ----------------------------------------------------------------- value tallies


class _Tally:
    """Per (ref, key): value key -> [value, count] in first-seen order, and the total."""

    __slots__ = ("counts", "key", "ref", "total")

    def __init__(self, ref: str, key: str) -> None:
        self.ref = ref
        self.key = key
        self.counts: dict[str, list[Any]] = {}
        self.total: int | float = 0

    def add(self, value: Any, weight: int | float) -> None:
        identity = value_key(value)
        slot = self.counts.get(identity)
        if slot is None:
            self.counts[identity] = [value, weight]
        else:
            # The entry keeps its first-seen position; the value is the last one seen.
            slot[0] = value
            slot[1] += weight
        self.total += weight

    def ranked(self) -> list[tuple[str, Any, int | float]]:
        rows = [(identity, slot[0], slot[1]) for identity, slot in self.counts.items()]
        rows.sort(key=lambda row: code_unit_key(row[0]))
        rows.sort(key=lambda row: -row[2])
        return rows


def value_tallies(
    traces: Iterable[Trace | Mapping[str, Any]],
    value_observations: Iterable[ValueObservation | Mapping[str, Any]] | None,
) -> list[_Tally]:
    """The value corpus of spec §5.2: observations when supplied (even ``[]``), else the
    top-level primitive trace arguments of every non-``fabric.`` operation."""
    tallies: dict[tuple[str, str], _Tally] = {}

    def tally(ref: str, key: str) -> _Tally:
        found = tallies.get((ref, key))
        if found is None:
            found = _Tally(ref, key)
            tallies[(ref, key)] = found
        return found

    if value_observations is not None:
        for observation in value_observations:
            ref, key, value, weight = _observation_fields(observation)
            tally(ref, key).add(value, weight)
    else:
        for trace in traces:
            for op in _operations(trace):
                ref, args = op[0], op[1]
                if ref.startswith("fabric."):
                    continue
                for key in js_own_keys(args):
                    value = args[key]
                    if _is_primitive(value):
                        tally(ref, key).add(value, 1)
    return list(tallies.values())


# --------------------------------------------------------------------- proposals


def _enum_proposals(
    tallies: list[_Tally], surface: Mapping[str, Any] | None
) -> tuple[list[Proposal], list[Proposal]]:
    schemas = _schemas_by_ref(surface)
    closed: list[tuple[str, Proposal]] = []
    opened: list[tuple[str, Proposal]] = []
    for tally in tallies:
        if tally.total < ENUM_MIN_OBSERVATIONS:
            continue
        distinct = len(tally.counts)
        if distinct < 2 or distinct > ENUM_MAX_DISTINCT:
            continue
        ranked = tally.ranked()
        top_share = round_metric(ranked[0][2] / tally.total)
        if top_share < ENUM_MIN_TOP_SHARE:
            continue
        target = None
        if surface is not None:
            schema = schemas.get(tally.ref)
            if type(schema) is dict:
                properties = schema.get("properties")
                if type(properties) is dict:
                    target = properties.get(tally.key)
        if type(target) is not dict:
            continue
        order = tally.ref + "\u0000" + tally.key
        if target.get("type") == "boolean":
            continue
        enum = target.get("enum")
        if type(enum) is list:
            domain = {value_key(member) for member in enum if _is_primitive(member)}
            kept = [row for row in ranked if row[0] in domain]
            if not kept or len(kept) == len(domain):
                continue
            closed.append(
                (
                    order,
                    {
                        "kind": "enum-tighten",
                        "ref": tally.ref,
                        "key": tally.key,
                        "values": [row[1] for row in kept],
                        "calls": tally.total,
                        "distinct": len(kept),
                        "topShare": top_share,
                    },
                )
            )
        elif target.get(ENUM_CANDIDATE_ANNOTATION) is True:
            opened.append(
                (
                    order,
                    {
                        "kind": "declare-enum",
                        "ref": tally.ref,
                        "key": tally.key,
                        "values": [row[1] for row in ranked],
                        "calls": tally.total,
                        "distinct": distinct,
                        "topShare": top_share,
                    },
                )
            )
    closed.sort(key=lambda item: code_unit_key(item[0]))
    opened.sort(key=lambda item: code_unit_key(item[0]))
    return (
        [proposal for _, proposal in closed[:MAX_PROPOSALS_PER_KIND]],
        [proposal for _, proposal in opened[:MAX_PROPOSALS_PER_KIND]],
    )


def _split_proposals(
    rows: list[Mapping[str, Any]], traces: Sequence[Trace | Mapping[str, Any]]
) -> list[Proposal]:
    bits = {row["ref"]: row["shapeEntropyBits"] for row in rows}
    overloaded = {ref for ref, value in bits.items() if value >= SPLIT_MIN_SHAPE_ENTROPY_BITS}
    if not overloaded:
        return []
    clusters: dict[str, dict[tuple[str, ...], int]] = {}
    for trace in traces:
        for op in _operations(trace):
            ref = op[0]
            if ref not in overloaded:
                continue
            keys = tuple(sorted(op[1], key=code_unit_key))
            per_ref = clusters.setdefault(ref, {})
            per_ref[keys] = per_ref.get(keys, 0) + 1
    proposals: list[Proposal] = []
    for ref in sorted(clusters, key=code_unit_key):
        if len(proposals) >= MAX_PROPOSALS_PER_KIND:
            break
        kept = [(keys, calls) for keys, calls in clusters[ref].items() if calls >= 2]
        kept.sort(key=lambda item: code_unit_key(",".join(item[0])))
        kept.sort(key=lambda item: -item[1])
        picked: list[tuple[tuple[str, ...], int]] = []
        used: set[str] = set()
        for keys, calls in kept:
            if used.isdisjoint(keys):
                picked.append((keys, calls))
                used.update(keys)
        if len(picked) >= 2:
            proposals.append(
                {
                    "kind": "overload-split",
                    "ref": ref,
                    "shapeEntropyBits": bits.get(ref, 0),
                    "clusters": [
                        {"keys": list(keys), "calls": calls}
                        for keys, calls in picked[:MAX_PROPOSALS_PER_KIND]
                    ],
                }
            )
    return proposals


def _contains(outer: Sequence[str], inner: Sequence[str]) -> bool:
    width = len(inner)
    return any(
        list(outer[start : start + width]) == list(inner) for start in range(len(outer) - width + 1)
    )


def _fuse_proposals(traces: Sequence[Trace | Mapping[str, Any]]) -> list[Proposal]:
    found: dict[str, list[Any]] = {}  # identity -> [sequence, occurrences, executions]
    for execution, trace in enumerate(traces):
        segment: list[str] = []
        segments: list[list[str]] = []
        for op in _operations(trace):
            ref, outcome = op[0], op[2]
            if outcome == "succeeded" and not ref.startswith(("fabric.", "pi.")):
                segment.append(ref)
            elif segment:
                segments.append(segment)
                segment = []
        if segment:
            segments.append(segment)
        for refs in segments:
            for width in range(
                FUSE_MIN_SEQUENCE_LENGTH, min(FUSE_MAX_SEQUENCE_LENGTH, len(refs)) + 1
            ):
                for start in range(len(refs) - width + 1):
                    window = refs[start : start + width]
                    if len(set(window)) != width:
                        continue
                    identity = _SEQUENCE_JOIN.join(window)
                    entry = found.get(identity)
                    if entry is None:
                        entry = [window, 0, set()]
                        found[identity] = entry
                    entry[1] += 1
                    entry[2].add(execution)
    candidates = [
        (identity, entry[0], entry[1])
        for identity, entry in found.items()
        if entry[1] >= FUSE_MIN_OCCURRENCES and len(entry[2]) >= FUSE_MIN_EXECUTIONS
    ]
    candidates.sort(key=lambda item: code_unit_key(item[0]))
    candidates.sort(key=lambda item: (-len(item[1]), -item[2]))
    selected: list[Proposal] = []
    for _, sequence, occurrences in candidates:
        if len(selected) >= MAX_PROPOSALS_PER_KIND:
            break
        if any(
            _contains(chosen["sequence"], sequence) or _contains(sequence, chosen["sequence"])
            for chosen in selected
        ):
            continue
        selected.append(
            {"kind": "sequence-fuse", "sequence": list(sequence), "occurrences": occurrences}
        )
    return selected


def _quarantine_proposals(
    rows: list[Mapping[str, Any]], surface: Mapping[str, Any] | None
) -> list[Proposal]:
    present = set(_schemas_by_ref(surface)) if surface is not None else None
    proposals: list[Proposal] = []
    for row in rows:
        if len(proposals) >= MAX_PROPOSALS_PER_KIND:
            break
        if (
            row["calls"] >= QUARANTINE_MIN_CALLS
            and row["failed"] > row["succeeded"]
            and row["failureStageEntropyBits"] >= QUARANTINE_MIN_STAGE_ENTROPY_BITS
            and (present is None or row["ref"] in present)
        ):
            proposals.append(
                {
                    "kind": "noise-quarantine",
                    "ref": row["ref"],
                    "calls": row["calls"],
                    "succeeded": row["succeeded"],
                    "failed": row["failed"],
                    "failureStageEntropyBits": row["failureStageEntropyBits"],
                }
            )
    return proposals


def propose_entropy_reductions(
    report: Report | Mapping[str, Any],
    traces: Iterable[Trace | Mapping[str, Any]],
    surface: Mapping[str, Any] | None = None,
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    value_observations: Iterable[ValueObservation | Mapping[str, Any]] | None = None,
) -> list[Proposal]:
    """``proposeEntropyReductions`` (spec §5): pure; repairs never propose (§5.8)."""
    trace_list = list(traces)
    rows = _report_rows(report)
    tightens, declares = _enum_proposals(value_tallies(trace_list, value_observations), surface)
    return [
        *tightens,
        *declares,
        *_split_proposals(rows, trace_list),
        *_fuse_proposals(trace_list),
        *_quarantine_proposals(rows, surface),
    ]


# ---------------------------------------------------------------- review signals


def entropy_review_signals(proposals: Iterable[Proposal]) -> list[Proposal]:
    """The proposals the loop never applies (declare-enum, splits, fusions), in order."""
    return [p for p in proposals if p.get("kind") not in AUTO_APPLY_PROPOSAL_KINDS]


def format_review_signal(proposal: Mapping[str, Any]) -> str:
    """One line per review signal (spec §5.9)."""
    kind = proposal.get("kind")
    if kind == "declare-enum":
        values = list(proposal["values"])
        shown = ", ".join(js_string(value) for value in values[:4])
        more = ", ..." if len(values) > 4 else ""
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


# --------------------------------------------------------------- rewrite and gate


def apply_proposals_to_surface(
    surface: Mapping[str, Any], proposals: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """The mechanical rewrite (spec §7.1): pure, input untouched, actions re-sorted by ref."""
    actions = [
        {"ref": action["ref"], "inputSchema": json_copy(action.get("inputSchema", {}))}
        for action in surface.get("actions") or ()
    ]
    removed: set[str] = set()
    for proposal in proposals:
        kind = proposal.get("kind")
        if kind == "noise-quarantine":
            removed.add(proposal["ref"])
        elif kind == "enum-tighten":
            for action in actions:
                if action["ref"] != proposal["ref"]:
                    continue
                schema = action["inputSchema"]
                if type(schema) is dict:
                    properties = schema.get("properties")
                    if type(properties) is dict and type(properties.get(proposal["key"])) is dict:
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
