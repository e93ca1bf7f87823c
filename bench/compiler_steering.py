"""Compile every real third-party session corpus with and without the opt-in steering.

    python bench/compiler_steering.py [--corpora ../shared/corpora]

For each corpus of ``bench/real_corpora.py`` (read with its foreign reader, against the
surface it was recorded with) this runs ``pytest-entropy compile`` four ways: the
reference's default, ``--partial``, ``--min-gain 0.0001`` and both, and prints a Markdown
summary: the auto proposals with their own gains, what each variant did, and whether
``apply`` then ``freedom`` gives the effective surface's freedom. ``docs/compiler.md``
quotes its output; ``tests/corpora/test_compiler_steering.py`` pins the BFCL 2024 and
tau-bench results.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from real_corpora import (  # noqa: E402
    SESSION_CORPORA,
    SessionCorpus,
    merged_surface,
    tau_bench_domain,
    toolbench_surface,
)

from pytest_entropy.cli.app import main  # noqa: E402
from pytest_entropy.core.artifact import apply_compiled_surface  # noqa: E402
from pytest_entropy.core.fingerprint import surface_freedom_report  # noqa: E402
from pytest_entropy.core.jscompat import js_string  # noqa: E402
from pytest_entropy.ingest.surfaces import load_surface  # noqa: E402

AUTO = ("enum-tighten", "noise-quarantine")
VARIANTS = {
    "default": [],
    "--partial": ["--partial"],
    "--min-gain 0.0001": ["--min-gain", "0.0001"],
    "both": ["--partial", "--min-gain", "0.0001"],
}


def cli(*argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, json.loads(out.getvalue())


def surface_of(root: Path, corpus: SessionCorpus) -> dict[str, Any]:
    paths = [root / path for path in corpus.surfaces]
    if corpus.session_format == "toolbench":
        return toolbench_surface(paths[0])
    if corpus.session_format == "tau-bench":
        return tau_bench_domain(paths[0], "airline")
    return merged_surface(paths)


def label(proposal: dict[str, Any]) -> str:
    if proposal["kind"] == "enum-tighten":
        values = ", ".join(js_string(v) for v in proposal["values"])
        return f"enum-tighten `{proposal['ref']}.{proposal['key']}` → {{{values}}}"
    return f"noise-quarantine `{proposal['ref']}`"


def outcome_cell(result: dict[str, Any]) -> str:
    status = result["status"]
    parts = [status]
    if status == "compiled":
        parts.append(f"{len(result['artifact']['applied'])} applied")
    if result.get("dropped"):
        parts.append(f"{len(result['dropped'])} dropped")
    if result.get("skipped"):
        parts.append(f"{len(result['skipped'])} skipped")
    if "after" in result and status == "compiled":
        parts.append(
            f"score {js_string(result['report']['score'])} → {js_string(result['after']['score'])}"
        )
    return ", ".join(parts)


def corpus_section(root: Path, corpus: SessionCorpus, work: Path) -> list[str]:
    surface = surface_of(root, corpus)
    surface_file = work / f"{corpus.name}.surface.json"
    surface_file.write_text(json.dumps(surface), encoding="utf-8")
    base = [
        "compile", "--sessions", *(str(root / path) for path in corpus.sessions),
        "--format", corpus.session_format, "--surface", str(surface_file), "--json",
    ]  # fmt: skip
    results = {}
    for name, extra in VARIANTS.items():
        artifact = work / f"{corpus.name}.{len(results)}.json"
        _, results[name] = cli(*base, *extra, "--out", str(artifact))
        results[name]["_artifact"] = artifact
    _, explained = cli(*base, "--explain")
    auto = [p for p in explained["proposals"] if p["kind"] in AUTO]
    gains = {
        json.dumps(r.get("ref")) + str(r.get("key")): r.get("gain")
        for r in explained["explanations"]
    }
    lines = [f"### {corpus.name}", ""]
    if not auto:
        lines += ["No auto proposal: every variant converges.", ""]
        return lines
    lines += ["| auto proposal | own gain |", "|---|---:|"]
    for proposal in auto:
        gain = gains[json.dumps(proposal.get("ref")) + str(proposal.get("key"))]
        lines.append(f"| {label(proposal)} | {js_string(gain)} |")
    lines += ["", "| variant | outcome |", "|---|---|"]
    for name, result in results.items():
        lines.append(f"| {name} | {outcome_cell(result)} |")
    lines.append("")
    for name, result in results.items():
        for entry in result.get("dropped") or ():
            lines.append(f"- {name} dropped {entry['kind']} `{entry['ref']}`: {entry['reason']}")
    for name, result in results.items():
        if result["status"] != "compiled":
            continue
        effective_file = work / f"{corpus.name}.effective.json"
        with contextlib.redirect_stderr(io.StringIO()):
            cli_code = main(
                ["apply", "--surface", str(surface_file), "--artifact", str(result["_artifact"]),
                 "--out", str(effective_file)]
            )  # fmt: skip
        declared = load_surface(surface_file)
        artifact = json.loads(Path(result["_artifact"]).read_text(encoding="utf-8"))
        effective = surface_freedom_report(apply_compiled_surface(declared, artifact))
        applied = surface_freedom_report(load_surface(effective_file))
        verdict = "equal" if cli_code == 0 and applied == effective else "DIFFERENT"
        lines.append(
            f"- {name}: apply → freedom total {js_string(applied['total'])} (declared"
            f" {js_string(surface_freedom_report(declared)['total'])}); effective surface's:"
            f" {verdict}"
        )
    lines.append("")
    return lines


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", default=str(HERE.parent.parent / "shared" / "corpora"))
    args = parser.parse_args(argv)
    root = Path(args.corpora)
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as work:
        for corpus in SESSION_CORPORA:
            if not all((root / path).exists() for path in corpus.sessions):
                lines += [f"### {corpus.name}", "", "not found, skipped", ""]
                continue
            lines += corpus_section(root, corpus, Path(work))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
