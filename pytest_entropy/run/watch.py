"""The autonomous compile loop for a live session directory (spec §9; brief "The compile loop").

:class:`CompileLoop` is one compile tick (spec §9.2): window -> load artifact and pool ->
read window evidence (incrementally) -> merge the window into the pool and save -> compile
-> save when compiled -> notify. :class:`Watcher` drives it: it watches for appended session
data (inotify through ``watchfiles`` when installed, polling otherwise), waits a grace
period, coalesces triggers that arrive during a compile into one follow-up, and on shutdown
finishes the queued compile before it returns.

Notices follow the brief: a notice only when a newly saved artifact changes the effective
surface; gate rejections once per distinct set of (reason kind, ref) — the brief asks for
this and the ``watch`` command deliberately overrides the spec's silent reading (§14 #9);
review suggestions once per distinct suggestion set. No proposal-kind jargon.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_entropy.core.artifact import compiled_surface_effect_changed
from pytest_entropy.core.compiler import (
    ABSENT_REASON,
    INVALID_REASON,
    CompileOutcome,
    compile_entropy_surface,
)
from pytest_entropy.core.notices import (
    format_compile_notice,
    format_external_refs_note,
    format_review_notice,
)
from pytest_entropy.core.pool import pool_to_value_observations
from pytest_entropy.core.proposals import entropy_review_key, entropy_review_signals
from pytest_entropy.core.records import RepairRow
from pytest_entropy.core.steering import Steering, steer_entropy_surface
from pytest_entropy.core.v3.artifact import (
    compiled_surface_effect_changed as v3_effect_changed,
)
from pytest_entropy.core.v3.compiler import (
    V3CompileOutcome,
    compile_entropy_surface_v3,
    format_compile_notice_v3,
)
from pytest_entropy.core.validation import collect_external_refs
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run.corpus import CorpusRead, read_corpus, records_plan, source_files
from pytest_entropy.sources.incremental import EvidenceCache
from pytest_entropy.sources.locate import SessionFile
from pytest_entropy.state.generation import record_generation
from pytest_entropy.state.store import (
    COMPILED,
    COMPILED_V3,
    POOL,
    Snapshot,
    StoreDamagedError,
    StoreError,
    Write,
    snapshot,
    update_many,
)

__all__ = ["REVIEW_HINT", "CompileLoop", "Notice", "TickResult", "Watcher"]

REVIEW_HINT = "pytest-entropy status"
NO_FILES = "no files"
NO_TRACES = "no traces"
WAITING = (
    "entropy: waiting for sessions (none with operations yet); compiles start when one arrives"
)


@dataclass(frozen=True, slots=True)
class Notice:
    """One user-facing line, with a machine-readable kind."""

    kind: str  # compiled, review, rejected, damaged, error, unenforced, waiting
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "text": self.text}


@dataclass(slots=True)
class TickResult:
    """What one tick did (``status`` is the compile status, or why the tick stopped)."""

    status: str
    notices: list[Notice] = field(default_factory=list)
    written: bool = False
    elapsed_ms: float = 0.0
    # What the tick read (``None`` when it read nothing: no files, damaged state).
    diagnostics: ScanDiagnostics | None = None

    @property
    def empty(self) -> bool:
        """Whether the window yielded no operations (no files, or no traces in them)."""
        return self.status in (NO_FILES, NO_TRACES)


def _rejection_identity(reason: str) -> tuple[str, str]:
    """(reason kind, ref) of a gate reason; scores and counts are left out on purpose."""
    for kind in (ABSENT_REASON, INVALID_REASON):
        suffix = ": " + kind
        if reason.endswith(suffix):
            return kind, reason[: -len(suffix)]
    if reason.startswith("score increased"):
        return "score increased", ""
    if reason.startswith("successful calls dropped"):
        return "successful calls dropped", ""
    return reason, ""


def _rejection_text(reasons: Sequence[str]) -> str:
    parts = []
    for reason in reasons:
        kind, ref = _rejection_identity(reason)
        if kind == ABSENT_REASON:
            parts.append(f"hiding {ref} would break recorded calls")
        elif kind == INVALID_REASON:
            parts.append(f"tightening {ref} would reject recorded successful calls")
        else:
            parts.append(reason)
    unique = list(dict.fromkeys(parts))
    return (
        "entropy: compile refused by the safety checks · "
        + " · ".join(unique)
        + (" · the current surface stays in force")
    )


class CompileLoop:
    """One compile tick at a time over a window of session files (spec §9.2)."""

    def __init__(
        self,
        *,
        window: Callable[[], Sequence[SessionFile]],
        surface: dict[str, Any],
        state_dir: Path,
        repairs: Sequence[RepairRow] | None = None,
        options: ReadOptions | None = None,
        cache: EvidenceCache | None = None,
        clock: Callable[[], float] = time.monotonic,
        strict: bool = False,
        steering: Steering | None = None,
        redact_values: bool = False,
        metric_version: int = 2,
    ) -> None:
        if metric_version >= 3 and steering is not None:
            raise ValueError("steering chooses among metric v2's restrictions; v3 compiles none")
        self.window = window
        self.surface = surface
        self.state_dir = Path(state_dir)
        self.repairs = list(repairs) if repairs is not None else None
        self.options = options or ReadOptions(surface=surface, metric_version=metric_version)
        self.cache = cache or EvidenceCache()
        self.clock = clock
        self.strict = strict
        self.steering = steering  # opt-in: partial compiles, selection (compile --partial)
        self.redact_values = redact_values  # opt-in: the pool's values redacted
        # Metric v3: version-2 artifacts of normal forms, compiled without review signals
        # (the upstream's background compiler finishes without them).
        self.metric_version = metric_version
        self.last_review_key: str | None = None
        self.last_rejection: frozenset[tuple[str, str]] | None = None
        self.last_damage: str | None = None
        self.last_external_refs: frozenset[str] = frozenset()
        self.waiting = False

    def tick(self) -> TickResult:
        started = self.clock()
        result = self._tick(started)
        result.elapsed_ms = (self.clock() - started) * 1000
        if result.empty and not self.waiting:
            # Said once while the window stays empty; said again after it has had sessions.
            result.notices.append(Notice("waiting", WAITING))
        self.waiting = result.empty
        return result

    def _damaged(self, message: str, *, status: str = "damaged") -> TickResult:
        if message == self.last_damage:
            return TickResult(status)
        self.last_damage = message
        return TickResult(
            status,
            [Notice("damaged", f"entropy: {message} · compiles paused until it is fixed")],
        )

    def _tick(self, started: float) -> TickResult:
        files = list(self.window())
        if not files:
            return TickResult(NO_FILES)
        # Snapshots of both state files; the tick writes only if they are unchanged when it
        # commits, and otherwise merges and compiles again from what the other writer left.
        v3 = self.metric_version >= 3
        compiled_kind = COMPILED_V3 if v3 else COMPILED
        reads = [
            (self.state_dir / COMPILED.filename, compiled_kind),
            (self.state_dir / POOL.filename, POOL),
        ]
        try:
            first = [snapshot(path, kind) for path, kind in reads]
        except StoreDamagedError as error:
            return self._damaged(error.problem)
        plan = records_plan(self.options, windows=True, redact_values=self.redact_values)

        def read_into(pool: dict[str, Any] | None) -> CorpusRead:
            return read_corpus(
                source_files(item.path for item in files), plan, pool=pool, cache=self.cache
            )

        read = read_into(first[1].file)
        if self.strict and read.unreadable:  # --strict: an unreadable session pauses compiles
            where = read.unreadable[0].location
            return self._damaged(f"{where}: unreadable session file (strict)", status="unreadable")
        self.last_damage = None  # said once while it lasts; said again if it comes back
        if not read.records.traces:
            return TickResult(NO_TRACES, diagnostics=read.diagnostics)

        external: set[str] = set()
        applied: list[Any] = []  # the proposals a compile notice may call applied

        def compute(snapshots: Sequence[Snapshot]) -> tuple[tuple[Any, Any], list[Write]]:
            incumbent, pool = snapshots[0].file, snapshots[1].file
            # The windows merge into the pool as they are read, so a redo after another
            # writer's commit reads again (from the evidence cache) into the new pool.
            again = read if snapshots[1] is first[1] else read_into(pool)
            merged = again.merged_pool()
            with collect_external_refs() as found:
                inputs = (
                    again.records.traces,
                    self.surface,
                    self.repairs,
                    pool_to_value_observations(merged.file),
                    again.records.audit_calls,
                    incumbent,
                )
                outcome: CompileOutcome | V3CompileOutcome
                if v3:
                    outcome = compile_entropy_surface_v3(*inputs)
                    shown = outcome.proposals
                elif self.steering is None:
                    outcome = compile_entropy_surface(*inputs)
                    shown = outcome.proposals
                else:
                    steered = steer_entropy_surface(*inputs, steering=self.steering)
                    outcome, shown = steered.outcome, steered.shown_proposals()
            applied[:] = shown
            external.clear()  # a redo replaces what the first try met
            external.update(found)
            writes = [Write(reads[1][0], POOL, merged.file)]
            if outcome.status == "compiled" and outcome.artifact is not None:
                writes.append(Write(reads[0][0], compiled_kind, outcome.artifact))
            return (outcome, incumbent), writes

        try:
            (outcome, incumbent), saved = update_many(reads, compute, first=first)
        except StoreDamagedError as error:
            return self._damaged(error.problem)
        except StoreError as error:
            return TickResult("error", [Notice("error", f"entropy: {error}")])
        if v3:
            record_generation(self.state_dir, self.metric_version)  # the directory holds v3
        review = [] if v3 else entropy_review_signals(outcome.proposals)
        review_key = entropy_review_key(review)
        review_changed = review_key != self.last_review_key
        notices: list[Notice] = []
        if external and frozenset(external) != self.last_external_refs:
            # once per distinct set, as rejections are: a tick every few seconds repeats them
            notices.append(Notice("unenforced", format_external_refs_note(external)))
        self.last_external_refs = frozenset(external)
        written = False
        shown_compile = False
        if outcome.status == "compiled" and outcome.artifact is not None:
            written = saved[-1].written
            if v3:
                if written and v3_effect_changed(incumbent, outcome.artifact):
                    score = outcome.report.score
                    text = format_compile_notice_v3(score, score, review_hint=REVIEW_HINT)
                    notices.append(Notice("compiled", text))
                    shown_compile = True
            elif written and compiled_surface_effect_changed(incumbent, outcome.artifact):
                after = outcome.after if outcome.after is not None else outcome.report
                notices.append(
                    Notice(
                        "compiled",
                        format_compile_notice(
                            applied,
                            outcome.report.score,
                            after.score,
                            (self.clock() - started) * 1000,
                            len(review) if review_changed else 0,
                            review_hint=REVIEW_HINT,
                        ),
                    )
                )
                shown_compile = True
            self.last_rejection = None
        elif outcome.status == "rejected":
            reasons = (outcome.gate or {}).get("reasons", [])
            identity = frozenset(_rejection_identity(reason) for reason in reasons)
            if identity != self.last_rejection:
                self.last_rejection = identity
                notices.append(Notice("rejected", _rejection_text(reasons)))
        if review_changed:
            self.last_review_key = review_key
            if review and not shown_compile:
                notices.append(
                    Notice("review", format_review_notice(review, review_hint=REVIEW_HINT))
                )
        return TickResult(outcome.status, notices, written)


class Watcher:
    """Trigger, grace period, coalescing and shutdown around a :class:`CompileLoop`."""

    def __init__(
        self,
        loop: CompileLoop,
        watch_paths: Sequence[Path],
        notify: Callable[[Notice], None],
        *,
        grace_seconds: float = 0.25,
        poll_seconds: float = 0.5,
        use_inotify: bool = True,
    ) -> None:
        self.loop = loop
        self.watch_paths = [Path(p) for p in watch_paths]
        self.notify = notify
        self.grace_seconds = grace_seconds
        self.poll_seconds = poll_seconds
        self.use_inotify = use_inotify
        self._pending = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self.ticks = 0

    # ---------------------------------------------------------------------- triggers

    def trigger(self) -> None:
        """Ask for a compile; triggers that arrive during one coalesce into one follow-up."""
        self._pending.set()

    def stop(self) -> None:
        """Stop watching; a queued or running compile still finishes."""
        self._stop.set()

    def _snapshot(self) -> dict[str, tuple[int, int, int]]:
        state: dict[str, tuple[int, int, int]] = {}
        for root in self.watch_paths:
            for directory, _, names in os.walk(root):
                for name in names:
                    if name.endswith((".jsonl", ".jsonl.gz")):
                        path = os.path.join(directory, name)
                        try:
                            info = os.stat(path)
                        except OSError:
                            continue
                        state[path] = (info.st_ino, info.st_size, info.st_mtime_ns)
        return state

    def _poll(self) -> None:
        previous = self._snapshot()
        while not self._stop.wait(self.poll_seconds):
            current = self._snapshot()
            if current != previous:
                previous = current
                self.trigger()

    def _inotify(self) -> bool:
        try:
            import watchfiles
        except ImportError:
            return False
        for changes in watchfiles.watch(
            *self.watch_paths,
            stop_event=self._stop,
            debounce=50,
            rust_timeout=200,
            yield_on_timeout=False,
        ):
            if any(str(path).endswith((".jsonl", ".jsonl.gz")) for _, path in changes):
                self.trigger()
        return True

    def _watch(self) -> None:
        if not (self.use_inotify and self._inotify()):
            self._poll()

    # ------------------------------------------------------------------------ worker

    def _worker(self) -> None:
        while True:
            if not self._pending.wait(0.05):
                if self._stop.is_set():
                    return
                continue
            self._idle.clear()
            try:
                # The grace period lets the writer finish appending the turn; triggers
                # arriving meanwhile are absorbed into this same compile.
                time.sleep(self.grace_seconds)
                self._pending.clear()
                try:
                    result = self.loop.tick()
                except Exception as error:  # a tick never takes the loop down (R6)
                    self.notify(Notice("error", f"entropy: compile tick failed: {error!r}"))
                else:
                    self.ticks += 1
                    for notice in result.notices:
                        self.notify(notice)
            finally:
                self._idle.set()

    def run(self, *, initial_tick: bool = True) -> None:
        """Watch until :meth:`stop`; then finish any queued compile and return."""
        if initial_tick:
            self.trigger()
        worker = threading.Thread(target=self._worker, name="entropy-compile", daemon=True)
        watcher = threading.Thread(target=self._watch, name="entropy-watch", daemon=True)
        worker.start()
        watcher.start()
        try:
            while not self._stop.wait(0.1):
                pass
        finally:
            self._stop.set()
            watcher.join(timeout=5)
            worker.join()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until no compile is queued or running (for tests and scripts)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._idle.is_set() and not self._pending.is_set():
                return True
            time.sleep(0.02)
        return False
