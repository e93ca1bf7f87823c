"""The plain scan's shortcuts read what its general route reads, and the Rust core reads the
same: the compile replay that skips trace lines mentioning no touched ref counts the same
violations, the proposals' value tallies fed with bare fields equal those fed with
observation records (the route taken when another listener also wants the records), and a
plan's meter and evidence are the same on the Rust core and the plain path, on generated
session files (escaped and literal spellings of the same refs, audits, failures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.core.compiler import ReplayTally
from pytest_entropy.core.meter import report_hash
from pytest_entropy.run.compile import CompileReplay, _mentions, _ReplayRoot
from pytest_entropy.run.corpus import CorpusPlan, measure_plan, read_corpus, source_files
from pytest_entropy.testing import strategies as es
from tests.native_support import paths as on_path


@st.composite
def session_files(draw: st.DrawFn) -> list[list[str]]:
    files = []
    for _ in range(draw(st.integers(1, 3))):
        lines = []
        for trace in draw(st.lists(es.trace_envelopes(), max_size=6)):
            if draw(st.booleans()):  # a model change stamps the traces that follow
                model = draw(st.sampled_from(["alpha", "beta"]))
                lines.append(
                    json.dumps({"type": "model_change", "provider": "p", "modelId": model})
                )
            audits = [
                {"ref": op["ref"], "args": op["args"]}
                for op in trace["operations"]
                if draw(st.booleans())
            ]
            record = {
                "type": "message",
                "message": {"role": "toolResult", "details": {"trace": trace, "audits": audits}},
            }
            # Either spelling: literal UTF-8, or every non-ASCII character escaped.
            lines.append(
                json.dumps(record, separators=(",", ":"), ensure_ascii=draw(st.booleans()))
            )
        files.append(lines)
    return files


def _write(tmp: Path, files: list[list[str]]) -> list[Path]:
    paths = []
    for index, lines in enumerate(files):
        path = tmp / f"{index:02d}.jsonl"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    return paths


SETTINGS = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(
    files=session_files(),
    pair=es.surface_pairs(),
    touched=st.sets(es.refs(), max_size=4),
)
def test_the_replay_that_skips_unmentioned_lines_counts_the_same(
    tmp_path_factory: Any, files: list[list[str]], pair: Any, touched: set[str]
) -> None:
    paths = _write(tmp_path_factory.mktemp("replay"), files)
    live, candidate = pair
    found = []
    for mentions in (None, _mentions(touched)):
        replay = CompileReplay(
            candidate,
            live,
            frozenset(touched),
            frozenset(),
            audit_fragments=False,
            observation_fragments=False,
        )
        plan = CorpusPlan(
            meter=False, proposals=False, audit_refs=False, replay=replay, mentions=mentions
        )
        root = read_corpus(source_files(paths), plan, replayed=_ReplayRoot()).replayed
        tally = ReplayTally(candidate, live, touched)
        found.append((root.replay, tally.merge(root.replay).violations()))
    assert found[0] == found[1]


@SETTINGS
@given(files=session_files())
def test_value_tallies_fed_with_fields_equal_the_records_path(
    tmp_path_factory: Any, files: list[list[str]]
) -> None:
    paths = _write(tmp_path_factory.mktemp("values"), files)
    seen = []
    for kind, plan in (
        ("native", CorpusPlan(observation_values=True)),
        ("plain", CorpusPlan(observation_values=True)),  # the fields alone
        ("plain", CorpusPlan(observation_values=True, records=True)),  # records, fanned out
    ):
        with on_path(kind):
            read = read_corpus(source_files(paths), plan)
        tallies = [
            (ref, key, list(tally.counts.items()), tally.total, tally.overflowed)
            for (ref, key), tally in read.evidence.tallies.items()
        ]
        seen.append((tallies, read.diagnostics.audit_calls, read.diagnostics.skipped_audits))
    assert seen[0] == seen[1] == seen[2]


@SETTINGS
@given(
    files=session_files(),
    plan=st.sampled_from(
        [measure_plan(), CorpusPlan(observation_values=True), CorpusPlan(trace_values=True)]
    ),
)
def test_a_plans_state_and_evidence_are_the_same_on_both_paths(
    tmp_path_factory: Any, files: list[list[str]], plan: CorpusPlan
) -> None:
    paths = _write(tmp_path_factory.mktemp("parts"), files)
    paths.insert(1, paths[0].with_name("missing.jsonl"))  # unreadable: adds nothing
    reports = []
    for kind in ("native", "plain"):
        with on_path(kind):
            read = read_corpus(source_files(paths), plan)
        evidence = read.evidence
        reports.append(
            (
                report_hash(read.state.finalize()),
                [
                    (ref_key, list(tally.counts.items()), tally.total, tally.overflowed)
                    for ref_key, tally in evidence.tallies.items()
                ],
                {ref: evidence.key_set_clusters(ref) for ref in evidence.clusters},
                [
                    (identity, window, occurrences, min(3, len(executions)))
                    for identity, (window, occurrences, executions) in (evidence.sequences.items())
                ],
            )
        )
    assert reports[0] == reports[1]
