"""The certification run of metric v3: the upstream's check list, then its corpus mode.

The fixture checks are :mod:`pytest_entropy.core.certify.v3`'s. Corpus mode follows the
upstream's v3 script: every ``*.jsonl`` directly in ``--sessions`` (names in code-unit
order), each file scanned on its own as metric v3 ingests it (a model cursor belongs to one
session), ``--surface`` a ``{version: 1, actions}`` snapshot whose hash is the catalogue
digest (else ``"(sessions)"``), the ``corpus-mode`` check, and with ``--trial`` the v3
trial against the artifact (``--artifact``, else the state directory's, else the agent
directory's ``compiled.json``) with the ``trial-costs`` check. A usage problem of corpus
mode is a failed check (``trial-mode``, ``artifact-mode``, ``corpus-mode``), never an
exception; a surface that is not a snapshot makes the run fail to execute, as upstream.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.core.certify.fixtures import CheckResult, sessions_not_found
from pytest_entropy.core.certify.report import surface_summary
from pytest_entropy.core.certify.v3 import (
    V3Run,
    measure_v3,
    run_v3_checks,
    v3_certification_report,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.v3.trial import run_entropy_trial_v3
from pytest_entropy.ingest.surfaces import load_json_file
from pytest_entropy.run.certification_report import trial_artifact, v3_ports
from pytest_entropy.state.store import COMPILED_V3

__all__ = [
    "ARTIFACT_REQUIRES_TRIAL",
    "TRIAL_REQUIRES_SESSIONS_AND_SURFACE",
    "V3Certification",
    "V3CertificationOptions",
    "certify_v3",
    "v3_certification_of",
]

TRIAL_REQUIRES_SESSIONS_AND_SURFACE = "--trial requires --sessions and --surface"
TRIAL_REQUIRES_SURFACE = "--trial requires --surface"
ARTIFACT_REQUIRES_TRIAL = "--artifact requires --trial"
SURFACE_REQUIRES_SESSIONS = "--surface requires --sessions"
NOT_A_SNAPSHOT = "surface snapshot must be { version: 1, actions: [...] }"


@dataclass(frozen=True, slots=True)
class V3CertificationOptions:
    """What a v3 certification reads (all optional: without them, the fixture checks)."""

    sessions: str | None = None
    surface: str | None = None
    trial: bool = False
    artifact: str | None = None
    state_dir: str | None = None


def _scan_v3(lines: list[str]) -> Any:
    return v3_ports().scan_lines(lines)


def _read_sessions(directory: Path) -> tuple[int, list[Any], list[Any]]:
    """``(files, traces, audit calls)`` of the directory's ``*.jsonl``, each file alone."""
    names = sorted(
        (entry.name for entry in directory.iterdir() if entry.name.endswith(".jsonl")),
        key=code_unit_key,
    )
    traces: list[Any] = []
    audits: list[Any] = []
    for name in names:
        text = (directory / name).read_text(encoding="utf-8", errors="replace")
        scanned = _scan_v3(text.split("\n"))
        traces.extend(scanned.traces)
        audits.extend(scanned.audit_calls)
    return len(names), traces, audits


def _snapshot(path: str) -> dict[str, Any]:
    raw = load_json_file(path, "surface")
    if type(raw) is not dict or raw.get("version") != 1 or type(raw.get("actions")) is not list:
        raise EntropyInputError(NOT_A_SNAPSHOT, source=path)
    actions = [a for a in raw["actions"] if type(a) is dict and type(a.get("ref")) is str]
    return {"version": 1, "actions": actions}


def certify_v3(options: V3CertificationOptions) -> dict[str, Any]:
    """The v3 certification report of the fixtures and, with ``--sessions``, the corpus."""
    run = V3Run(v3_ports())
    checks: list[CheckResult] = run_v3_checks(run)
    if options.trial and not options.sessions:
        checks.append(CheckResult("trial-mode", False, TRIAL_REQUIRES_SESSIONS_AND_SURFACE))
    if options.artifact and not options.trial:
        checks.append(CheckResult("artifact-mode", False, ARTIFACT_REQUIRES_TRIAL))
    if options.surface and not options.sessions:
        checks.append(CheckResult("corpus-mode", False, SURFACE_REQUIRES_SESSIONS))
    corpus = surface_section = trial_section = None
    if options.sessions:
        directory = Path(options.sessions)
        if not directory.is_dir():
            checks.append(CheckResult("corpus-mode", False, sessions_not_found(options.sessions)))
        else:
            files, traces, audits = _read_sessions(directory)
            surface = _snapshot(options.surface) if options.surface else None
            digest = surface_hash(surface) if surface is not None else "(sessions)"
            if surface is not None and options.surface is not None:
                surface_section = surface_summary(options.surface, surface)
            report = measure_v3(traces, surface, digest)
            corpus = report.to_json()
            operations = report.totals.operations
            checks.append(
                CheckResult(
                    "corpus-mode",
                    operations > 0,
                    f"files {files} traces {len(traces)} operations {operations}",
                )
            )
            if options.trial:
                if surface is None:
                    checks.append(CheckResult("trial-mode", False, TRIAL_REQUIRES_SURFACE))
                else:
                    artifact, problem, _where = trial_artifact(
                        options.artifact, options.state_dir, COMPILED_V3
                    )
                    if artifact is None:
                        checks.append(CheckResult("trial-mode", False, problem))
                    else:
                        trial = run_entropy_trial_v3(traces, surface, artifact, audits)
                        trial_section = trial.to_json()
                        checks.append(
                            CheckResult(
                                "trial-costs", trial.costs() == 0, js_stringify(trial.totals)
                            )
                        )
    return v3_certification_report(
        run.fixtures_summary(),
        checks,
        corpus=corpus,
        surface=surface_section,
        trial=trial_section,
    )


def v3_certification_of(settings: Any) -> Any:
    """The v3 certification of the pytest plugin's settings (``EntropySettings``)."""
    arguments = settings.certification_arguments()
    return V3Certification(
        V3CertificationOptions(
            sessions=arguments["sessions"],
            surface=arguments["surface"],
            trial=bool(arguments["trial"]),
            artifact=arguments["artifact"],
            state_dir=arguments["state_dir"],
        )
    )


class V3Certification:
    """The v3 certification as the pytest plugin runs it: one item per check.

    The interface of :class:`~pytest_entropy.run.certification.Certification` the plugin
    uses (the planned ids, one check's outcome, the fixtures section, the report). The
    fixtures and the corpus are read once, on first use; a check's outcome carries the report
    sections it produced (``corpus``/``surface`` with ``corpus-mode``, ``trial`` with
    ``trial-costs``) so outcomes gathered on pytest-xdist workers rebuild the same report.
    """

    def __init__(self, options: V3CertificationOptions) -> None:
        self.options = options
        self._report: dict[str, Any] | None = None

    @property
    def _full(self) -> dict[str, Any]:
        if self._report is None:
            self._report = certify_v3(self.options)
        return self._report

    def planned_check_ids(self) -> tuple[str, ...]:
        return tuple(check["id"] for check in self._full["evaluation"]["checks"])

    def planned_corpus_check_ids(self) -> tuple[str, ...]:
        return ()  # v3 has no checks of the user's corpus beyond the upstream's list

    def fixture_summary(self) -> dict[str, Any]:
        fixtures: dict[str, Any] = self._full["fixtures"]
        return fixtures

    def run(self, check_id: str) -> Any:
        from pytest_entropy.run.certification_report import CheckOutcome

        for check in self._full["evaluation"]["checks"]:
            if check["id"] == check_id:
                sections: dict[str, Any] = {}
                for name in _SECTIONS_OF.get(check_id, ()):
                    if name in self._full:
                        sections[name] = self._full[name]
                return CheckOutcome(CheckResult.from_json(check), sections)
        raise KeyError(check_id)

    def report(self, outcomes: list[Any]) -> dict[str, Any]:
        """The v3 report of ``outcomes`` (gathered anywhere), in the planned order."""
        rank = {check_id: index for index, check_id in enumerate(self.planned_check_ids())}
        ran = sorted(outcomes, key=lambda outcome: rank.get(outcome.result.id, len(rank)))
        sections: dict[str, Any] = {}
        for outcome in ran:
            sections.update(outcome.sections)
        return v3_certification_report(
            self.fixture_summary(),
            [outcome.result for outcome in ran],
            corpus=sections.get("corpus"),
            surface=sections.get("surface"),
            trial=sections.get("trial"),
        )


_SECTIONS_OF: dict[str, tuple[str, ...]] = {
    "corpus-mode": ("corpus", "surface"),
    "trial-costs": ("trial",),
}
