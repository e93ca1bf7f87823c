"""A compile tool authors can steer: partial compiles, selection and a minimum gain.

The reference's compile (spec §8.1) is all or nothing: one vetoed proposal sinks every
other. Everything here is opt-in (:class:`Steering`); with a default ``Steering`` the
outcome is the reference's, and without one the compiler never comes here.

* ``only`` / ``exclude``: tokens naming a proposal kind, a ref, or ``ref.key`` of an
  ``enum-tighten``; a proposal ``only`` does not name, or ``exclude`` names, is skipped.
* ``min_gain``: an auto proposal whose own gain (the score with that proposal alone
  applied, subtracted from the score before) is below it is skipped.
* ``partial``: when replay or the score gate vetoes proposals, exactly those are dropped
  and the rest gated again, until a set passes or none is left. Each round is the
  reference's gate over the remaining set, so whatever passes keeps every promise of the
  reference: the score never rises and no recorded successful (or executed audited) call
  stops validating.

If every auto proposal is skipped, the compile has converged (nothing left to apply).
Skipped and dropped proposals never enter the artifact; the artifact keeps the
reference's format, so a partial artifact loads anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.artifact import Artifact, apply_compiled_surface
from pytest_entropy.core.compile_digests import CompileDigests, compile_digests
from pytest_entropy.core.compiler import (
    ABSENT_REASON,
    CompileOutcome,
    DigestCounts,
    Replay,
    _new_artifact,
    compile_inputs,
)
from pytest_entropy.core.explain import explain_proposals
from pytest_entropy.core.gate import evaluate_gate
from pytest_entropy.core.jscompat import js_string, round_metric
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.proposals import AUTO_APPLY_PROPOSAL_KINDS, Proposal, ProposalEvidence
from pytest_entropy.core.records import (
    AuditCall,
    RepairRow,
    Report,
    Trace,
    ValueObservation,
)

__all__ = [
    "SteeredOutcome",
    "Steering",
    "proposal_gains",
    "proposal_label",
    "proposal_matches",
    "steer_entropy_surface",
    "steer_from_evidence",
    "unmatched_tokens",
]


@dataclass(frozen=True, slots=True)
class Steering:
    """What the tool author asked of a compile (each field off by default)."""

    partial: bool = False
    only: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    min_gain: float | None = None
    explain: bool = False

    @property
    def selects(self) -> bool:
        """Whether proposals may be skipped (``only``, ``exclude`` or ``min_gain``)."""
        return bool(self.only or self.exclude) or self.min_gain is not None


def proposal_label(proposal: Mapping[str, Any]) -> str:
    """``ref.key`` for a proposal on one parameter, ``ref`` for one on a tool, the
    sequence joined by ``->`` for a fusion."""
    if "sequence" in proposal:
        return " -> ".join(proposal["sequence"])
    if "key" in proposal:
        return f"{proposal['ref']}.{proposal['key']}"
    return str(proposal.get("ref"))


def proposal_matches(token: str, proposal: Mapping[str, Any]) -> bool:
    """Whether ``token`` names the proposal: its kind, its ref, or ``ref.key``."""
    if token == proposal.get("kind") or token == proposal.get("ref"):
        return True
    return "key" in proposal and token == f"{proposal['ref']}.{proposal['key']}"


def unmatched_tokens(steering: Steering | None, proposals: Sequence[Proposal]) -> list[str]:
    """One warning per ``--only`` / ``--exclude`` token that names none of ``proposals``
    (a misspelt ref or a kind this corpus does not propose), in the order given.

    >>> unmatched_tokens(Steering(only=("mcp.x",)), [{"kind": "enum-tighten", "ref": "mcp.y"}])
    ['--only mcp.x matches no proposal of this compile']
    """
    if steering is None:
        return []
    out = []
    for flag, tokens in (("--only", steering.only), ("--exclude", steering.exclude)):
        for token in dict.fromkeys(tokens):
            if not any(proposal_matches(token, proposal) for proposal in proposals):
                out.append(f"{flag} {token} matches no proposal of this compile")
    return out


def _entry(proposal: Mapping[str, Any], reason: str, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": proposal["kind"], "ref": proposal["ref"]}
    if "key" in proposal:
        out["key"] = proposal["key"]
    out["reason"] = reason
    out.update(more)
    return out


@dataclass(frozen=True, slots=True)
class SteeredOutcome:
    """The reference's outcome of the applied set, plus what steering left out.

    ``dropped``: ``[{kind, ref, key?, reason}]`` vetoed by replay or the gate (partial);
    ``skipped``: ``[{kind, ref, key?, reason, gain?}]`` left out by ``only``, ``exclude``
    or ``min_gain``; ``gains``: each auto proposal's own gain by its index in
    ``outcome.proposals`` (measured when ``min_gain`` or ``explain`` asks for it);
    ``applied``: the indexes of the proposals in the artifact.
    """

    outcome: CompileOutcome
    steering: Steering
    dropped: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    gains: dict[int, float] = field(default_factory=dict)
    applied: tuple[int, ...] = ()
    explanations: list[dict[str, Any]] | None = None

    def shown_proposals(self) -> list[Proposal]:
        """The proposals with every auto proposal left out of the artifact removed (what a
        compile notice may call tightened)."""
        return [
            p
            for i, p in enumerate(self.outcome.proposals)
            if i in self.applied or p["kind"] not in AUTO_APPLY_PROPOSAL_KINDS
        ]

    def to_json(self) -> dict[str, Any]:
        """The outcome's JSON, with ``dropped`` (partial), ``skipped`` (selection) and
        ``explanations`` (explain) added."""
        out = self.outcome.to_json()
        if self.steering.partial:
            out["dropped"] = self.dropped
        if self.steering.selects:
            out["skipped"] = self.skipped
        if self.explanations is not None:
            out["explanations"] = self.explanations
        return out


def _identity(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    return (entry["kind"], entry.get("ref"), entry.get("key"))


def _statuses(
    auto: list[tuple[int, Proposal]],
    status: str,
    applied: tuple[int, ...],
    dropped: list[dict[str, Any]],
    skipped: list[dict[str, Any]],
) -> dict[int, str]:
    """What the compile did with each auto proposal, for the explanations."""
    left_out = {_identity(e): f"dropped: {e['reason']}" for e in dropped}
    left_out.update({_identity(e): f"skipped: {e['reason']}" for e in skipped})
    out = {}
    for index, proposal in auto:
        if index in applied:
            out[index] = "applied"
        else:
            out[index] = left_out.get(_identity(proposal), f"not applied: the compile {status}")
    return out


class _Gains:
    """Each auto proposal's own gain, measured once, on demand."""

    def __init__(
        self,
        state: MeterState,
        report: Report,
        effective: Mapping[str, Any],
        repairs: Sequence[RepairRow | Mapping[str, Any]] | None,
        digests: CompileDigests,
    ) -> None:
        self._state, self._report = state, report
        self._effective, self._repairs = effective, repairs
        self.digests = digests
        self.measured: dict[int, float] = {}
        self.alone: dict[int, Report] = {}

    def of(self, index: int, proposal: Proposal) -> float:
        if index not in self.measured:
            digests = self.digests
            candidate = digests.apply(self._effective, [proposal])
            after = self._state.finalize(candidate, self._repairs, digests.surface_hash(candidate))
            self.alone[index] = after
            self.measured[index] = round_metric(self._report.score - after.score)
        return self.measured[index]


def _select(
    auto: list[tuple[int, Proposal]], steering: Steering, gains: _Gains
) -> tuple[list[tuple[int, Proposal]], list[dict[str, Any]]]:
    chosen: list[tuple[int, Proposal]] = []
    skipped: list[dict[str, Any]] = []
    for index, proposal in auto:
        if steering.only and not any(proposal_matches(t, proposal) for t in steering.only):
            skipped.append(_entry(proposal, "not named by --only"))
            continue
        excluded = next((t for t in steering.exclude if proposal_matches(t, proposal)), None)
        if excluded is not None:
            skipped.append(_entry(proposal, f"excluded by --exclude {excluded}"))
            continue
        if steering.min_gain is not None:
            gain = gains.of(index, proposal)
            if gain < steering.min_gain:
                skipped.append(
                    _entry(
                        proposal,
                        f"gain {js_string(gain)} below --min-gain {js_string(steering.min_gain)}",
                        gain=gain,
                    )
                )
                continue
        chosen.append((index, proposal))
    return chosen, skipped


def _gate(report: Report, after: Report, violations: list[dict[str, str]]) -> dict[str, Any]:
    """The reference's gate record (spec §8.1 step 9)."""
    score_gate = evaluate_gate(report, after)
    passed = score_gate["passed"] and not violations
    return {
        "passed": passed,
        "beforeScore": report.score,
        "afterScore": after.score,
        "delta": score_gate["delta"],
        "reasons": []
        if passed
        else [*score_gate["reasons"], *(f"{v['ref']}: {v['reason']}" for v in violations)],
    }


def _violation_counts(violations: list[dict[str, str]]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for violation in violations:
        key = (violation["ref"], violation["reason"])
        counts[key] = counts.get(key, 0) + 1
    return counts


def _reason(ref: str, reason: str, calls: int) -> str:
    return f"{ref}: {reason}" + (f" ({calls} calls)" if calls > 1 else "")


class _Blame:
    """Which proposals of a vetoed round to drop (exactly the vetoed ones)."""

    def __init__(
        self,
        effective: Mapping[str, Any],
        replay: Replay,
        gains: _Gains,
        report: Report,
    ) -> None:
        self._effective, self._replay = effective, replay
        self._gains, self._report = gains, report

    def replay_vetoes(
        self, current: list[tuple[int, Proposal]], violations: list[dict[str, str]]
    ) -> dict[int, str]:
        vetoed: dict[int, str] = {}
        ambiguous: dict[str, list[tuple[int, Proposal]]] = {}
        for (ref, reason), calls in _violation_counts(violations).items():
            on_ref = [(i, p) for i, p in current if p["ref"] == ref]
            if reason == ABSENT_REASON:
                culprits = [(i, p) for i, p in on_ref if p["kind"] == "noise-quarantine"]
            else:
                culprits = [(i, p) for i, p in on_ref if p["kind"] == "enum-tighten"]
            if len(culprits) == 1 or (culprits and reason == ABSENT_REASON):
                for index, _ in culprits:
                    vetoed[index] = _reason(ref, reason, calls)
            elif culprits:
                ambiguous[ref] = culprits
            else:  # nothing of that kind on the ref: everything on it is to blame
                for index, _ in on_ref:
                    vetoed[index] = _reason(ref, reason, calls)
        vetoed.update(self._probe(ambiguous))
        return vetoed

    def _probe(self, ambiguous: dict[str, list[tuple[int, Proposal]]]) -> dict[int, str]:
        """Several tightenings of one ref under a veto: replay them one at a time (the
        j-th of every such ref together), blaming each that breaks a call on its own."""
        vetoed: dict[int, str] = {}
        rounds = max((len(items) for items in ambiguous.values()), default=0)
        for position in range(rounds):
            probe = [items[position] for items in ambiguous.values() if position < len(items)]
            digests = self._gains.digests
            candidate = digests.apply(self._effective, [p for _, p in probe])
            digests.surface_hash(candidate)  # the candidate's schemas written before touched()
            found = self._replay(
                candidate, self._effective, digests.touched(candidate, self._effective), False
            )
            counts = _violation_counts(found)
            for index, proposal in probe:
                broken = [(r, why, n) for (r, why), n in counts.items() if r == proposal["ref"]]
                for ref, reason, calls in broken:
                    vetoed[index] = _reason(ref, reason, calls)
        if not vetoed:  # only together do they break a call: every one of them is vetoed
            for ref, items in ambiguous.items():
                for index, _ in items:
                    vetoed[index] = f"{ref}: together with the other tightenings of {ref}"
        return vetoed

    def score_vetoes(
        self, current: list[tuple[int, Proposal]], gate: dict[str, Any]
    ) -> dict[int, str]:
        """Proposals whose own application fails the score gate; failing none alone, the
        one of least gain (the latest of equals)."""
        vetoed: dict[int, str] = {}
        for index, proposal in current:
            self._gains.of(index, proposal)
            alone = evaluate_gate(self._report, self._gains.alone[index])
            if not alone["passed"]:
                vetoed[index] = "; ".join(alone["reasons"])
        if vetoed:
            return vetoed
        worst = min(current, key=lambda item: (self._gains.of(*item), -item[0]))
        return {worst[0]: "; ".join(gate["reasons"][:1]) + " (the proposal of least gain)"}


def steer_from_evidence(
    state: MeterState,
    evidence: ProposalEvidence,
    surface: Mapping[str, Any],
    *,
    replay: Replay,
    evidence_counts: Callable[[], DigestCounts],
    steering: Steering,
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    artifact: Artifact | None = None,
    catalog_digest: str | None = None,
) -> SteeredOutcome:
    """:func:`~pytest_entropy.core.compiler.compile_from_evidence` as ``steering`` asks.

    ``replay`` and ``evidence_counts`` are the compiler's; ``replay`` may be called once
    per round (and once per probe when one ref's several tightenings are vetoed), and
    ``evidence_counts`` right after the replay of the round that passes.
    """
    digests = compile_digests()  # as compile_from_evidence: each schema written once
    effective = apply_compiled_surface(surface, artifact)
    before_digest = (
        catalog_digest if catalog_digest is not None else digests.surface_hash(effective)
    )
    report = state.finalize(effective, repairs, before_digest)
    proposals = evidence.proposals(report, effective)
    auto = [(i, p) for i, p in enumerate(proposals) if p["kind"] in AUTO_APPLY_PROPOSAL_KINDS]
    gains = _Gains(state, report, effective, repairs, digests)
    current, skipped = _select(auto, steering, gains)

    def done(
        outcome: CompileOutcome, dropped: list[dict[str, Any]], indexes: Iterable[int]
    ) -> SteeredOutcome:
        applied = tuple(indexes)
        explanations = None
        if steering.explain:
            for index, proposal in auto:
                gains.of(index, proposal)
            explanations = explain_proposals(
                proposals,
                evidence=evidence,
                surface=effective,
                gains=gains.measured,
                statuses=_statuses(auto, outcome.status, applied, dropped, skipped),
            )
        return SteeredOutcome(
            outcome, steering, dropped, skipped, dict(gains.measured), applied, explanations
        )

    if not current:
        return done(CompileOutcome("converged", report, proposals, artifact=artifact), [], ())
    blame = _Blame(effective, replay, gains, report)
    dropped: list[dict[str, Any]] = []
    first: tuple[Report, dict[str, Any]] | None = None
    while current:
        chosen = [p for _, p in current]
        candidate = digests.apply(effective, chosen)
        after = state.finalize(candidate, repairs, digests.surface_hash(candidate))
        score_passed = evaluate_gate(report, after)["passed"]
        touched = digests.touched(candidate, effective)
        violations = replay(candidate, effective, touched, score_passed)
        gate = _gate(report, after, violations)
        if gate["passed"]:
            counts = evidence_counts()
            new_artifact = _new_artifact(
                surface, effective, candidate, chosen, artifact, report, after, counts, digests
            )
            outcome = CompileOutcome(
                "compiled", report, proposals, artifact=new_artifact, after=after, gate=gate
            )
            return done(outcome, dropped, (i for i, _ in current))
        if first is None:
            first = (after, gate)
        if not steering.partial:
            break
        vetoed = blame.replay_vetoes(current, violations) if violations else {}
        if not score_passed and not vetoed:
            vetoed = blame.score_vetoes(current, gate)
        if not vetoed:  # cannot happen with the reference's gate; never loop forever
            vetoed = {i: "; ".join(gate["reasons"]) for i, _ in current}
        dropped.extend(_entry(p, vetoed[i]) for i, p in current if i in vetoed)
        current = [(i, p) for i, p in current if i not in vetoed]
    if first is None:  # unreachable: a round that does not pass records its gate first
        raise RuntimeError("the steered compile ran no round")
    after, gate = first
    outcome = CompileOutcome(
        "rejected", report, proposals, artifact=artifact, after=after, gate=gate
    )
    return done(outcome, dropped, ())


def steer_entropy_surface(
    traces: Iterable[Trace | Mapping[str, Any]],
    surface: Mapping[str, Any],
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    value_observations: Iterable[ValueObservation | Mapping[str, Any]] | None = None,
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
    artifact: Artifact | None = None,
    catalog_digest: str | None = None,
    *,
    steering: Steering,
) -> SteeredOutcome:
    """``compile_entropy_surface`` of in-memory records, as ``steering`` asks."""
    inputs = compile_inputs(traces, repairs, value_observations, audit_calls)
    return steer_from_evidence(
        inputs.state,
        inputs.evidence,
        surface,
        replay=inputs.replay,
        evidence_counts=inputs.evidence_counts,
        steering=steering,
        repairs=inputs.repairs,
        artifact=artifact,
        catalog_digest=catalog_digest,
    )


def proposal_gains(
    state: MeterState,
    report: Report,
    surface: Mapping[str, Any] | None,
    proposals: Sequence[Proposal],
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
) -> dict[int, float]:
    """Each auto proposal's own gain by its index (none without a surface to apply it to)."""
    if surface is None:
        return {}
    gains = _Gains(state, report, surface, repairs, compile_digests())
    for index, proposal in enumerate(proposals):
        if proposal["kind"] in AUTO_APPLY_PROPOSAL_KINDS:
            gains.of(index, proposal)
    return gains.measured
