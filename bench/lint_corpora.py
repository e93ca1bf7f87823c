"""Lint the real MCP surfaces and write the findings tables into ``docs/lint.md``.

    python bench/lint_corpora.py [--corpora ../shared/corpora] [--doc docs/lint.md]

The 27 servers of ``mcp-servers-tools-list`` and the GitHub MCP server's toolsnaps (``head/``)
are linted with the hygiene and size rules (default thresholds) and with every shipped
provider profile. The tables (counts per rule and server) replace what stands between the
``lint-corpora`` markers of the page; the output has no timestamps or paths, so the same
corpora give the same page. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from pytest_entropy.core.lint import RULES, Finding, lint_surface  # noqa: E402
from pytest_entropy.ingest.surfaces import load_surface  # noqa: E402
from pytest_entropy.sources.lint_profiles import load_profiles, profile_names  # noqa: E402

START = "<!-- lint-corpora:start -->"
END = "<!-- lint-corpora:end -->"


def _surfaces(corpora: Path) -> list[tuple[str, Path, str]]:
    servers = sorted((corpora / "mcp-servers-tools-list" / "servers").glob("*.tools.json"))
    found = [(path.name.removesuffix(".tools.json"), path, "mcp") for path in servers]
    found.append(
        (
            "github-mcp-server (toolsnaps head)",
            corpora / "github-mcp-server-toolsnaps" / "head",
            "mcp",
        )
    )
    return found


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def build(corpora: Path) -> list[str]:
    profiles = load_profiles(profile_names())
    hygiene_ids = [rule.id for rule in RULES]
    results: list[tuple[str, int, list[Finding]]] = []
    for name, path, surface_format in _surfaces(corpora):
        surface = load_surface(path, surface_format=surface_format, descriptions=True)
        results.append((name, len(surface["actions"]), lint_surface(surface, profiles)))
    lines = [START, ""]
    used = [rule for rule in hygiene_ids if any(f.rule == rule for _, _, fs in results for f in fs)]
    rows = []
    totals: Counter[str] = Counter()
    for name, tools, findings in results:
        counts = Counter(f.rule for f in findings)
        totals.update({rule: counts[rule] for rule in used})
        rows.append([f"`{name}`", str(tools), *(str(counts[rule] or "") for rule in used)])
    rows.append(
        ["**all**", str(sum(tools for _, tools, _ in results)), *(f"**{totals[r]}**" for r in used)]
    )
    lines += ["### Hygiene and size rules (findings per server)", ""]
    lines += _table(["server", "tools", *(f"`{rule}`" for rule in used)], rows)
    lines += ["", "Rules of the catalogue with no finding on these surfaces: "]
    lines[-1] += ", ".join(f"`{rule}`" for rule in hygiene_ids if rule not in used) + "."
    lines += ["", "### Provider profiles (tools with at least one error / error findings)", ""]
    rows = []
    for name, tools, findings in results:
        row = [f"`{name}`", str(tools)]
        for profile in profiles:
            mine = [f for f in findings if f.profile == profile.id]
            row.append(f"{len({f.ref for f in mine})} / {len(mine)}")
        rows.append(row)
    lines += _table(["server", "tools", *(f"`{p.id}`" for p in profiles)], rows)
    lines += ["", "### Provider rules (findings over all surfaces)", ""]
    per_rule = Counter((f.profile, f.rule) for _, _, fs in results for f in fs if f.profile)
    servers_per_rule = Counter(
        (f.profile, f.rule)
        for name, _, fs in results
        for f in {(x.profile, x.rule): x for x in fs if x.profile}.values()
    )
    rows = []
    for profile in profiles:
        for rule in profile.rules:
            key = (profile.id, rule.id)
            rows.append(
                [f"`{profile.id}`", f"`{rule.id}`", str(per_rule[key]), str(servers_per_rule[key])]
            )
    lines += _table(["profile", "rule", "findings", "surfaces"], rows)
    lines += ["", END]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--doc", type=Path, default=REPO / "docs" / "lint.md")
    args = parser.parse_args()
    block = "\n".join(build(args.corpora))
    text = args.doc.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{args.doc} has no {START} ... {END} block")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    args.doc.write_text(before + block + after, encoding="utf-8")
    print(block)


if __name__ == "__main__":
    main()
