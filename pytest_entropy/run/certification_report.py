"""Pieces of the certification run kept apart from :mod:`pytest_entropy.run.certification`:
the real ports of the fixture checks (the session scanner, a temporary store), assembling
the report from outcomes gathered anywhere (the spec's report, then the user's corpus
checks in their own section), and finding the trial's compiled artifact."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_entropy.core.certify import (
    NO_AGENT_ARTIFACT,
    ArtifactStore,
    CheckResult,
    Ports,
    SessionScan,
    certification_report,
)
from pytest_entropy.core.certify.scopes import CORPUS_CHECK_ORDER, ScopedResult, scoped_report
from pytest_entropy.sources.agent_dir import agent_dir_from_env, agent_state_dir, default_state_dir
from pytest_entropy.state.store import COMPILED, COMPILED_V3, StoreKind, load_path, save_path

__all__ = [
    "CheckOutcome",
    "build_report",
    "default_ports",
    "temporary_store",
    "trial_artifact",
    "v3_ports",
]


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One check's result plus what it adds to the report, or why it did not run.

    ``sections`` are report sections the check produced (``corpus``/``surface`` from
    ``corpus-mode``, ``trial`` from ``trial-costs``); ``properties`` are name/value pairs
    for JUnit XML (a score and a report hash). Everything is JSON, so an outcome crosses
    from a pytest-xdist worker to the controller unchanged.
    """

    result: CheckResult
    sections: Mapping[str, Any] = field(default_factory=dict)
    properties: tuple[tuple[str, Any], ...] = ()
    skipped: str | None = None
    # A corpus check's (scope ``corpus``): a plain reason when it failed, and whether a
    # failure fails the run.
    reason: str | None = None
    gating: bool = True
    corpus: bool = False

    def scoped(self) -> ScopedResult:
        return ScopedResult(self.result, self.reason, self.gating)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "result": self.result.to_json(),
            "details": list(self.result.details),
            "sections": dict(self.sections),
            "properties": [list(pair) for pair in self.properties],
        }
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.corpus:
            out["corpus"] = {"reason": self.reason, "gating": self.gating}
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> CheckOutcome:
        result = CheckResult.from_json(value["result"])
        details = tuple(str(line) for line in value.get("details") or ())
        corpus = value.get("corpus")
        return cls(
            CheckResult(result.id, result.passed, result.evidence, details),
            dict(value.get("sections") or {}),
            tuple((str(name), item) for name, item in value.get("properties") or ()),
            value.get("skipped"),
            reason=corpus.get("reason") if corpus else None,
            gating=bool(corpus.get("gating", True)) if corpus else True,
            corpus=corpus is not None,
        )


def _scan_lines(lines: Sequence[str]) -> SessionScan:
    from pytest_entropy.ingest.native import scan_lines

    return scan_lines(lines)


class _AgentDirStore:
    """``compiled.json`` in one agent directory, through the locked store (spec §1.8)."""

    def __init__(self, agent_dir: Path, kind: StoreKind = COMPILED) -> None:
        self.kind = kind
        self.path = agent_state_dir(agent_dir) / kind.filename

    def save(self, artifact: Mapping[str, Any]) -> bool:
        return save_path(self.path, self.kind, dict(artifact)).written

    def load(self) -> tuple[dict[str, Any] | None, str | None]:
        loaded = load_path(self.path, self.kind)
        return loaded.file, loaded.error


@contextmanager
def temporary_store() -> Iterator[ArtifactStore]:
    """A store in a fresh temporary agent directory, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="entropy-certify-") as agent_dir:
        yield _AgentDirStore(Path(agent_dir))


@contextmanager
def temporary_store_v3() -> Iterator[ArtifactStore]:
    """:func:`temporary_store` of metric v3 (it loads version-2 artifacts)."""
    with tempfile.TemporaryDirectory(prefix="entropy-certify-") as agent_dir:
        yield _AgentDirStore(Path(agent_dir), COMPILED_V3)


def default_ports() -> Ports:
    """The real ports: the native session scanner and a temporary agent directory."""
    return Ports(scan_lines=_scan_lines, temporary_store=temporary_store)


def v3_ports(scan_lines: Any = None) -> Ports:
    """The ports of the v3 check list: a scanner that follows metric v3's ingestion and a
    temporary version-2 store (``scan_lines`` overrides the scanner)."""
    return Ports(scan_lines=scan_lines or _scan_lines_v3, temporary_store=temporary_store_v3)


def _scan_lines_v3(lines: Sequence[str]) -> SessionScan:
    from pytest_entropy.ingest.native import scan_lines

    return scan_lines(lines, metric_version=3)


def build_report(
    fixtures: Mapping[str, Any],
    outcomes: Sequence[CheckOutcome],
    order: Sequence[str],
    corpus_order: Sequence[str] = (),
) -> dict[str, Any]:
    """Assemble the report from outcomes gathered anywhere, in the planned check order:
    the spec's report, and the corpus checks' section when any ran (``scopes.py``)."""
    rank = {
        check_id: position for position, check_id in enumerate(corpus_order or CORPUS_CHECK_ORDER)
    }
    corpus = sorted(
        (outcome for outcome in outcomes if outcome.corpus and outcome.skipped is None),
        key=lambda outcome: rank.get(outcome.result.id, len(rank)),
    )
    spec = _spec_report(fixtures, [o for o in outcomes if not o.corpus], order)
    return scoped_report(spec, [outcome.scoped() for outcome in corpus])


def _spec_report(
    fixtures: Mapping[str, Any], outcomes: Sequence[CheckOutcome], order: Sequence[str]
) -> dict[str, Any]:
    rank = {check_id: position for position, check_id in enumerate(order)}
    ran = sorted(
        (outcome for outcome in outcomes if outcome.skipped is None),
        key=lambda outcome: rank.get(outcome.result.id, len(rank)),
    )
    sections: dict[str, Any] = {}
    for outcome in ran:
        sections.update(outcome.sections)
    return certification_report(
        fixtures,
        [outcome.result for outcome in ran],
        corpus=sections.get("corpus"),
        surface=sections.get("surface"),
        trial=sections.get("trial"),
    )


def trial_artifact(
    given: str | None, state_dir: str | None, kind: StoreKind = COMPILED
) -> tuple[dict[str, Any] | None, str, str]:
    """``(artifact, problem, where)``: the trial's artifact (``--artifact``, else the
    project's state directory, else the agent directory's) or why there is none; ``kind``
    is the generation's store kind (:data:`COMPILED_V3` reads version-2 artifacts)."""
    if given is not None:
        path = Path(given)
        if not path.is_file():
            return None, f"artifact not found: {given}", given
        try:
            from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes

            value, _ = parse_json_bytes(path.read_bytes())
        except (JSONParseError, OSError):
            return None, f"artifact is invalid: {given}", given
        artifact = kind.parser(value)
        if artifact is None:
            return None, f"artifact is invalid: {given}", given
        return artifact, "", given
    state = Path(state_dir) if state_dir else default_state_dir()
    local = state / kind.filename
    loaded = load_path(local, kind)
    if loaded.error is not None:
        return None, loaded.error, str(local)
    if loaded.file is not None:
        return loaded.file, "", str(local)
    path = agent_state_dir(agent_dir_from_env()) / kind.filename
    loaded = load_path(path, kind)
    if loaded.error is not None:
        return None, loaded.error, str(path)
    if loaded.file is None:
        return None, NO_AGENT_ARTIFACT, str(path)
    return loaded.file, "", str(path)
