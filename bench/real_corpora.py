"""Measure every real third-party corpus and write ``docs/real-corpora.md``.

    python bench/real_corpora.py [--corpora ../shared/corpora] [--out docs/real-corpora.md]

Each corpus is read with the foreign readers (``docs/formats.md``), measured against the
tool surface it was recorded with, and summarised: surface freedom, operations, failures
by stage, the score and its static/behavioural split, the top refs, per-model rows, the
compiler's proposals (``propose_entropy_reductions``, spec §5) and two hints the v2 compiler
does not emit (below). The output has no timestamps or paths: the same corpora give the same
page. Nothing here is a test; ``tests/corpora/`` pins the counts.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from pytest_entropy.core.fingerprint import surface_freedom_report  # noqa: E402
from pytest_entropy.core.jscompat import code_unit_key, js_string, round_metric  # noqa: E402
from pytest_entropy.core.meter import measure, report_hash  # noqa: E402
from pytest_entropy.core.proposals import propose_entropy_reductions  # noqa: E402
from pytest_entropy.core.records import Report, Trace, ValueObservation  # noqa: E402
from pytest_entropy.core.status import surface_hash  # noqa: E402
from pytest_entropy.ingest.base import ReadOptions  # noqa: E402
from pytest_entropy.ingest.diagnostics import ScanDiagnostics  # noqa: E402
from pytest_entropy.ingest.surfaces import load_surface  # noqa: E402
from pytest_entropy.ingest.tool_lists import read_tau_bench  # noqa: E402
from pytest_entropy.sources.locate import expand_session_paths  # noqa: E402
from pytest_entropy.sources.scan import read_file_evidence  # noqa: E402

# Parameter names that select an operation inside one tool (a multiplexed tool).
MULTIPLEXER_KEYS = ("method", "action", "operation", "command", "op", "subcommand")
ENUM_MIN_CALLS = 8
ENUM_MAX_DISTINCT = 8
ENUM_MIN_TOP_SHARE = 0.5


@dataclass
class SessionCorpus:
    name: str
    title: str
    sessions: list[str]
    session_format: str
    surfaces: list[str]
    surface_note: str
    notes: list[str] = field(default_factory=list)
    # Paths under the repository (the small samples in tests/data), not the corpora folder.
    bundled: bool = False


@dataclass
class SurfaceCorpus:
    name: str
    title: str
    surfaces: list[tuple[str, str]]  # (label, path)
    notes: list[str] = field(default_factory=list)


SESSION_CORPORA = [
    SessionCorpus(
        "pi-sessions",
        "Pi coding-agent sessions",
        ["pi-sessions/sessions"],
        "pi",
        ["pi-sessions/surface/pi-coding-agent-0.27.9.tools.json"],
        "Pi 0.27.9 tools (the release current when the sessions were written)",
    ),
    SessionCorpus(
        "claude-code-sessions-spotter",
        "Claude Code transcripts (main sessions and subagents)",
        ["claude-code-sessions-spotter/transcripts"],
        "claude-code",
        ["claude-code-sessions-spotter/surface/claude-code-2.1.39.tools.json"],
        "Claude Code 2.1.39 tools (captured from the CLI's request)",
    ),
    SessionCorpus(
        "tau-bench-historical",
        "tau-bench trajectories (gpt-4o, airline)",
        ["tau-bench-historical/gpt-4o-airline.json"],
        "tau-bench",
        ["tau-bench-historical/tools_at_7362a17.json"],
        "tau-bench's airline tools at the trajectories' commit",
    ),
    SessionCorpus(
        "bfcl-v4-results-gpt-oss",
        "BFCL v4 results, gpt-oss-120b and gpt-oss-20b",
        ["bfcl-v4-results-gpt-oss/results"],
        "bfcl",
        ["bfcl-v4-data", "bfcl-v4-data/multi_turn_func_doc"],
        "every BFCL v4 function doc (`bfcl-v4-data`), one action per name",
    ),
    SessionCorpus(
        "bfcl-results-2024-08",
        "BFCL leaderboard results, August 2024 (12 models)",
        ["bfcl-results-2024-08/result"],
        "bfcl",
        ["bfcl-results-2024-08/questions_v1"],
        "every BFCL v1 function doc (`questions_v1`), one action per name",
        [
            "Six of the twelve models answer in prompt style (a raw string); those outputs are "
            "not decoded (no prose is parsed), so only the six function-calling models have rows.",
        ],
    ),
    SessionCorpus(
        "openhands-trajectories",
        "OpenHands CodeAct trajectories (Multi-SWE-bench runs and replay files)",
        [
            "openhands-trajectories/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl",
            "openhands-trajectories/tests/runtime/trajs",
        ],
        "openhands",
        ["openhands-trajectories/surface/openhands-codeact-tools@3d22520.json"],
        "CodeAct tools at the runs' commit",
    ),
    SessionCorpus(
        "toolbench-data-example",
        "ToolBench DFSDT search trees (ChatGPT over RapidAPI tools)",
        ["toolbench-data-example/data_example/answer"],
        "toolbench",
        ["toolbench-data-example/data_example/answer"],
        "each answer file's function list, merged",
    ),
]

# The samples of the agent and evaluation formats (issue 33), kept in tests/data: each
# folder's README gives origin, licence and the hand-checked counts.
BUNDLED_CORPORA = [
    SessionCorpus(
        "codex-rollouts",
        "Codex CLI rollouts (tests/data/codex)",
        ["tests/data/codex"],
        "codex",
        [],
        "none recorded (failure stages come from the harness's own verdicts)",
        bundled=True,
    ),
    SessionCorpus(
        "gemini-cli-chats",
        "Gemini CLI chat recordings, older whole-document layout (tests/data/gemini-cli)",
        ["tests/data/gemini-cli"],
        "gemini-cli",
        [],
        "none recorded",
        bundled=True,
    ),
    SessionCorpus(
        "inspect-logs",
        "Inspect AI's own test logs, .json and .eval (tests/data/inspect)",
        ["tests/data/inspect"],
        "inspect",
        [],
        "none (the browser log's model events carry one; its file is gzipped here)",
        bundled=True,
    ),
    SessionCorpus(
        "otel-genai-trace",
        "an OpenTelemetry GenAI trace recorded by bench/record_otel_genai.py "
        "(tests/data/otel-genai)",
        ["tests/data/otel-genai/agent-trace.jsonl"],
        "otel-genai",
        ["tests/data/otel-genai/agent-trace.jsonl"],
        "the trace's own `gen_ai.tool.definitions`",
        bundled=True,
    ),
]

SURFACE_CORPORA = [
    SurfaceCorpus(
        "github-mcp-server-toolsnaps",
        "GitHub MCP server tool snapshots",
        [
            ("head (117 tools)", "github-mcp-server-toolsnaps/head"),
            ("removed and pre-consolidation tools", "github-mcp-server-toolsnaps/removed"),
        ],
    ),
    SurfaceCorpus(
        "mcp-servers-tools-list",
        "27 published MCP servers' tools/list",
        [],  # one row per server, filled in below
    ),
    SurfaceCorpus(
        "api-bank",
        "API-Bank tools (OpenAI function schemas)",
        [("67 tools", "api-bank/pr229-toolsearcher-free/data/processed/openai_tools.json")],
        [
            "API-Bank's dialogues are not one of the session formats this project reads; the "
            "surface alone is measured.",
        ],
    ),
]


# ---------------------------------------------------------------------------- helpers


def number(value: float) -> str:
    return js_string(round_metric(value))


def merged_surface(paths: Iterable[Path]) -> dict[str, Any]:
    """Several tool files as one surface: first position of a ref, its last schema."""
    schemas: dict[str, Any] = {}
    for path in paths:
        for action in load_surface(path)["actions"]:
            schemas[action["ref"]] = action["inputSchema"]
    return {"version": 1, "actions": [{"ref": r, "inputSchema": s} for r, s in schemas.items()]}


def toolbench_surface(root: Path) -> dict[str, Any]:
    files = expand_session_paths([root], ReadOptions("toolbench"))
    return merged_surface(files)


def tau_bench_domain(path: Path, domain: str) -> dict[str, Any]:
    """One domain of a tau-bench tool file (tools shared across domains differ per domain)."""
    value = json.loads(path.read_bytes())
    return read_tau_bench({"domains": {domain: value["domains"][domain]}}, str(path))


def multiplexed(surface: dict[str, Any]) -> list[tuple[str, str, int]]:
    """``(ref, key, choices)`` of tools whose operation is chosen by an enum parameter."""
    out = []
    for action in surface["actions"]:
        schema = action["inputSchema"]
        properties = schema.get("properties") if type(schema) is dict else None
        if type(properties) is not dict:
            continue
        for key in MULTIPLEXER_KEYS:
            prop = properties.get(key)
            if type(prop) is dict and type(prop.get("enum")) is list and len(prop["enum"]) >= 2:
                out.append((action["ref"], key, len(prop["enum"])))
                break
    return out


def enum_like(
    observations: Sequence[ValueObservation], surface: dict[str, Any]
) -> list[tuple[str, str, int, list[tuple[Any, int]]]]:
    """Free parameters whose recorded values look like a small closed vocabulary.

    The spec's eligibility (§5.2: at least 8 values, 2-8 distinct, top share >= 0.5) applied
    to parameters the surface does not already close with an ``enum`` (the v2 compiler drops
    those candidates; these are the "should become an enum" hints).
    """
    schemas = {action["ref"]: action["inputSchema"] for action in surface["actions"]}
    tallies: dict[tuple[str, str], Counter[Any]] = defaultdict(Counter)
    for observation in observations:
        if isinstance(observation.value, str):
            tallies[(observation.ref, observation.key)][observation.value] += 1
    out = []
    for (ref, key), counts in tallies.items():
        total = sum(counts.values())
        if total < ENUM_MIN_CALLS or not 2 <= len(counts) <= ENUM_MAX_DISTINCT:
            continue
        ranked = sorted(counts.items(), key=lambda item: (-item[1], code_unit_key(item[0])))
        if round_metric(ranked[0][1] / total) < ENUM_MIN_TOP_SHARE:
            continue
        schema = schemas.get(ref)
        properties = schema.get("properties") if type(schema) is dict else None
        target = properties.get(key) if type(properties) is dict else None
        if type(target) is dict and ("enum" in target or target.get("type") == "boolean"):
            continue
        out.append((ref, key, total, ranked))
    out.sort(key=lambda item: (-item[2], code_unit_key(item[0] + "\0" + item[1])))
    return out


def freedom_lines(surface: dict[str, Any], worst: int = 5) -> list[str]:
    report = surface_freedom_report(surface)
    rows = report["actions"][:worst]
    shown = ", ".join(f"`{row['ref']}` {number(row['freedom'])}" for row in rows)
    return [
        f"- Surface freedom: total **{number(report['total'])}**, mean {number(report['mean'])} "
        f"over {len(report['actions'])} tools; worst: {shown}",
    ]


# ------------------------------------------------------------------------- sessions


def read_corpus(
    root: Path, corpus: SessionCorpus, surface: dict[str, Any]
) -> tuple[list[Trace], list[ValueObservation], ScanDiagnostics, int]:
    # Without a recorded surface no failure is replayed (an empty one would make each a resolve).
    options = ReadOptions(corpus.session_format, surface if corpus.surfaces else None)
    base = REPO if corpus.bundled else root
    paths = expand_session_paths([base / path for path in corpus.sessions], options)
    traces: list[Trace] = []
    observations: list[ValueObservation] = []
    diagnostics = ScanDiagnostics()
    for path in paths:
        evidence = read_file_evidence(path, diagnostics=diagnostics, options=options)
        if evidence is not None:
            traces.extend(evidence.traces)
            observations.extend(evidence.value_observations)
    return traces, observations, diagnostics, len(paths)


def stage_counts(traces: Sequence[Trace]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for trace in traces:
        for op in trace.operations:
            if op.outcome == "failed":
                counts[op.failure_stage or "unknown"] += 1
    return counts


def report_lines(report: Report, traces: Sequence[Trace]) -> list[str]:
    totals = report.totals
    stages = stage_counts(traces)
    stage_text = ", ".join(
        f"{stage} {stages[stage]}"
        for stage in ("resolve", "prepare", "validate", "approve", "invoke", "guard", "unknown")
        if stages[stage]
    )
    return [
        f"- Operations: **{totals.operations}** in {totals.traces} traces; "
        f"{totals.succeeded} succeeded, {totals.failed} failed, {totals.aborted} aborted, "
        f"{totals.timed_out} timed out",
        f"- Failures by stage: {stage_text or 'none'}; invocation rejections "
        f"{totals.invocation_rejections} ({number(totals.invocation_rejections_per_1k)} per 1k)",
        f"- Score **{number(report.score)}** = static {number(report.static_score)} + "
        f"behavioral {number(report.behavioral_score)} (shape {number(report.shape_entropy_bits)}"
        f" bits, stages {number(report.failure_stage_entropy_bits)} bits, churn "
        f"{number(report.churn_rate)}, flow {number(report.flow_entropy_bits)} bits)",
        f"- Report hash `{report_hash(report)}`",
    ]


def top_refs_table(report: Report, limit: int = 6) -> list[str]:
    lines = [
        "| ref | calls | ok | failed | shape bits | stage bits | churn | freedom | score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = sorted(report.refs, key=lambda row: (-row.calls, code_unit_key(row.ref)))[:limit]
    for row in rows:
        lines.append(
            f"| `{row.ref}` | {row.calls} | {row.succeeded} | {row.failed} | "
            f"{number(row.shape_entropy_bits)} | {number(row.failure_stage_entropy_bits)} | "
            f"{number(row.churn_rate)} | {number(row.static_freedom)} | {number(row.score)} |"
        )
    return lines


def model_table(report: Report) -> list[str]:
    if not report.by_model:
        return ["No model is recorded."]
    lines = [
        "| model | operations | ok | rejections per 1k | behavioral score |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = sorted(report.by_model, key=lambda row: (row.behavioral_score, code_unit_key(row.model)))
    silent = [row.model for row in rows if not row.action_operations]
    for row in rows:
        if not row.action_operations:
            continue
        lines.append(
            f"| `{row.model}` | {row.action_operations} | {row.succeeded} | "
            f"{number(row.invocation_rejections_per_1k)} | {number(row.behavioral_score)} |"
        )
    if silent:
        lines += ["", f"Models without a structured call: {', '.join(f'`{m}`' for m in silent)}."]
    return lines


def proposal_lines(
    report: Report,
    traces: Sequence[Trace],
    observations: Sequence[ValueObservation],
    surface: dict[str, Any],
) -> list[str]:
    proposals = propose_entropy_reductions(report, traces, surface, None, observations)
    lines = ["Compiler proposals (`propose_entropy_reductions`, spec §5):", ""]
    if not proposals:
        lines.append("- none")
    for proposal in proposals:
        kind = proposal["kind"]
        if kind == "overload-split":
            clusters = "; ".join(
                f"{{{', '.join(cluster['keys'])}}} ×{cluster['calls']}"
                for cluster in proposal["clusters"]
            )
            lines.append(f"- overload-split `{proposal['ref']}`: {clusters}")
        elif kind in ("enum-tighten", "declare-enum"):
            values = ", ".join(js_string(value) for value in proposal["values"])
            lines.append(
                f"- {kind} `{proposal['ref']}.{proposal['key']}` → [{values}] "
                f"({proposal['calls']} calls)"
            )
        elif kind == "sequence-fuse":
            lines.append(
                f"- sequence-fuse {' → '.join(f'`{ref}`' for ref in proposal['sequence'])} "
                f"×{proposal['occurrences']}"
            )
        else:
            lines.append(
                f"- {kind} `{proposal['ref']}` ({proposal['failed']} of {proposal['calls']} "
                "calls failed)"
            )
    hints = enum_like(observations, surface)
    lines += [
        "",
        "Enum-like vocabularies on free parameters (§5.2 eligibility, no declared enum):",
        "",
    ]
    if not hints:
        lines.append("- none")
    for ref, key, total, ranked in hints[:6]:
        values = ", ".join(f"{js_string(value)} ×{count}" for value, count in ranked)
        lines.append(f"- `{ref}.{key}` ({total} values): {values}")
    multiplexers = [
        item for item in multiplexed(surface) if item[0] in {row.ref for row in report.refs}
    ]
    if multiplexers:
        lines += ["", "Called tools multiplexed by an enum parameter (split candidates):", ""]
        by_ref = {row.ref: row for row in report.refs}
        for ref, key, choices in multiplexers:
            row = by_ref[ref]
            lines.append(
                f"- `{ref}` by `{key}` ({choices} choices): {row.calls} calls, shape "
                f"{number(row.shape_entropy_bits)} bits"
            )
    return lines


def corpus_surface(root: Path, corpus: SessionCorpus) -> dict[str, Any]:
    """The surface a session corpus was recorded with (empty when none is recorded)."""
    surface_paths = [(REPO if corpus.bundled else root) / path for path in corpus.surfaces]
    if corpus.session_format == "toolbench":
        return toolbench_surface(surface_paths[0])
    if corpus.session_format == "tau-bench":
        return tau_bench_domain(surface_paths[0], "airline")
    return merged_surface(surface_paths)


def session_section(root: Path, corpus: SessionCorpus) -> list[str]:
    surface = corpus_surface(root, corpus)
    traces, observations, diagnostics, files = read_corpus(root, corpus, surface)
    report = measure(traces, surface, None, surface_hash(surface))
    lines = [
        f"## {corpus.name}",
        "",
        f"{corpus.title}: {files} files read as `{corpus.session_format}`, "
        f"{diagnostics.foreign_calls} calls. Surface: {corpus.surface_note}.",
        "",
        *freedom_lines(surface),
        *report_lines(report, traces),
        "",
        "Most called refs:",
        "",
        *top_refs_table(report),
        "",
        "Per model (lowest behavioral score first):",
        "",
        *model_table(report),
        "",
        *proposal_lines(report, traces, observations, surface),
    ]
    notes = list(corpus.notes)
    if corpus.name == "pi-sessions":
        newer = merged_surface([root / "pi-sessions/surface/pi-coding-agent-0.73.1.tools.json"])
        drifted, _, _, _ = read_corpus(root, corpus, newer)
        edit_stages = Counter(
            op.failure_stage
            for trace in drifted
            for op in trace.operations
            if op.ref == "pi.edit" and op.outcome == "failed"
        )
        shown = ", ".join(f"{stage} {count}" for stage, count in sorted(edit_stages.items()))
        notes.append(
            "Against Pi 0.73.1, where `edit` takes `edits[]` instead of `oldText`/`newText`, "
            f"the failed `pi.edit` calls classify as {shown} instead of invoke: the schema "
            "migration shows up as validate failures."
        )
    if notes:
        lines += ["", *(f"> {note}" for note in notes)]
    return [*lines, ""]


# -------------------------------------------------------------------------- surfaces


def surface_section(root: Path, corpus: SurfaceCorpus) -> list[str]:
    lines = [f"## {corpus.name}", "", f"{corpus.title} (surface only: no recorded calls).", ""]
    if corpus.name == "mcp-servers-tools-list":
        lines += [
            "| server | tools | total freedom | mean | worst tool | multiplexed tools |",
            "|---|---:|---:|---:|---|---:|",
        ]
        for path in sorted((root / corpus.name / "servers").glob("*.tools.json")):
            surface = load_surface(path)
            report = surface_freedom_report(surface)
            worst = report["actions"][0] if report["actions"] else None
            worst_text = f"`{worst['ref']}` {number(worst['freedom'])}" if worst else "-"
            lines.append(
                f"| {path.name.removesuffix('.tools.json')} | {len(surface['actions'])} | "
                f"{number(report['total'])} | {number(report['mean'])} | {worst_text} | "
                f"{len(multiplexed(surface))} |"
            )
        return [*lines, ""]
    for label, path in corpus.surfaces:
        surface = load_surface(root / path)
        lines += [f"### {label}", "", *freedom_lines(surface, worst=8)]
        found = multiplexed(surface)
        if found:
            freedom = {
                row["ref"]: row["freedom"] for row in surface_freedom_report(surface)["actions"]
            }
            found.sort(key=lambda item: (-item[2], code_unit_key(item[0])))
            shown = ", ".join(
                f"`{ref}` ({choices} {key}s, freedom {number(freedom[ref])})"
                for ref, key, choices in found
            )
            lines.append(f"- Split candidates, multiplexed by an enum parameter: {shown}")
        lines.append("")
    if corpus.name == "github-mcp-server-toolsnaps":
        lines += consolidation_lines(root / corpus.surfaces[0][1], root / corpus.surfaces[1][1])
    lines += [f"> {note}" for note in corpus.notes]
    return [*lines, ""]


def consolidation_lines(head_path: Path, removed_path: Path) -> list[str]:
    """Removed tools whose names are now ``method`` values of a multiplexed head tool."""
    head = load_surface(head_path)
    removed = {action["ref"] for action in load_surface(removed_path)["actions"]}
    absorbed: dict[str, list[str]] = {}
    for action in head["actions"]:
        properties = action["inputSchema"].get("properties", {})
        values = properties.get("method", {}).get("enum", []) if type(properties) is dict else []
        found = sorted((name for name in removed if name in values), key=code_unit_key)
        if found:
            absorbed[action["ref"]] = found
    total = sum(len(names) for names in absorbed.values())
    shown = "; ".join(
        f"`{ref}` ← {', '.join(f'`{name}`' for name in names)}" for ref, names in absorbed.items()
    )
    return [
        f"> {total} of the {len(removed)} removed tool names are now `method` values of the "
        f"head's multiplexed tools ({shown}): the split candidates above are tools the "
        "server once exposed separately.",
    ]


# ------------------------------------------------------------------------------ page


def page(root: Path) -> str:
    lines = [
        "# Real corpora",
        "",
        "Generated by `python bench/real_corpora.py` from the third-party corpora in "
        "`../shared/corpora` (each folder's README gives origin, license and counts). "
        "Do not edit by hand. Every figure comes from the readers in `docs/formats.md` and "
        "the metric v2 meter; the report hashes let anyone reproduce a row.",
        "",
        "How to read it: the **score** is the meter's corpus score (lower is better) over "
        "successful calls, split into the surface's share (**static**: the schemas' freedom "
        "for the refs actually called) and the **behavioral** share (shapes, failure stages, "
        "churn, flow). Failures carry a stage only where the log types it or where replaying "
        "the recorded arguments against the surface decides it (unknown tool → resolve, "
        "arguments the schema refuses → validate, otherwise invoke).",
        "",
        "The proposals are the v2 compiler's own. Two kinds of hint are added that v2 does "
        "not emit: *enum-like vocabularies* (free parameters whose recorded values pass the "
        "§5.2 thresholds but that declare no enum, so v2 drops them) and *multiplexed tools* "
        f"(a parameter named {', '.join(f'`{key}`' for key in MULTIPLEXER_KEYS)} with an "
        "enum selects the operation: a split candidate even before any call is recorded).",
        "",
    ]
    for corpus in SESSION_CORPORA:
        lines += session_section(root, corpus)
    for surface_corpus in SURFACE_CORPORA:
        lines += surface_section(root, surface_corpus)
    lines += [
        "## Samples of the agent and evaluation formats",
        "",
        "Small real samples kept in the repository's `tests/data` (Codex CLI, Gemini CLI, "
        "Inspect AI) and a trace recorded for it (OpenTelemetry GenAI); their READMEs give "
        "origin, licence and the hand-checked counts the tests assert.",
        "",
    ]
    for corpus in BUNDLED_CORPORA:
        lines += session_section(root, corpus)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpora", default=str(REPO.parent / "shared" / "corpora"))
    parser.add_argument("--out", default=str(REPO / "docs" / "real-corpora.md"))
    args = parser.parse_args(argv)
    root = Path(args.corpora)
    if not root.is_dir():
        print(f"no corpora at {root}", file=sys.stderr)
        return 2
    Path(args.out).write_text(page(root), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
