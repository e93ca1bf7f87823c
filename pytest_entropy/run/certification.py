"""Running the certification (spec §12): fixtures, ports, corpus mode and the report.

The checks themselves are pure (:mod:`pytest_entropy.core.certify`); this module supplies
what they cannot do themselves - the shipped fixture files, a session-line scanner, a
temporary agent directory for the store round trip - and performs corpus mode's reads. The
CLI (``pytest-entropy certify``) and the pytest plugin (``pytest --entropy-certify``) both
drive a :class:`Certification`, one check at a time, so a pytest-xdist worker can run any
subset and the controller can still assemble the complete report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from pytest_entropy.core.certify import (
    CHECK_IDS,
    SURFACE_REQUIRES_SESSIONS,
    TRIAL_REQUIRES_SURFACE,
    CheckResult,
    FixtureRun,
    Fixtures,
    Ports,
    SessionScan,
    check_by_id,
    corpus_mode_check,
    run_check,
    sessions_not_found,
    surface_summary,
    trial_costs_check,
    trial_mode_failure,
    trial_summary,
)
from pytest_entropy.core.certify.scopes import ScopedResult
from pytest_entropy.core.errors import EntropyError, EntropyInputError
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.core.records import Report
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.trial import run_entropy_trial
from pytest_entropy.ingest.base import is_listed_file
from pytest_entropy.run.certification_report import (
    CheckOutcome,
    build_report,
    default_ports,
    temporary_store,
)
from pytest_entropy.sources.resources import corpora_path
from pytest_entropy.sources.urls import is_url

__all__ = [
    "Certification",
    "CertificationOptions",
    "CheckOutcome",
    "build_report",
    "default_ports",
    "load_fixtures",
    "temporary_store",
]

CORPUS_SUFFIX = ".jsonl"
SURFACE_LINT = "surface-lint"
_LINT_DETAILS = 20


@dataclass(frozen=True, slots=True)
class CertificationOptions:
    """What the user asked for: §12.1's ``--sessions --surface --trial --artifact``.

    ``repairs`` adds a repair table's lexicon tax to the corpus report (an extension of the
    reference, which measures corpora without repairs). ``session_format`` reads the corpus
    as every other command does (``auto``, ``fabric`` or a foreign one): under ``auto``
    (and ``None``, the old spelling) a directory of native ``*.jsonl`` is the spec's corpus
    mode exactly (every ``*.jsonl`` directly in it, one concatenated scan); any other goes
    through its readers into the same scan (``docs/decisions.md``). ``surface_format``
    names the surface's format (``auto``: detect); the surface may be a live MCP server
    (``mcp+stdio:...``). ``lint_surface`` is the surface ``surface-lint`` lints when it is
    not ``surface`` (the pytest ini key, which alone is no corpus-mode request).
    ``sessions`` may be an fsspec URL (listed as ``measure`` lists a URL), read with
    ``storage_options``, which never appear in the ``repr``, the report or a message.
    """

    sessions: str | None = None
    surface: str | None = None
    repairs: str | None = None
    trial: bool = False
    artifact: str | None = None
    lint: str | None = None
    strict: bool = False
    session_format: str | None = "auto"
    surface_format: str = "auto"
    lint_surface: str | None = None
    # Where the trial looks for compiled.json before the agent directory (default: the
    # project's .entropy/), so `compile --write` and `certify --trial` agree.
    state_dir: str | None = None
    storage_options: Mapping[str, Any] | None = field(default=None, repr=False)
    # The checks on the user's corpus (scope ``corpus``, run/corpus_checks.py).
    lenient: bool = False
    require_ratchet: bool = False
    holdout: float | None = None
    max_malformed_share: float | None = None
    baseline: str | None = None  # the ratchet baseline surface-contained compares with
    mcp_timeout: float | None = None  # seconds a live ``surface`` has to list (None: 30)

    @property
    def corpus_mode(self) -> bool:
        return self.sessions is not None or self.surface is not None

    @property
    def trial_mode(self) -> bool:
        # `--trial` without `--sessions` is ignored (spec §14 #13).
        return self.trial and self.sessions is not None

    @property
    def trial_ignored(self) -> bool:
        return self.trial and self.sessions is None

    def planned_check_ids(self) -> tuple[str, ...]:
        """Every check this run will report, in the report's order."""
        ids = list(CHECK_IDS)
        if self.corpus_mode:
            ids.append("corpus-mode")
        if self.trial_mode:
            ids += ["trial-mode", "trial-costs"]
        if self.lint is not None:
            # Opt-in and last: without --lint the list is spec §12's, byte for byte.
            ids.append(SURFACE_LINT)
        return tuple(ids)

    def planned_corpus_check_ids(self) -> tuple[str, ...]:
        """The checks on the user's corpus (scope ``corpus``): ``run/corpus_checks.py``."""
        from pytest_entropy.run.corpus_checks import planned_corpus_checks as planned

        return planned(self.sessions, self.surface, self.baseline)


# ------------------------------------------------------------------------- the ports


@cache
def _fixture_data() -> tuple[dict[str, Any], tuple[str, ...]]:
    path = corpora_path("certification", "fixtures.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    lines_file = corpora_path("certification", data["ingestion"]["lines"])
    # The ingestion corpus is a file's text split on "\n" (spec §1.1): keep every piece.
    lines = tuple(lines_file.read_text(encoding="utf-8").split("\n"))
    return data, lines


def load_fixtures() -> Fixtures:
    """The spec's §13.0 fixtures as shipped in ``corpora/certification`` (a fresh copy)."""
    data, lines = _fixture_data()
    return Fixtures.from_json(json.loads(json.dumps(data)), lines)


# ----------------------------------------------------------------------- corpus mode


@dataclass(slots=True)
class _CorpusOutcome:
    checks: dict[str, CheckOutcome] = field(default_factory=dict)


def _corpus_files(directory: Path) -> list[Path]:
    """Every ``*.jsonl`` directly in the directory, names in code-unit order (§12.1)."""
    names = [
        entry.name
        for entry in os.scandir(directory)
        if entry.name.endswith(CORPUS_SUFFIX) and entry.is_file()
    ]
    return [directory / name for name in sorted(names, key=code_unit_key)]


def _refuse_unrecognised(directory: Path) -> None:
    """``--strict``: a file the corpus would pass over (not ``*.jsonl``) is an error."""
    others = sorted(
        (
            entry.name
            for entry in os.scandir(directory)
            if not entry.name.endswith(CORPUS_SUFFIX) and is_listed_file(entry)
        ),
        key=code_unit_key,
    )
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise EntropyInputError(
            f"strict: {len(others)} unrecognised file(s) in {directory}: {shown}"
        )


def _scan_corpus(files: Sequence[Path]) -> SessionScan:
    """One scan over the files' lines concatenated: the model cursor crosses files."""
    from pytest_entropy.ingest.base import NATIVE_FORMAT, ReadOptions

    return _read_records(files, ReadOptions(NATIVE_FORMAT))


def _read_records(
    files: Sequence[Path | str],
    options: Any,
    skipped: Sequence[tuple[str, str]] = (),
    strict: bool = False,
) -> SessionScan:
    """The files' records, read as ``options`` say, with one model cursor across files."""
    from pytest_entropy.run.corpus import read_corpus, records_plan, source_files

    plan = records_plan(options, continuous=True)
    read = read_corpus(source_files(files, skipped), plan)
    for source in read.unreadable:
        if is_url(source.location):
            raise OSError(f"cannot read {source.location}")
        # Every corpus-mode error fails the check with the system's own words: open the
        # file again for them (it may also have become readable meanwhile).
        open(source.location, "rb").close()
        raise OSError(f"cannot read {source.location}")
    diagnostics = read.diagnostics
    if strict and diagnostics.unrecognized_files:
        names = diagnostics.unrecognized_names
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise EntropyInputError(
            f"strict: {diagnostics.unrecognized_files} unrecognised file(s): {shown}"
        )
    return read.records


def _is_native_corpus(directory: Path) -> bool:
    """A directory of ``*.jsonl`` none of which a foreign reader claims: the spec's corpus."""
    from pytest_entropy.ingest.base import NATIVE_FORMAT, ReadOptions
    from pytest_entropy.ingest.registry import resolve_format

    files = _corpus_files(directory)
    auto = ReadOptions()
    return bool(files) and all(resolve_format(path, auto) == NATIVE_FORMAT for path in files)


def _scan_formatted_corpus(
    directory: Path,
    session_format: str,
    surface: dict[str, Any] | None,
    *,
    exclude: Sequence[str] = (),
    strict: bool = False,
) -> tuple[list[Path], SessionScan]:
    """Corpus mode over a session format: the files its directory rule lists (``auto``: as
    ``measure`` lists them), each read by its reader (or natively), with one model cursor
    across the files."""
    from pytest_entropy.ingest.base import ReadOptions
    from pytest_entropy.sources.locate import session_listing

    options = ReadOptions(session_format=session_format, surface=surface)
    listing = session_listing([directory], options, exclude)
    files = [Path(name) for name in listing.files]
    return files, _read_records(files, options, listing.skipped, strict)


def _scan_url_corpus(
    options: CertificationOptions, session_format: str, surface: dict[str, Any] | None
) -> tuple[list[str], SessionScan]:
    """Corpus mode over an fsspec URL: the files ``measure`` lists for it (a directory's
    ``*.jsonl`` and ``*.jsonl.gz`` by name), read with the storage options, with one model
    cursor across the files."""
    from pytest_entropy.ingest.base import ReadOptions
    from pytest_entropy.sources.urls import expand_url

    if options.sessions is None:  # pragma: no cover - corpus mode checked it
        raise EntropyInputError(SURFACE_REQUIRES_SESSIONS)
    read = ReadOptions(
        session_format=session_format, surface=surface, storage_options=options.storage_options
    )
    files = expand_url(options.sessions, options.storage_options)
    return files, _read_records(files, read, strict=options.strict)


def _score_properties(report: Report) -> tuple[tuple[str, Any], ...]:
    return (("entropy_score", report.score), ("entropy_report_hash", report_hash(report)))


class Certification:
    """One certification run in one process: checks run on demand, each at most once."""

    def __init__(
        self,
        options: CertificationOptions | None = None,
        *,
        fixtures: Fixtures | None = None,
        ports: Ports | None = None,
    ) -> None:
        self.options = options or CertificationOptions()
        self._fixtures = fixtures
        self._ports = ports
        self._outcomes: dict[str, CheckOutcome] = {}

    @cached_property
    def fixture_run(self) -> FixtureRun:
        return FixtureRun(
            self._fixtures if self._fixtures is not None else load_fixtures(),
            self._ports if self._ports is not None else default_ports(),
        )

    def planned_check_ids(self) -> tuple[str, ...]:
        return self.options.planned_check_ids()

    def planned_corpus_check_ids(self) -> tuple[str, ...]:
        return self.options.planned_corpus_check_ids()

    @cached_property
    def loaded_surface(self) -> dict[str, Any] | None:
        """``--surface`` through the one surface loader, once per run (a live server is
        listed once for corpus mode and the corpus checks)."""
        from pytest_entropy.sources.surface import load_surface

        options = self.options
        if options.surface is None:
            return None
        return dict(
            load_surface(
                options.surface, surface_format=options.surface_format, timeout=options.mcp_timeout
            )
        )

    @cached_property
    def _corpus_checks(self) -> Any:
        from pytest_entropy.run.corpus_checks import corpus_checks_of

        return corpus_checks_of(self.options, self.loaded_surface)

    def _run_corpus_check(self, check_id: str) -> CheckOutcome:
        try:
            scoped = self._corpus_checks.run(check_id)
        except (EntropyError, OSError, ValueError) as error:
            text = str(error) or type(error).__name__
            scoped = ScopedResult(CheckResult(check_id, False, text), f"cannot read: {text}")
        return CheckOutcome(
            scoped.result,
            properties=(("entropy_scope", "corpus"),),
            reason=scoped.reason,
            gating=scoped.gating,
            corpus=True,
        )

    def run(self, check_id: str) -> CheckOutcome:
        """Run (or recall) one check by id."""
        if check_id not in self._outcomes:
            self._outcomes[check_id] = self._run(check_id)
        return self._outcomes[check_id]

    def run_all(self) -> list[CheckOutcome]:
        ids = (*self.planned_check_ids(), *self.planned_corpus_check_ids())
        return [self.run(check_id) for check_id in ids]

    def _run(self, check_id: str) -> CheckOutcome:
        if check_id in self.planned_corpus_check_ids():
            return self._run_corpus_check(check_id)
        if check_id == SURFACE_LINT:
            return self._surface_lint()
        if check_id in self._corpus.checks:
            return self._corpus.checks[check_id]
        if check_id in ("corpus-mode", "trial-mode", "trial-costs"):
            return CheckOutcome(
                CheckResult(check_id, False, "not run"),
                skipped="not part of this run (see corpus-mode and trial-mode)",
            )
        try:
            check = check_by_id(check_id)
        except KeyError:
            raise EntropyError(f"unknown certification check {check_id!r}") from None
        result = run_check(check, self.fixture_run)
        return CheckOutcome(result, properties=self._fixture_properties(check_id))

    def _surface_lint(self) -> CheckOutcome:
        """``surface-lint``: no error-severity finding on ``--surface`` under the profile."""
        profile = self.options.lint or ""
        surface = self.options.surface or self.options.lint_surface
        if surface is None:
            return CheckOutcome(CheckResult(SURFACE_LINT, False, "surface-lint needs --surface"))
        from pytest_entropy.run.lint import lint_source

        try:
            run = lint_source(surface, [profile], timeout=self.options.mcp_timeout)
        except EntropyError as error:
            return CheckOutcome(CheckResult(SURFACE_LINT, False, str(error)))
        errors = run.errors
        tools = len(run.surface["actions"])
        evidence = (
            f"{len(errors)} errors, {sum(f.severity == 'warning' for f in run.findings)} warnings"
            f" in {tools} tools"
            f" under {profile}"
        )
        details = tuple(
            f"{f.rule} {f.ref}{'#' + f.pointer if f.pointer else ''}: {f.message}"
            for f in errors[:_LINT_DETAILS]
        )
        return CheckOutcome(
            CheckResult(SURFACE_LINT, not errors, evidence, details),
            properties=(("entropy_lint_errors", len(errors)),),
        )

    def _fixture_properties(self, check_id: str) -> tuple[tuple[str, Any], ...]:
        run = self.fixture_run
        try:
            if check_id == "converged-corpus-exact":
                return _score_properties(run.converged)
            if check_id == "wobble-math-exact":
                return _score_properties(run.wobble)
            if check_id == "ratchet-monotone":
                return _score_properties(run.ratchet_after)
        except Exception:  # the check itself already reported the failure
            return ()
        return ()

    def fixture_summary(self) -> dict[str, Any]:
        """The report's ``fixtures`` section (pure; recomputed wherever it is needed)."""
        return self.fixture_run.summary()

    # ---- corpus mode (spec §12.1)

    @cached_property
    def _corpus(self) -> _CorpusOutcome:
        outcome = _CorpusOutcome()
        if not self.options.corpus_mode:
            return outcome
        try:
            self._read_corpus(outcome)
        except (EntropyError, OSError, ValueError) as error:
            # Every corpus-mode error is a failed check (exit 1), never a usage error.
            failure = CheckResult("corpus-mode", False, str(error))
            outcome.checks = {"corpus-mode": CheckOutcome(failure)}
            self._skip_trial(outcome, "corpus mode failed")
        return outcome

    def _skip_trial(self, outcome: _CorpusOutcome, reason: str) -> None:
        if self.options.trial_mode:
            for check_id in ("trial-mode", "trial-costs"):
                outcome.checks.setdefault(
                    check_id,
                    CheckOutcome(CheckResult(check_id, False, reason), skipped=reason),
                )

    def _read_corpus(self, outcome: _CorpusOutcome) -> None:
        options = self.options
        if options.sessions is None:
            outcome.checks["corpus-mode"] = CheckOutcome(
                CheckResult("corpus-mode", False, SURFACE_REQUIRES_SESSIONS)
            )
            return
        directory = Path(options.sessions)
        url = is_url(options.sessions)
        if not url and not directory.is_dir():
            outcome.checks["corpus-mode"] = CheckOutcome(
                CheckResult("corpus-mode", False, sessions_not_found(options.sessions))
            )
            self._skip_trial(outcome, "corpus mode failed")
            return
        from pytest_entropy.ingest.surfaces import load_repairs

        surface = self.loaded_surface
        repairs = load_repairs(options.repairs) if options.repairs is not None else None
        session_format = options.session_format or "auto"
        files: Sequence[Path | str]
        if url:
            files, evidence = _scan_url_corpus(options, session_format, surface)
        elif session_format == "auto" and _is_native_corpus(directory):
            files = _corpus_files(directory)
            if options.strict:
                _refuse_unrecognised(directory)
            evidence = _scan_corpus(files)
        else:
            exclude = [path for path in (options.surface, options.repairs) if path is not None]
            files, evidence = _scan_formatted_corpus(
                directory, session_format, surface, exclude=exclude, strict=options.strict
            )
        catalog = surface_hash(surface) if surface is not None else "(sessions)"
        report = measure(evidence.traces, surface, repairs, catalog)
        sections: dict[str, Any] = {"corpus": report.to_json()}
        if surface is not None and options.surface is not None:
            sections["surface"] = surface_summary(options.surface, surface)
        outcome.checks["corpus-mode"] = CheckOutcome(
            corpus_mode_check(len(files), len(evidence.traces), report),
            sections,
            _score_properties(report),
        )
        if not options.trial_mode:
            return
        if surface is None:
            outcome.checks["trial-mode"] = CheckOutcome(trial_mode_failure(TRIAL_REQUIRES_SURFACE))
            self._skip_trial(outcome, "the trial did not run (see trial-mode)")
            return
        artifact, problem, where = self._trial_artifact()
        if artifact is None:
            outcome.checks["trial-mode"] = CheckOutcome(trial_mode_failure(problem))
            self._skip_trial(outcome, "the trial did not run (see trial-mode)")
            return
        trial = run_entropy_trial(evidence.traces, surface, artifact, evidence.audit_calls)
        tightened, quarantined = len(artifact["actions"]), len(artifact["quarantined"])
        outcome.checks["trial-mode"] = CheckOutcome(
            CheckResult(
                "trial-mode",
                True,
                f"artifact {where}: {tightened} tightened · {quarantined} quarantined",
            )
        )
        outcome.checks["trial-costs"] = CheckOutcome(
            trial_costs_check(trial),
            {"trial": trial_summary(trial)},
            (("entropy_trial_verdict", trial.verdict),),
        )

    def _trial_artifact(self) -> tuple[dict[str, Any] | None, str, str]:
        """``(artifact, problem, where)``: the trial's artifact or why there is none."""
        from pytest_entropy.run.certification_report import trial_artifact

        return trial_artifact(self.options.artifact, self.options.state_dir)

    # ---- the report

    def report(self, outcomes: Sequence[CheckOutcome] | None = None) -> dict[str, Any]:
        """The §12.2 report of ``outcomes`` (default: every planned check, run here)."""
        return build_report(
            self.fixture_summary(),
            outcomes if outcomes is not None else self.run_all(),
            self.planned_check_ids(),
            self.planned_corpus_check_ids(),
        )
