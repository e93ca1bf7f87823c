"""Compile, propose and pool over many session files, on any engine.

Every command here reads its files through the corpus pipeline
(:func:`~pytest_entropy.run.corpus.read_corpus`): a worker reads one file (or a run of
consecutive files) and returns small, mergeable summaries; the client folds them in file
order and runs only the final steps. The summaries are the core accumulators, each of which
merges exactly (the merge of consecutive pieces equals one pass over them), so every engine
gives the bytes the one-pass functions (``compile_entropy_surface``, ...) give on the same
files:

* pass 1 (all commands): the meter state, the proposals' evidence (value tallies, key-set
  clusters, sequence windows), the refs that have audit calls, and one observation-window
  summary per file for the pool;
* pass 2 (compile, only when something would be applied): the replay of recorded calls
  against the candidate surface, plus the canonical JSON of observations and audit calls
  for the artifact's evidence digest (only when the score gate passed).

Memory on the client grows with distinct refs, signatures, sequences and values, never with
the number of calls. Between the two compile passes each file must stay unchanged (same
device, inode, size and modification time, or the same size and version for a URL); a file
that changed fails the compile with a message naming it, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.artifact import Artifact
from pytest_entropy.core.canonical import ArrayHasher, array_fragment, stable_json_hash
from pytest_entropy.core.compiler import (
    ABSENT_REASON,
    INVALID_REASON,
    ActionSchemas,
    CompileOutcome,
    EvidenceCounts,
    ReplayCounts,
    ReplayTally,
    compile_from_evidence,
)
from pytest_entropy.core.explain import explain_proposals
from pytest_entropy.core.plain_record import replace
from pytest_entropy.core.pool import (
    PoolMerge,
    pool_to_value_observations,
)
from pytest_entropy.core.proposals import Proposal
from pytest_entropy.core.records import (
    AuditCall,
    RepairRow,
    Report,
    ValueObservation,
    action_schemas,
)
from pytest_entropy.core.steering import (
    SteeredOutcome,
    Steering,
    proposal_gains,
    steer_from_evidence,
)
from pytest_entropy.core.v3.compiler import V3CompileOutcome, compile_from_evidence_v3
from pytest_entropy.core.validation import CallChecks
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.registry import rereadable
from pytest_entropy.run.corpus import (
    CorpusPlan,
    EngineOptions,
    ReplayHooks,
    SourceChangedError,
    SourceFile,
    read_corpus,
)
from pytest_entropy.sources.urls import is_url

# ------------------------------------------------------------------------ pass 2 (compile)


@dataclass(frozen=True, slots=True)
class CompileReplay:
    """The compile's second pass (a :class:`~pytest_entropy.run.corpus.Replay`): the
    replay against the candidate and, when the digest is needed, the canonical JSON of the
    audit calls and observations."""

    candidate: Mapping[str, Any]
    effective: Mapping[str, Any]
    touched: frozenset[str]
    audited: frozenset[str]
    audit_fragments: bool
    observation_fragments: bool
    # Compiled checks for the replay's verdicts (one per command; pickles empty for a worker).
    checks: CallChecks | None = None
    # Each file's tally reads the same two surfaces' schemas: they are looked up once.
    _schemas: tuple[ActionSchemas, ActionSchemas] = field(init=False, repr=False, compare=False)
    # The Rust core's verdicts of this replay, shared by its files (built on first use).
    _native: _NativeVerdicts = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        schemas = (
            ActionSchemas(action_schemas(self.candidate)),
            ActionSchemas(action_schemas(self.effective)),
        )
        object.__setattr__(self, "_schemas", schemas)
        object.__setattr__(self, "_native", _NativeVerdicts())

    def start(self, source: SourceFile) -> ReplayHooks:
        candidate, effective = self._schemas
        tally = ReplayTally(candidate, effective, self.touched, self.audited, self.checks)
        if self.checks is not None and not (self.audit_fragments or self.observation_fragments):
            # The replay alone: the Rust core may read the file and count for the tally.
            native = _NativeReplay(self, tally)
            return ReplayHooks(
                tally.add_trace,
                tally.add_audit,
                None,
                lambda: ReplayPart(tally.counts),
                trial=native,
            )
        audits: list[dict[str, Any]] = []
        observations: list[dict[str, Any]] = []

        def on_audit(call: AuditCall) -> None:
            tally.add_audit(call)
            if self.audit_fragments:
                audits.append(call.to_json())

        def on_value(observation: ValueObservation) -> None:
            if self.observation_fragments:
                observations.append(observation.to_json())

        def result() -> ReplayPart:
            return ReplayPart(
                tally.counts, [array_fragment(audits)], [array_fragment(observations)]
            )

        return ReplayHooks(tally.add_trace, on_audit, on_value, result)


class _NativeVerdicts:
    """The Rust core's ``TrialVerdicts.replay`` of one :class:`CompileReplay`, built on first
    use; it pickles empty (a worker builds its own)."""

    __slots__ = ("verdicts",)

    def __init__(self) -> None:
        self.verdicts: Any = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_NativeVerdicts, ())


class _NativeReplay:
    """One file's replay where the Rust core reads it (``ReplayHooks.trial``): the core
    counts with :meth:`native_verdicts` and hands the file's ``ReplayCounts`` back to
    ``counts.add_native``; lines the plain scanner reads go to the tally itself
    (:meth:`add_signed`, :meth:`add_audit`). Each check is built the first time a call needs
    it, through the replay's ``CallChecks``, and called on the plain reader's dict, so the
    core decides what :class:`~pytest_entropy.core.compiler.ReplayTally` decides."""

    __slots__ = ("_replay", "_tally")

    def __init__(self, replay: CompileReplay, tally: ReplayTally) -> None:
        self._replay = replay
        self._tally = tally

    @property
    def counts(self) -> _NativeReplay:
        return self

    def counts_natively(self) -> bool:
        return True

    def native_verdicts(self, native: Any) -> Any:
        holder = self._replay._native
        if holder.verdicts is None:
            replay = self._replay
            candidate, before = replay._schemas
            checks = replay.checks
            assert checks is not None

            def presence(ref: str) -> tuple[bool, bool]:
                return ref in candidate, ref in before

            def build(ref: str, of_before: bool) -> tuple[int, Any]:
                check = checks((before if of_before else candidate)[ref])
                return checks.parts(check)

            holder.verdicts = native.TrialVerdicts.replay(
                list(replay.touched), list(replay.audited), presence, build
            )
        return holder.verdicts

    def add_native(self, found: tuple[dict[str, int], list[list[Any]]]) -> None:
        """Fold in the core's counts of the file (reasons as codes)."""
        audit_invalid, runs = found
        reasons = (ABSENT_REASON, INVALID_REASON)
        self._tally.merge(
            ReplayCounts(audit_invalid, [[ref, reasons[code], n] for ref, code, n in runs])
        )

    def add_signed(self, signed: Sequence[Sequence[Any]], task_key: str, model: str | None) -> None:
        self._tally.add_signed(signed, task_key, model)

    def add_audit(self, call: AuditCall) -> None:
        self._tally.add_audit(call)


@dataclass(slots=True)
class ReplayPart:
    """What the second pass found in one file or a run of files: the replay counts (no
    schemas) and the digest fragments."""

    replay: ReplayCounts = field(default_factory=ReplayCounts)
    audit_fragments: list[str] = field(default_factory=list)
    observation_fragments: list[str] = field(default_factory=list)

    def merge(self, other: ReplayPart) -> ReplayPart:
        self.replay.merge(other.replay)
        self.audit_fragments.extend(other.audit_fragments)
        self.observation_fragments.extend(other.observation_fragments)
        return self


@dataclass(slots=True)
class _ReplayRoot:
    """The second pass on the client: the fragments are hashed as they arrive, not kept."""

    replay: ReplayCounts = field(default_factory=ReplayCounts)
    audits: ArrayHasher = field(default_factory=ArrayHasher)
    observations: ArrayHasher = field(default_factory=ArrayHasher)

    def merge(self, part: ReplayPart) -> _ReplayRoot:
        self.replay.merge(part.replay)
        for fragment in part.audit_fragments:
            self.audits.add_fragment(fragment)
        for fragment in part.observation_fragments:
            self.observations.add_fragment(fragment)
        return self


# ---------------------------------------------------------------------------- compile


def _mentions(refs: set[str]) -> tuple[bytes, ...] | None:
    """The quoted forms of ``refs`` a trace line must hold to matter to their replay
    (``None``: read every line, when a ref has no plain UTF-8 form)."""
    try:
        return tuple(sorted(b'"' + ref.encode("utf-8") + b'"' for ref in refs))
    except UnicodeEncodeError:
        return None


def _listed(names: Sequence[str]) -> str:
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return ", ".join(names[:3]) + more


def _changed_error(changed: Sequence[str]) -> SourceChangedError:
    """What the compile says when its second read did not find what its first read did:
    a source that can be read only once (a FIFO, a pipe) is named as such, since running
    it again would not help; the others changed meanwhile."""
    once = [name for name in changed if not is_url(name) and not rereadable(name)]
    if once:
        return SourceChangedError(
            "the compile reads the session files twice (once to measure, once to replay),"
            f" and {_listed(once)} can be read only once (a FIFO or a pipe): write it to a"
            " file and compile that; nothing was written"
        )
    return SourceChangedError(
        f"session files changed while the compile read them twice (once to measure,"
        f" once to replay): {_listed(changed)}; nothing was written, run it again"
    )


@dataclass(frozen=True, slots=True)
class CompileRun:
    """A compile over session files: the outcome, the pool merge (when a pool was given)
    and what the reads saw."""

    outcome: CompileOutcome | V3CompileOutcome
    pool: PoolMerge | None
    diagnostics: ScanDiagnostics
    steered: SteeredOutcome | None = None  # what steering left out, when it was asked for


def compile_sources(
    sources: Sequence[SourceFile],
    surface: Mapping[str, Any],
    *,
    options: ReadOptions | None = None,
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    artifact: Artifact | None = None,
    catalog_digest: str | None = None,
    pool: Mapping[str, Any] | None = None,
    use_pool: bool = False,
    engine: EngineOptions | None = None,
    steering: Steering | None = None,
    redact_values: bool = False,
    metric_version: int = 2,
) -> CompileRun:
    """``compile_entropy_surface`` over session files, read where ``engine`` says.

    Equals ``compile_entropy_surface(traces, surface, repairs, observations, audit_calls,
    artifact, catalog_digest)`` on the files' evidence, where the observations are the
    files' own, or (``use_pool``) those of ``pool`` after the files' windows merged into it.
    ``steering`` (opt-in) compiles as :func:`~pytest_entropy.core.steering.steer_from_evidence`
    does; ``redact_values`` redacts the windows merged into the pool (opt-in).
    ``metric_version=3`` compiles normal-form plans instead (:func:`compile_sources_v3`).
    """
    options = options or ReadOptions()
    engine = engine or EngineOptions()
    if metric_version >= 3:
        if steering is not None:
            raise ValueError("steering chooses among v2 restrictions; metric v3 compiles none")
        return compile_sources_v3(
            sources,
            surface,
            options=options,
            repairs=repairs,
            artifact=artifact,
            catalog_digest=catalog_digest,
            pool=pool,
            use_pool=use_pool,
            engine=engine,
            redact_values=redact_values,
        )
    plan = CorpusPlan(
        options,
        observation_values=not use_pool,
        windows=use_pool,
        stamps=True,
        redact_values=redact_values,
    )
    corpus = read_corpus(sources, plan, engine, pool=pool)
    merged = corpus.merged_pool() if use_pool else None
    pool_observations: list[ValueObservation] | None = None
    if merged is not None:
        pool_observations = pool_to_value_observations(merged.file)
        corpus.evidence.add_observations(pool_observations)
    # The replay reads only the trace lines that may mention a touched ref, and the
    # evidence's digest is read once more, only when the replay is clean too (the digest
    # then goes into the artifact); a rejected compile never serialises the evidence.

    def read_again(compile_replay: CompileReplay, mentions: tuple[bytes, ...] | None) -> Any:
        plan = CorpusPlan(
            options,
            meter=False,
            proposals=False,
            audit_refs=False,
            check_stamps=True,
            replay=compile_replay,
            mentions=mentions,
        )
        again = read_corpus(
            [replace(source, stamp=stamp) for source, stamp in corpus.readable],
            plan,
            engine,
            replayed=_ReplayRoot(),
        )
        if again.changed:
            raise _changed_error(again.changed)
        return again.replayed

    def replay(
        candidate: Mapping[str, Any],
        effective: Mapping[str, Any],
        touched: set[str],
        digest_needed: bool,
    ) -> list[dict[str, str]]:
        compile_replay = CompileReplay(
            candidate,
            effective,
            frozenset(touched),
            frozenset(corpus.audit_refs & touched),
            audit_fragments=False,
            observation_fragments=False,
            checks=CallChecks(decoded=True),
        )
        root: _ReplayRoot = read_again(compile_replay, _mentions(touched))
        tally = ReplayTally(candidate, effective, touched, compile_replay.audited)
        return tally.merge(root.replay).violations()

    def counts() -> EvidenceCounts:
        digest_replay = CompileReplay(
            {},
            {},
            frozenset(),
            frozenset(),
            audit_fragments=True,
            observation_fragments=pool_observations is None,
        )
        root = read_again(digest_replay, None)
        if pool_observations is not None:
            observations_hash = stable_json_hash([o.to_json() for o in pool_observations])
        else:
            observations_hash = root.observations.hexdigest()
        return EvidenceCounts(
            corpus.state.traces,
            len(repairs or ()),
            observations_hash,
            root.audits.hexdigest(),
        )

    if steering is not None:
        steered = steer_from_evidence(
            corpus.state,
            corpus.evidence,
            surface,
            replay=replay,
            evidence_counts=counts,
            steering=steering,
            repairs=repairs,
            artifact=artifact,
            catalog_digest=catalog_digest,
        )
        return CompileRun(steered.outcome, merged, corpus.diagnostics, steered)
    outcome = compile_from_evidence(
        corpus.state,
        corpus.evidence,
        surface,
        replay=replay,
        evidence_counts=counts,
        repairs=repairs,
        artifact=artifact,
        catalog_digest=catalog_digest,
    )
    return CompileRun(outcome, merged, corpus.diagnostics)


def compile_sources_v3(
    sources: Sequence[SourceFile],
    surface: Mapping[str, Any],
    *,
    options: ReadOptions | None = None,
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    artifact: Artifact | None = None,
    catalog_digest: str | None = None,
    pool: Mapping[str, Any] | None = None,
    use_pool: bool = False,
    engine: EngineOptions | None = None,
    redact_values: bool = False,
) -> CompileRun:
    """The metric v3 compile over session files: one read, no replay.

    Plans come from the surface alone, so the corpus is read once, for the v3 report and
    the review signals' evidence (and, with ``use_pool``, the pool's windows); nothing is
    read twice, and a file changing after its read cannot change the artifact.
    """
    # The corpus is read as metric v3 ingests it (its guard, audits and model cursor).
    plan = CorpusPlan(
        replace(options or ReadOptions(), metric_version=3),
        observation_values=not use_pool,
        windows=use_pool,
        audit_refs=False,  # audits never influence a v3 plan
        redact_values=redact_values,
    )
    corpus = read_corpus(sources, plan, engine or EngineOptions(), pool=pool)
    merged = corpus.merged_pool() if use_pool else None
    if merged is not None:
        corpus.evidence.add_observations(pool_to_value_observations(merged.file))
    outcome = compile_from_evidence_v3(
        corpus.state,
        corpus.evidence,
        surface,
        repairs=repairs,
        artifact=artifact,
        catalog_digest=catalog_digest,
    )
    return CompileRun(outcome, merged, corpus.diagnostics)


# ---------------------------------------------------------------------------- propose


@dataclass(frozen=True, slots=True)
class ProposeRun:
    """The report, the proposals and what the reads saw."""

    report: Report
    proposals: list[Proposal]
    diagnostics: ScanDiagnostics
    explanations: list[dict[str, Any]] | None = None  # with ``explain`` (opt-in)


def propose_sources(
    sources: Sequence[SourceFile],
    surface: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    catalog_digest: str | None = None,
    audit_values: bool = True,
    engine: EngineOptions | None = None,
    explain: bool = False,
) -> ProposeRun:
    """The report and ``propose_entropy_reductions`` over session files.

    ``audit_values`` takes the value corpus from the audits' observations; otherwise from
    the top-level primitive trace arguments (spec §5.2). ``explain`` adds each proposal's
    explanation (:func:`~pytest_entropy.core.explain.explain_proposals`).
    """
    plan = CorpusPlan(
        options or ReadOptions(), trace_values=not audit_values, observation_values=audit_values
    )
    corpus = read_corpus(sources, plan, engine or EngineOptions())
    version = plan.options.metric_version
    report = corpus.state.finalize(surface, repairs, catalog_digest, metric_version=version)
    proposals = corpus.evidence.proposals(report, surface, metric_version=version)
    if not explain:
        return ProposeRun(report, proposals, corpus.diagnostics)
    gains = proposal_gains(corpus.state, report, surface, proposals, repairs)
    explanations = explain_proposals(
        proposals, evidence=corpus.evidence, surface=surface, gains=gains
    )
    return ProposeRun(report, proposals, corpus.diagnostics, explanations)


# ------------------------------------------------------------------------------- pool


def pool_sources(
    sources: Sequence[SourceFile],
    pool: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    engine: EngineOptions | None = None,
    redact_values: bool = False,
) -> tuple[PoolMerge, ScanDiagnostics]:
    """``merge_observation_window`` of the files' windows into ``pool`` (``redact_values``:
    each window redacted first, opt-in)."""
    plan = CorpusPlan(
        options or ReadOptions(),
        meter=False,
        proposals=False,
        windows=True,
        redact_values=redact_values,
        audit_refs=False,  # nothing here asks which refs were audited
    )
    corpus = read_corpus(sources, plan, engine or EngineOptions(), pool=pool)
    return corpus.merged_pool(), corpus.diagnostics
