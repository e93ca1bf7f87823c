"""Proposals and review signals (spec §5, §7.1); the rewrite and the gate are in ``gate``.

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

from pytest_entropy.core.jscompat import code_unit_key, js_own_keys, round_metric, value_key
from pytest_entropy.core.records import (
    ENTROPY_METRIC_VERSION,
    RepairRow,
    Report,
    Trace,
    ValueObservation,
    check_metric_version,
    observation_fields,
    operations_of,
)
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION_V3 as METRIC_VERSION_V3
from pytest_entropy.core.review_signals import (
    AUTO_APPLY_PROPOSAL_KINDS,
    Proposal,
    entropy_review_key,
    entropy_review_signals,
    format_review_signal,
)

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "AUTO_APPLY_PROPOSAL_KINDS",
    "ENUM_CANDIDATE_ANNOTATION",
    "MAX_PROPOSALS_PER_KIND",
    "Proposal",
    "ProposalEvidence",
    "entropy_review_key",
    "entropy_review_signals",
    "format_review_signal",
    "propose_entropy_reductions",
]

ENUM_MIN_OBSERVATIONS = 8
ENUM_MIN_DISTINCT = 2
ENUM_MAX_DISTINCT = 8
ENUM_MIN_TOP_SHARE = 0.5
SPLIT_MIN_SHAPE_ENTROPY_BITS = 1
SPLIT_MIN_CLUSTER_CALLS = 2
SPLIT_MIN_CLUSTERS = 2
SPLIT_MAX_CLUSTERS = 8
FUSE_MIN_SEQUENCE_LENGTH = 3
FUSE_MAX_SEQUENCE_LENGTH = 6
FUSE_MIN_OCCURRENCES = 3
FUSE_MIN_EXECUTIONS = 3
QUARANTINE_MIN_CALLS = 3
QUARANTINE_MIN_STAGE_ENTROPY_BITS = 1
MAX_PROPOSALS_PER_KIND = 8
ENUM_CANDIDATE_ANNOTATION = "x-fabric-enum-candidate"

_SEQUENCE_JOIN = "→"


# ------------------------------------------------------------------------ inputs


def _report_rows(report: Report | Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Ref rows as JSON objects, in report order."""
    if isinstance(report, Report):
        return [row.to_json() for row in report.refs]
    return list(report.get("refs", ()))


def _schemas_by_ref(surface: Mapping[str, Any] | None) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    if surface is None:
        return schemas
    for action in surface.get("actions") or ():
        if type(action) is dict and type(action.get("ref")) is str:
            schemas[action["ref"]] = action.get("inputSchema")
    return schemas


_TWO_53: Final = 2**53


def _is_primitive(value: Any) -> bool:
    t = type(value)
    return t is str or t is bool or t is int or t is float


# ----------------------------------------------------------------- value tallies


class _Tally:
    """Per (ref, key): value key -> [value, count] in first-seen order, and the total.

    A parameter with more than :data:`ENUM_MAX_DISTINCT` distinct values can never be
    proposed as an enum, and more data only adds values, so past that point the tally
    forgets its values (``overflowed``) and keeps counting the total: memory stays bounded
    per parameter however many distinct paths or queries a corpus holds.
    """

    __slots__ = ("counts", "key", "overflowed", "ref", "total")

    def __init__(self, ref: str, key: str) -> None:
        self.ref = ref
        self.key = key
        self.counts: dict[str, list[Any]] = {}
        self.total: int | float = 0
        self.overflowed = False

    def add(self, value: Any, weight: int | float) -> None:
        self.total += weight
        if self.overflowed:
            return
        identity = value_key(value)
        slot = self.counts.get(identity)
        if slot is None:
            self.counts[identity] = [value, weight]
            if len(self.counts) > ENUM_MAX_DISTINCT:
                self.overflow()
        else:
            # The entry keeps its first-seen position; the value is the last one seen.
            slot[0] = value
            slot[1] += weight

    def overflow(self) -> None:
        self.overflowed = True
        self.counts.clear()

    def merge(self, other: _Tally) -> None:
        """Fold in the tally of the input that follows."""
        self.total += other.total
        if self.overflowed:
            return
        if other.overflowed:
            self.overflow()
            return
        counts = self.counts
        for identity, (value, count) in other.counts.items():
            slot = counts.get(identity)
            if slot is None:
                counts[identity] = [value, count]
            else:
                slot[0] = value  # the last value seen, as one pass would keep it
                slot[1] += count
        if len(counts) > ENUM_MAX_DISTINCT:
            self.overflow()

    def ranked(self) -> list[tuple[str, Any, int | float]]:
        rows = [(identity, slot[0], slot[1]) for identity, slot in self.counts.items()]
        rows.sort(key=lambda row: code_unit_key(row[0]))
        rows.sort(key=lambda row: -row[2])
        return rows


def _tally_of(tallies: dict[tuple[str, str], _Tally], ref: str, key: str) -> _Tally:
    found = tallies.get((ref, key))
    if found is None:
        found = _Tally(ref, key)
        tallies[(ref, key)] = found
    return found


# ------------------------------------------------------------------------ evidence


class ProposalEvidence:
    """Everything the proposals read from a corpus, as a mergeable accumulator.

    * value tallies per ``(ref, key)``: from value observations, and from the top-level
      primitive trace arguments when ``trace_values`` is set (spec §5.2);
    * per ref, how often each argument key set was called (overload splits, §5.4), kept for
      every ref because which refs are overloaded is known only from the finished report;
    * every candidate sequence window of successful calls (§5.5) with its occurrences and up
      to :data:`FUSE_MIN_EXECUTIONS` distinct executions that contain it.

    ``merge(other)`` folds in the evidence of the input that follows, and the result equals
    one pass over both inputs, so files can be read anywhere and merged in file order.
    Executions are told apart by ``(origin, number)``: give each file its own ``origin``.
    """

    __slots__ = (
        "_executions",
        "clusters",
        "origin",
        "sequences",
        "tallies",
        "trace_values",
    )

    def __init__(self, *, trace_values: bool = False, origin: Any = 0) -> None:
        self.trace_values = trace_values
        self.origin = origin
        self._executions = 0
        self.tallies: dict[tuple[str, str], _Tally] = {}
        # ref -> argument keys as the call spelled them -> calls (sorted only when used).
        self.clusters: dict[str, dict[tuple[str, ...], int]] = {}
        # identity -> [sequence, occurrences, set of up to 3 execution ids]
        self.sequences: dict[str, list[Any]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def add_native(self, exported: Sequence[Any]) -> ProposalEvidence:
        """Fold in the evidence the Rust core gathered from the input that follows (its
        ``Evidence.export()``: ``(executions, tallies, clusters, sequences)``, plain data in
        first-seen order): the same as hearing that input here. Returns ``self``."""
        executions, tallies, clusters, sequences = exported
        fresh = not (self.tallies or self.clusters or self.sequences or self._executions)
        # A fresh evidence takes the data as its own; else it merges a copy in.
        heard = (
            self if fresh else ProposalEvidence(trace_values=self.trace_values, origin=self.origin)
        )
        for ref, key, total, overflowed, counts in tallies:
            tally = _Tally(ref, key)
            tally.total = total
            tally.overflowed = overflowed
            tally.counts = {identity: [value, count] for identity, value, count in counts}
            heard.tallies[(ref, key)] = tally
        for ref, rows in clusters:
            heard.clusters[ref] = dict(rows)
        # Executions are numbered from this evidence's next one, as if it had heard them.
        first = self._executions
        for identity, window, occurrences, numbers in sequences:
            ids = {(self.origin, first + number) for number in numbers}
            heard.sequences[identity] = [window, occurrences, ids]
        if not fresh:
            self.merge(heard)
        self._executions = first + executions
        return self

    # ------------------------------------------------------------------ accumulation

    def add_observation(self, observation: ValueObservation | Mapping[str, Any]) -> None:
        ref, key, value, weight = observation_fields(observation)
        _tally_of(self.tallies, ref, key).add(value, weight)

    def add_value(self, ref: str, key: str, value: Any) -> None:
        """:meth:`add_observation` of ``ValueObservation(ref, key, value)`` (weight 1), without
        the record (what the plain scan hands over when the evidence alone hears values)."""
        tally = self.tallies.get((ref, key))
        if tally is None:
            tally = self.tallies[(ref, key)] = _Tally(ref, key)
        tally.total += 1
        if tally.overflowed:
            return
        # value_key(value), spelled out for the common exact types.
        t = type(value)
        if t is str:
            identity = "string:" + value
        elif t is int and -_TWO_53 <= value <= _TWO_53:
            identity = "number:" + str(value)
        else:
            identity = value_key(value)
        counts = tally.counts
        slot = counts.get(identity)
        if slot is None:
            counts[identity] = [value, 1]
            if len(counts) > ENUM_MAX_DISTINCT:
                tally.overflow()
        else:
            slot[0] = value
            slot[1] += 1

    def add_observations(
        self, observations: Iterable[ValueObservation | Mapping[str, Any]]
    ) -> None:
        for observation in observations:
            self.add_observation(observation)

    def add_traces(self, traces: Iterable[Trace | Mapping[str, Any]]) -> None:
        for trace in traces:
            self.add_trace(trace)

    def add_trace(self, trace: Trace | Mapping[str, Any]) -> None:
        """Accumulate one trace (one execution)."""
        self.add_operations(operations_of(trace))

    def add_signed(
        self, operations: Sequence[Any], task_key: Any = None, model: Any = None
    ) -> None:
        """The scanner's ``on_signed`` hook: :meth:`add_operations` (the task key and model
        play no part in the evidence)."""
        self.add_operations(operations)

    def add_operations(self, operations: Sequence[Any]) -> None:
        """Accumulate one execution given by its operations: :class:`Operation` records, or
        the scanner's signed operations ``(ref, args, outcome, ...)`` (only the first three
        items are read), so a scan can hand them over without building records.

        The Rust core's evidence (``native/src/evidence.rs``) gathers the same where the
        pipeline reads a file natively (:meth:`add_native` folds it in)."""
        execution = (self.origin, self._executions)
        self._executions += 1
        clusters = self.clusters
        tallies = self.tallies
        segment: list[str] = []
        segments: list[list[str]] = []
        for op in operations:
            ref, args, outcome = op[0], op[1], op[2]
            per_ref = clusters.get(ref)
            if per_ref is None:
                per_ref = clusters[ref] = {}
            keys = tuple(args)
            per_ref[keys] = per_ref.get(keys, 0) + 1
            fabric = ref.startswith("fabric.")
            if self.trace_values and not fabric:
                for key in js_own_keys(args):
                    value = args[key]
                    if _is_primitive(value):
                        _tally_of(tallies, ref, key).add(value, 1)
            if outcome == "succeeded" and not fabric and not ref.startswith("pi."):
                segment.append(ref)
            elif segment:
                segments.append(segment)
                segment = []
        if segment:
            segments.append(segment)
        sequences = self.sequences
        for refs in segments:
            for width in range(
                FUSE_MIN_SEQUENCE_LENGTH, min(FUSE_MAX_SEQUENCE_LENGTH, len(refs)) + 1
            ):
                for start in range(len(refs) - width + 1):
                    window = refs[start : start + width]
                    if len(set(window)) != width:
                        continue
                    identity = _SEQUENCE_JOIN.join(window)
                    entry = sequences.get(identity)
                    if entry is None:
                        sequences[identity] = [window, 1, {execution}]
                        continue
                    entry[1] += 1
                    executions = entry[2]
                    if len(executions) < FUSE_MIN_EXECUTIONS:
                        executions.add(execution)

    def merge(self, other: ProposalEvidence) -> ProposalEvidence:
        """Fold in ``other`` (the evidence of the input that follows); returns ``self``."""
        for (ref, key), theirs in other.tallies.items():
            _tally_of(self.tallies, ref, key).merge(theirs)
        for ref, theirs_clusters in other.clusters.items():
            per_ref = self.clusters.get(ref)
            if per_ref is None:
                self.clusters[ref] = dict(theirs_clusters)
                continue
            for keys, calls in theirs_clusters.items():
                per_ref[keys] = per_ref.get(keys, 0) + calls
        for identity, (window, occurrences, executions) in other.sequences.items():
            entry = self.sequences.get(identity)
            if entry is None:
                self.sequences[identity] = [list(window), occurrences, set(executions)]
                continue
            entry[1] += occurrences
            mine_executions = entry[2]
            for execution in executions:
                if len(mine_executions) >= FUSE_MIN_EXECUTIONS:
                    break
                mine_executions.add(execution)
        return self

    # ------------------------------------------------------------------- proposals

    def key_set_clusters(self, ref: str) -> dict[tuple[str, ...], int]:
        """Calls of ``ref`` per argument key set, keys in UTF-16 code-unit order."""
        out: dict[tuple[str, ...], int] = {}
        for keys, calls in self.clusters.get(ref, {}).items():
            ordered = tuple(sorted(keys, key=code_unit_key))
            out[ordered] = out.get(ordered, 0) + calls
        return out

    def proposals(
        self,
        report: Report | Mapping[str, Any],
        surface: Mapping[str, Any] | None,
        *,
        metric_version: int = ENTROPY_METRIC_VERSION,
    ) -> list[Proposal]:
        """``proposeEntropyReductions`` over this evidence and the report it measured
        (``metric_version=3``: normal forms, then the review signals; core/v3/)."""
        rows = _report_rows(report)
        tightens, declares = _enum_proposals(list(self.tallies.values()), surface)
        structural = [*_split_proposals(rows, self), *_fuse_proposals(self)]
        if metric_version == METRIC_VERSION_V3:
            # Here, not at import: the v3 normal forms cost every v2 run's start-up.
            from pytest_entropy.core.v3.proposals import normal_form_proposals

            return [*normal_form_proposals(surface), *declares, *structural]
        return [*tightens, *declares, *structural, *_quarantine_proposals(rows, surface)]


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
        if tally.overflowed or distinct < ENUM_MIN_DISTINCT or distinct > ENUM_MAX_DISTINCT:
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


def _split_proposals(rows: list[Mapping[str, Any]], evidence: ProposalEvidence) -> list[Proposal]:
    bits = {row["ref"]: row["shapeEntropyBits"] for row in rows}
    overloaded = {ref for ref, value in bits.items() if value >= SPLIT_MIN_SHAPE_ENTROPY_BITS}
    if not overloaded:
        return []
    clusters = {
        ref: evidence.key_set_clusters(ref) for ref in overloaded if ref in evidence.clusters
    }
    proposals: list[Proposal] = []
    for ref in sorted(clusters, key=code_unit_key):
        if len(proposals) >= MAX_PROPOSALS_PER_KIND:
            break
        kept = [
            (keys, calls)
            for keys, calls in clusters[ref].items()
            if calls >= SPLIT_MIN_CLUSTER_CALLS
        ]
        kept.sort(key=lambda item: code_unit_key(",".join(item[0])))
        kept.sort(key=lambda item: -item[1])
        picked: list[tuple[tuple[str, ...], int]] = []
        used: set[str] = set()
        for keys, calls in kept:
            if used.isdisjoint(keys):
                picked.append((keys, calls))
                used.update(keys)
        if len(picked) >= SPLIT_MIN_CLUSTERS:
            proposals.append(
                {
                    "kind": "overload-split",
                    "ref": ref,
                    "shapeEntropyBits": bits.get(ref, 0),
                    "clusters": [
                        {"keys": list(keys), "calls": calls}
                        for keys, calls in picked[:SPLIT_MAX_CLUSTERS]
                    ],
                }
            )
    return proposals


def _contains(outer: Sequence[str], inner: Sequence[str]) -> bool:
    width = len(inner)
    return any(
        list(outer[start : start + width]) == list(inner) for start in range(len(outer) - width + 1)
    )


def _fuse_proposals(evidence: ProposalEvidence) -> list[Proposal]:
    found = evidence.sequences
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
    *,
    metric_version: int = ENTROPY_METRIC_VERSION,
) -> list[Proposal]:
    """``proposeEntropyReductions`` (spec §5; v3 with ``metric_version=3``): pure; repairs
    never propose (§5.8)."""
    check_metric_version(metric_version)
    evidence = ProposalEvidence(trace_values=value_observations is None)
    evidence.add_traces(traces)
    if value_observations is not None:
        evidence.add_observations(value_observations)
    return evidence.proposals(report, surface, metric_version=metric_version)
