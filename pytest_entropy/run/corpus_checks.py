"""The certification's checks on the user's own corpus (scope ``corpus``).

Beside the reference's certification (which proves the installed meter exact on the spec's
fixed corpora), these look at *the user's* sessions and surface: were all the files read
and recognised (``corpus-health``), do two reads agree (``corpus-deterministic``), does the
ratchet hold on their window (``ratchet-holding``), does a compile on their corpus reach a
fixed point without raising the score (``compile-converges``), and does a compile on the
older sessions cost anything on the newest (``held-out-trial``). Each failure carries a
plain reason; see ``docs/certification.md``.

Reads go through the one corpus pipeline (:mod:`pytest_entropy.run.corpus`), strictly by
default: a damaged, unreadable or unrecognised file fails ``corpus-health`` unless the
user says ``lenient``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from pytest_entropy.core.certify.fixtures import CheckResult
from pytest_entropy.core.certify.scopes import CORPUS_CHECK_ORDER, ScopedResult
from pytest_entropy.core.errors import EntropyError
from pytest_entropy.core.jscompat import code_unit_key, js_string
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.ingest.base import SKIPPED_SPECIAL
from pytest_entropy.sources.urls import is_url

__all__ = ["DEFAULT_HOLDOUT", "CorpusCheckSettings", "CorpusChecks", "planned_corpus_checks"]

DEFAULT_HOLDOUT: Final = 0.25
_SHOWN: Final = 5


@dataclass(frozen=True, slots=True)
class CorpusCheckSettings:
    """What the corpus checks read and how strictly."""

    sessions: str
    surface: dict[str, Any] | None = None
    surface_path: str | None = None
    repairs: list[Any] | None = None
    repairs_path: str | None = None
    session_format: str = "auto"
    storage_options: Any = field(default=None, repr=False)
    lenient: bool = False
    require_ratchet: bool = False
    holdout: float = DEFAULT_HOLDOUT
    max_malformed_share: float = 0.0
    baseline: str | None = None


def planned_corpus_checks(
    sessions: str | None, surface: str | None, baseline: str | None = None
) -> tuple[str, ...]:
    """The corpus checks a run with these inputs reports, in order (``surface-contained``
    only when the ratchet baseline file exists)."""
    if sessions is None or not (is_url(sessions) or Path(sessions).is_dir()):
        # No corpus (corpus-mode fails naming the path): nothing to check, nothing passes.
        return ()
    with_surface = ("compile-converges", "held-out-trial")
    planned = [
        check_id
        for check_id in CORPUS_CHECK_ORDER
        if check_id != SURFACE_CONTAINED and (surface is not None or check_id not in with_surface)
    ]
    if surface is not None and baseline is not None and _tracks_a_surface(baseline):
        planned.append(SURFACE_CONTAINED)
    return tuple(planned)


def _tracks_a_surface(path: str) -> bool:
    """Whether the baseline file exists and may hold a surface entry (a damaged file does:
    the check then says what is wrong with it; a file of corpus entries only does not)."""
    if not Path(path).is_file():
        return False
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
        entries = value["entries"].values()
        return any(isinstance(entry, dict) and entry.get("kind") == "surface" for entry in entries)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return True


SURFACE_CONTAINED: Final = "surface-contained"
_BASELINE_KIND: Final = "pytest-entropy.baseline"


def baseline_surface(path: str) -> tuple[dict[str, Any], list[Any], str]:
    """``(snapshot, accepted loosenings, entry name)`` of the ratchet baseline's surface
    entry (``surface``, else the file's only surface entry); ValueError saying why not.
    Read here, never written: certification does not move a baseline."""
    from pytest_entropy.core.surface_diff import accepted_from_value

    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"the ratchet baseline {path} is unreadable ({error})") from None
    entries = value.get("entries") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or value.get("kind") != _BASELINE_KIND
        or not isinstance(entries, dict)
    ):
        raise ValueError(f"{path} is not a {_BASELINE_KIND} file")
    surfaces = {
        name: entry
        for name, entry in entries.items()
        if isinstance(entry, dict) and entry.get("kind") == "surface"
    }
    name = (
        "surface"
        if "surface" in surfaces
        else (next(iter(surfaces)) if len(surfaces) == 1 else None)
    )
    if name is None:
        raise ValueError(f"{path} holds {len(surfaces)} surface entries and none named 'surface'")
    schemas = surfaces[name].get("schemas")
    if not isinstance(schemas, dict):
        raise ValueError(f"the entry {name!r} of {path} holds no schemas to compare with")
    snapshot = {
        "version": 1,
        "actions": [{"ref": ref, "inputSchema": schema} for ref, schema in schemas.items()],
    }
    accepted = accepted_from_value(surfaces[name].get("accepted"), source=path)
    return snapshot, list(accepted), name


def _shown(names: Sequence[str], total: int | None = None) -> str:
    total = len(names) if total is None else total
    text = ", ".join(names[:_SHOWN])
    return text + (f" and {total - _SHOWN} more" if total > _SHOWN else "")


def _other_entries(directory: str) -> list[str]:
    """What a local directory holds besides session files (it had none), by name."""
    if is_url(directory):
        return []
    try:
        return sorted((entry.name for entry in os.scandir(directory)), key=code_unit_key)
    except OSError:
        return []


def _first_timestamp(location: str) -> str:
    """The ``timestamp`` of a file's first record ("" when it has none or is remote)."""
    if is_url(location) or not os.path.isfile(location):
        return ""  # never open a FIFO or a device: it may never answer
    try:
        with open(location, "rb") as handle:
            for raw in handle:
                if raw.strip():
                    value = json.loads(raw)
                    stamp = value.get("timestamp") if isinstance(value, dict) else None
                    return stamp if isinstance(stamp, str) else ""
    except (OSError, ValueError):
        return ""
    return ""


class CorpusChecks:
    """The corpus checks of one run, computed on demand, each at most once."""

    def __init__(self, settings: CorpusCheckSettings) -> None:
        self.settings = settings

    # ---- reads

    def _options(self) -> Any:
        from pytest_entropy.ingest.base import ReadOptions

        return ReadOptions(
            session_format=self.settings.session_format,
            surface=self.settings.surface,
            storage_options=self.settings.storage_options,
        )

    @cached_property
    def listing(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The session files (oldest first: first record's timestamp, then name) and what
        the directory walk passed over."""
        settings = self.settings
        if is_url(settings.sessions):
            from pytest_entropy.sources.urls import expand_url

            files = list(expand_url(settings.sessions, settings.storage_options))
            skipped: list[tuple[str, str]] = []
        else:
            from pytest_entropy.sources.locate import session_listing

            exclude = [p for p in (settings.surface_path, settings.repairs_path) if p]
            found = session_listing([settings.sessions], self._options(), exclude)
            files, skipped = list(found.files), list(found.skipped)
        files.sort(key=lambda name: (_first_timestamp(name), code_unit_key(name)))
        return files, skipped

    def _read(self, files: Sequence[str], **plan: Any) -> Any:
        from pytest_entropy.run.corpus import read_corpus, records_plan, source_files

        skipped = self.listing[1] if plan.pop("with_skipped", False) else []
        return read_corpus(source_files(files, skipped), records_plan(self._options(), **plan))

    @cached_property
    def _full(self) -> Any:
        return self._read(self.listing[0], with_skipped=True, continuous=True)

    @cached_property
    def _per_file(self) -> Any:
        return self._read(self.listing[0], file_states=True)

    @cached_property
    def _full_report(self) -> Any:
        """The report of the whole corpus (``corpus-health`` reads its refs,
        ``corpus-deterministic`` hashes it): measured once."""
        return self._report(self._full.records)

    def _report(self, records: Any) -> Any:
        from pytest_entropy.core.status import surface_hash

        surface = self.settings.surface
        catalog = surface_hash(surface) if surface is not None else "(sessions)"
        return measure(records.traces, surface, self.settings.repairs, catalog)

    # ---- the checks

    def run(self, check_id: str) -> ScopedResult:
        runner = {
            "corpus-health": self._health,
            "corpus-deterministic": self._deterministic,
            "ratchet-holding": self._ratchet,
            "compile-converges": self._converges,
            "held-out-trial": self._held_out,
            SURFACE_CONTAINED: self._contained,
        }.get(check_id)
        if runner is None:
            raise EntropyError(f"unknown corpus check {check_id!r}")
        try:
            return runner()
        except (EntropyError, OSError, ValueError) as error:
            text = f"{type(error).__name__}: {error}" if not str(error) else str(error)
            return ScopedResult(
                CheckResult(check_id, False, text), f"the check could not run: {text}"
            )

    def _health(self) -> ScopedResult:
        read = self._full
        d = read.diagnostics
        lines = d.lines - d.empty_lines
        share = d.malformed_lines / lines if lines else 0.0
        operations = len(read.records.traces)
        evidence = (
            f"files {d.files} · unreadable {d.unreadable_files} · unrecognised"
            f" {d.unrecognized_files} · malformed lines {d.malformed_lines} of {lines}"
            f" · traces {operations}"
        )
        reasons = []
        # A FIFO or dangling link the walk counted as unreadable is named below with why.
        special = self._specials()
        unreadable = [name for name in d.unreadable_names if os.path.abspath(name) not in special]
        if d.unreadable_files > len(special):
            reasons.append(f"unreadable: {_shown(unreadable, d.unreadable_files - len(special))}")
        passed_over = self._passed_over()
        if passed_over:
            reasons.append(f"not a readable session file: {_shown(passed_over)}")
        if d.unrecognized_files:
            reasons.append(
                f"of no known session format: {_shown(d.unrecognized_names, d.unrecognized_files)}"
            )
        if d.malformed_lines and share > self.settings.max_malformed_share:
            limit = js_string(self.settings.max_malformed_share)
            reasons.append(
                f"damaged (malformed lines, share {js_string(round(share, 6))} above {limit}):"
                f" {_shown(d.damaged_names)}"
            )
        if not d.files:
            others = _other_entries(self.settings.sessions)
            aside = f" (passed over: {_shown(others)})" if others else ""
            reasons.append(f"no session file found in {self.settings.sessions}{aside}")
        elif not operations:
            reasons.append("the files hold no tool call at all")
        mismatch = self._surface_mismatch() if operations else []
        reasons.extend(mismatch)
        passed = not reasons
        result = CheckResult("corpus-health", passed, evidence, tuple(reasons))
        if passed:
            return ScopedResult(result)
        reason = "; ".join(reasons)
        # Lenience forgives damaged files, not a surface the sessions never called.
        lenient = self.settings.lenient and not mismatch
        if lenient:
            reason += " (--entropy-lenient: reported, not gating)"
        return ScopedResult(result, reason, gating=not lenient)

    def _surface_mismatch(self) -> list[str]:
        """Why the surface cannot be the one these sessions called, if it cannot: it declares
        no tool, or none of the tools the sessions call (nothing passes on nothing: the
        meter then scores every call against no schema). A surface declaring some of the
        called tools passes: a corpus may record tools the surface leaves out."""
        surface = self.settings.surface
        if surface is None:
            return []
        name = self.settings.surface_path or "the surface"
        declared = {
            action.get("ref")
            for action in surface.get("actions") or ()
            if isinstance(action, dict) and isinstance(action.get("ref"), str)
        }
        if not declared:
            return [f"{name} declares no tool"]
        called = sorted({row.ref for row in self._full_report.refs}, key=code_unit_key)
        if called and not declared.intersection(called):
            return [
                f"none of the {len(called)} tools the sessions call is declared in {name}"
                f" (called: {_shown(called)})"
            ]
        return []

    def _specials(self) -> set[str]:
        """The listing's session-named entries that are no regular file (absolute paths)."""
        return {os.path.abspath(name) for name, why in self.listing[1] if why == SKIPPED_SPECIAL}

    def _passed_over(self) -> list[str]:
        """Entries of a local sessions directory named like session files that the listing
        could not take: a directory, a broken link, a FIFO or a device (``name (why)``)."""
        directory = self.settings.sessions
        if is_url(directory) or not os.path.isdir(directory):
            return []
        listed = {os.path.abspath(name) for name in self.listing[0]}
        listed |= {os.path.abspath(name) for name, _ in self.listing[1]}
        listed -= self._specials()
        found = []
        for name in _other_entries(directory):
            path = os.path.join(directory, name)
            if not name.endswith((".jsonl", ".jsonl.gz")) or os.path.abspath(path) in listed:
                continue
            if os.path.islink(path) and not os.path.exists(path):
                why = "a broken link"
            elif os.path.isdir(path):
                why = "a directory"
            elif not os.path.isfile(path):
                why = "not a regular file"
            else:
                continue
            found.append(f"{path} ({why})")
        return found

    def _deterministic(self) -> ScopedResult:
        if not self._full.records.traces:
            # Nothing passes on nothing: two empty reads agree, and that proves nothing.
            return ScopedResult(
                CheckResult("corpus-deterministic", False, "no tool call to measure"),
                "nothing to compare: the corpus holds no tool call (see corpus-health)",
                gating=False,
            )
        first = report_hash(self._full_report)
        again = self._read(self.listing[0], continuous=True)
        second = report_hash(self._report(again.records))
        if first == second:
            return ScopedResult(CheckResult("corpus-deterministic", True, f"hash {first} twice"))
        evidence = f"hashes {first} vs {second}"
        return ScopedResult(
            CheckResult("corpus-deterministic", False, evidence),
            "two reads of the same files gave different reports: a file changed while it was"
            " read, or the reading is not deterministic",
        )

    def _ratchet(self) -> ScopedResult:
        from pytest_entropy.core.status import (
            RATCHET_HOLDING,
            measure_session_corpus,
            ratchet_verdict,
            surface_hash,
        )

        states = [(source.location, state) for source, state in self._per_file.files]
        surface = self.settings.surface
        digest = surface_hash(surface) if surface is not None else "(sessions)"
        corpus = measure_session_corpus(
            list(reversed(states)), surface, digest, self.settings.repairs
        )
        verdict = ratchet_verdict(corpus)
        latest = corpus.latest
        per1k = latest.totals.invocation_rejections_per_1k if latest is not None else None
        models = ", ".join(
            f"{model.model} {js_string(model.slope_per_session)}" for model in corpus.models
        )
        evidence = (
            f"{verdict} · {len(corpus.sessions)} sessions · slope"
            f" {js_string(corpus.trend['slopePerStep'])} per session · latest rejections/1k"
            f" {'-' if per1k is None else js_string(per1k)}"
            + (f" · per model: {models}" if models else "")
        )
        passed = verdict == RATCHET_HOLDING
        result = CheckResult("ratchet-holding", passed, evidence)
        if passed:
            return ScopedResult(result)
        if latest is None:
            reason = "no session with operations to judge the ratchet on"
        elif per1k:
            reason = f"the latest session still has invocation rejections ({js_string(per1k)}/1k)"
        else:
            reason = "the score rises from session to session (slope above 0)"
        if not self.settings.require_ratchet:
            reason += (
                " (reported; --require-ratchet, in pytest --entropy-require-ratchet, gates it)"
            )
        return ScopedResult(result, reason, gating=self.settings.require_ratchet)

    def _compile(self, records: Any, artifact: Any = None) -> Any:
        from pytest_entropy.core.compiler import compile_entropy_surface

        if self.settings.surface is None:  # pragma: no cover - planned only with a surface
            raise EntropyError("compile-converges needs --surface")
        return compile_entropy_surface(
            records.traces,
            self.settings.surface,
            self.settings.repairs,
            records.value_observations,
            records.audit_calls,
            artifact,
        )

    def _converges(self) -> ScopedResult:
        records = self._full.records
        first = self._compile(records)
        before = first.report.score
        after = first.after.score if first.after is not None else before
        artifact = first.artifact if first.status == "compiled" else None
        second = self._compile(records, artifact)
        evidence = (
            f"round 1 {first.status} ({len(first.proposals)} proposals) · round 2"
            f" {second.status} ({len(second.proposals)} proposals) · score"
            f" {js_string(before)} → {js_string(after)}"
        )
        reasons = []
        if second.status == "compiled":
            reasons.append("a second compile round still adopted proposals: no fixed point")
        if after > before:
            reasons.append(
                f"the compile raised the score ({js_string(before)} → {js_string(after)})"
            )
        result = CheckResult("compile-converges", not reasons, evidence)
        return ScopedResult(result, "; ".join(reasons) or None)

    def _held_out(self) -> ScopedResult:
        from pytest_entropy.core.trial import run_entropy_trial

        files = self.listing[0]
        held = min(len(files) - 1, max(1, math.ceil(len(files) * self.settings.holdout)))
        if held < 1:
            evidence = f"no-evidence: {len(files)} session file(s), nothing to hold out"
            return ScopedResult(
                CheckResult("held-out-trial", False, evidence),
                "no-evidence: the split needs at least two session files",
                gating=False,
            )
        older, newest = files[:-held], files[-held:]
        compiled = self._compile(self._read(older, continuous=True).records)
        artifact = compiled.artifact if compiled.status == "compiled" else None
        replay = self._read(newest, continuous=True).records
        if self.settings.surface is None:  # pragma: no cover - planned only with a surface
            raise EntropyError("held-out-trial needs --surface")
        trial = run_entropy_trial(
            replay.traces, self.settings.surface, artifact, replay.audit_calls
        )
        costs = trial.totals["tighteningCost"] + trial.totals["quarantineCost"]
        evidence = (
            f"{trial.verdict}: compiled on {len(older)} older file(s), replayed the {held}"
            f" newest · {trial.totals['tighteningCost']} tightening costs · compile"
            f" {compiled.status}"
        )
        if trial.verdict == "no-evidence":
            return ScopedResult(
                CheckResult("held-out-trial", False, evidence),
                "no-evidence: the held-out sessions gave the compiled surface nothing to decide",
                gating=False,
            )
        passed = trial.verdict != "costly"
        reason = None if passed else f"{costs} held-out successful calls the compile would reject"
        return ScopedResult(CheckResult("held-out-trial", passed, evidence), reason)

    def _contained(self) -> ScopedResult:
        from pytest_entropy.core.surface_diff import diff_snapshots

        path, surface = self.settings.baseline, self.settings.surface
        if path is None or surface is None:  # pragma: no cover - planned only with both
            raise EntropyError("surface-contained needs --surface and a ratchet baseline")
        before, accepted, name = baseline_surface(path)
        diff = diff_snapshots(before, surface, accepted=accepted)
        evidence = (
            f"against {name!r} in {path}: {len(diff.loosened)} loosened · {len(diff.tightened)}"
            f" tightened · {len(diff.added)} added · {len(diff.removed)} removed ·"
            f" {len(diff.unknown)} undecided · {len(diff.accepted)} accepted"
        )
        details = tuple(change.text() for change in diff.loosened[:_SHOWN])
        result = CheckResult(SURFACE_CONTAINED, not diff.loosened, evidence, details)
        if not diff.loosened:
            return ScopedResult(result)
        shown = "; ".join(details) + (" ..." if len(diff.loosened) > _SHOWN else "")
        return ScopedResult(result, f"the surface accepts calls the baseline refused: {shown}")


def corpus_checks_of(options: Any, surface: dict[str, Any] | None) -> CorpusChecks:
    """The corpus checks of a run's ``CertificationOptions`` and its loaded ``surface``."""
    from pytest_entropy.ingest.surfaces import load_repairs

    if options.sessions is None:  # pragma: no cover - planned only with sessions
        raise EntropyError("--surface requires --sessions")
    repairs = load_repairs(options.repairs) if options.repairs is not None else None
    return CorpusChecks(
        CorpusCheckSettings(
            options.sessions,
            surface=dict(surface) if surface is not None else None,
            surface_path=options.surface,
            repairs=list(repairs) if repairs is not None else None,
            repairs_path=options.repairs,
            session_format=options.session_format or "auto",
            storage_options=options.storage_options,
            lenient=options.lenient,
            require_ratchet=options.require_ratchet,
            holdout=DEFAULT_HOLDOUT if options.holdout is None else options.holdout,
            max_malformed_share=options.max_malformed_share or 0.0,
            baseline=options.baseline,
        )
    )
