"""Every engine gives the local report on the real third-party corpora (``../shared/corpora``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.meter import report_hash
from pytest_entropy.run.corpus import CorpusRead
from tests.dask_support import in_process_cluster
from tests.distributed_support import measured, one_pass

pytestmark = [pytest.mark.corpora, pytest.mark.slow]

SESSION_SUFFIXES = (".jsonl", ".jsonl.gz", ".json")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with in_process_cluster(workers=2) as address:
        yield address


def corpus_files(root: Path) -> list[Path]:
    """Every session-like file of the shared corpora, in code-unit order of its path."""
    files = [
        path for path in root.rglob("*") if path.is_file() and path.name.endswith(SESSION_SUFFIXES)
    ]
    return sorted(files, key=lambda path: code_unit_key(str(path)))


def fingerprint(result: CorpusRead) -> tuple[str, dict[str, Any]]:
    return report_hash(result.state.finalize()), result.diagnostics.to_json()


def test_real_corpora_same_hash_on_the_cluster(shared_corpora: Path, scheduler: str) -> None:
    """About 800 files in a dozen formats (read by the foreign readers where registered),
    mapped in batches on the cluster's workers and merged in file order."""
    files = corpus_files(shared_corpora)
    assert len(files) > 100
    local = measured(files)
    assert local.diagnostics.files == len(files)
    assert local.diagnostics.lines > 10_000
    clustered = measured(files, engine="dask", scheduler=scheduler)
    assert fingerprint(clustered) == fingerprint(local)


def derived_surface(files: list[Path]) -> dict[str, Any]:
    """A surface for the refs the corpora call: each top-level string argument declared as
    an enum of every value seen plus one never used, so the compiler has real tightenings
    (and real replays) to do."""
    values: dict[str, dict[str, set[str]]] = {}
    for call in one_pass(files).audit_calls:
        keys = values.setdefault(call.ref, {})
        for key, value in call.args.items():
            if type(value) is str and len(value) < 40:
                keys.setdefault(key, set()).add(value)
    actions = []
    for ref in sorted(values, key=code_unit_key):
        properties = {
            key: {"type": "string", "enum": [*sorted(seen, key=code_unit_key), "\u0000unused"]}
            for key, seen in values[ref].items()
            if len(seen) <= 8
        }
        actions.append({"ref": ref, "inputSchema": {"type": "object", "properties": properties}})
    return {"version": 1, "actions": actions}


def test_real_corpora_compile_and_trial_on_the_cluster(
    shared_corpora: Path, scheduler: str
) -> None:
    """Compile (measure, propose, replay) and the held-out trial on the real corpora: the
    cluster's bytes equal the one-pass functions' bytes."""
    from pytest_entropy.core.canonical import canonical_json
    from pytest_entropy.core.compiler import compile_entropy_surface
    from pytest_entropy.core.trial import run_entropy_trial
    from pytest_entropy.run.compile import compile_sources
    from pytest_entropy.run.corpus import EngineOptions, source_files
    from pytest_entropy.run.trial import trial_sources

    files = corpus_files(shared_corpora)
    train, held_out = files[0::2], files[1::2]
    surface = derived_surface(files)
    assert len(surface["actions"]) > 20
    evidence = one_pass(train)
    expected = compile_entropy_surface(
        evidence.traces, surface, None, evidence.value_observations, evidence.audit_calls
    )
    cluster = EngineOptions("dask", scheduler=scheduler)
    run = compile_sources(source_files(train), surface, engine=cluster)
    assert canonical_json(run.outcome.to_json()) == canonical_json(expected.to_json())
    assert any(p["kind"] == "enum-tighten" for p in expected.proposals)
    artifact = run.outcome.artifact
    held = one_pass(held_out)
    expected_trial = run_entropy_trial(held.traces, surface, artifact, held.audit_calls)
    trial, _ = trial_sources(source_files(held_out), surface, artifact, engine=cluster)
    assert trial.to_json() == expected_trial.to_json()
    assert trial.totals["operations"] > 1000
