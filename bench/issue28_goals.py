"""The goals of issue 28 item 5 and how a benchmark run is judged against them (no timing here).

``bench/bench_commands.py --issue28`` measures; this module turns its measured numbers into
ratios and verdicts, renders the table and the JSON document, so the arithmetic can be tested
on numbers chosen by hand (``tests/unit/test_bench_issue28.py``).

- **Time**: each command's CPU seconds over the parse floor's CPU seconds timed beside it in
  the same run (best of the repeats of each), at most the goal of ``RATIO_GOALS``.
- **Memory**: each command's peak RSS, in its own process, at most ``RSS_GOALS_MB`` at every
  corpus size measured, and flat: the largest corpus's peak at most ``FLAT_TOLERANCE`` above
  the smallest's.
- **Linearity**: the command's CPU seconds on the whole corpus over those on a corpus
  ``LINEAR_FACTOR`` times smaller, within ``LINEAR_TOLERANCE`` of ``LINEAR_FACTOR``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COMMANDS = ("measure", "propose", "compile", "trial", "pool")
# ours / floor (issue 28 item 5)
RATIO_GOALS: dict[str, float] = {
    "measure": 0.5,
    "propose": 0.8,
    "compile": 1.2,
    "trial": 1.5,
    "pool": 0.8,
}
# "Today" in the issue (with the C kernels, quiet machine), ours / floor: on a real-call
# corpus of the kind, and on the generated one ("which flatters"), quoted beside our figures.
BEFORE: dict[str, dict[str, float]] = {
    "real-calls": {"measure": 2.4, "propose": 4.0, "compile": 4.8, "trial": 4.7, "pool": 2.6},
    "generated": {"measure": 1.2, "propose": 2.0, "compile": 2.6, "trial": 2.7, "pool": 2.0},
}
RSS_GOALS_MB: dict[str, float] = {
    "measure": 64.0,
    "propose": 64.0,
    "compile": 64.0,
    "trial": 96.0,
    "pool": 64.0,
}
MB = 1_000_000
FLAT_TOLERANCE = 0.10
LINEAR_FACTOR = 10
LINEAR_TOLERANCE = 0.15


def judge_ratio(command: str, seconds: float, floor_seconds: float) -> dict[str, Any]:
    """The command's time as a multiple of the floor's, its goal and whether it is met."""
    if floor_seconds <= 0:
        raise ValueError(f"the parse floor took {floor_seconds} s: nothing to compare with")
    ratio = seconds / floor_seconds
    goal = RATIO_GOALS[command]
    return {
        "seconds": seconds,
        "floor_seconds": floor_seconds,
        "ratio": ratio,
        "goal": goal,
        "passed": ratio <= goal,
    }


def judge_rss(command: str, peaks: Mapping[int, int]) -> dict[str, Any]:
    """Peak RSS in bytes per corpus size (files): every size under the goal, and flat."""
    if not peaks:
        raise ValueError(f"no peak RSS measured for {command}")
    goal = RSS_GOALS_MB[command]
    sizes = sorted(peaks)
    smallest, largest = peaks[sizes[0]] / MB, peaks[sizes[-1]] / MB
    within = all(peak / MB <= goal for peak in peaks.values())
    growth = largest / smallest - 1 if smallest > 0 else float("inf")
    flat = growth <= FLAT_TOLERANCE
    return {
        "peak_mb": {str(files): peaks[files] / MB for files in sizes},
        "goal_mb": goal,
        "within_goal": within,
        "growth": growth,
        "flat": flat,
        "passed": within and flat,
    }


def judge_linearity(
    small_seconds: float, large_seconds: float, factor: float = LINEAR_FACTOR
) -> dict[str, Any]:
    """Whether ``factor`` times the corpus took ``factor`` times as long, within the band."""
    if small_seconds <= 0:
        raise ValueError(f"the small corpus took {small_seconds} s: nothing to compare with")
    ratio = large_seconds / small_seconds
    low, high = factor * (1 - LINEAR_TOLERANCE), factor * (1 + LINEAR_TOLERANCE)
    return {
        "small_seconds": small_seconds,
        "large_seconds": large_seconds,
        "factor": factor,
        "ratio": ratio,
        "low": low,
        "high": high,
        "passed": low <= ratio <= high,
    }


def verdicts(results: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """Every judged goal of a run as (label, passed), corpus by corpus, in command order."""
    out = []
    for corpus, measured in results["corpora"].items():
        for command in COMMANDS:
            row = measured["commands"].get(command)
            if row is None:
                continue
            for part in ("time", "rss", "linearity"):
                if row.get(part) is not None:
                    out.append((f"{corpus} {command} {part}", bool(row[part]["passed"])))
    return out


def all_passed(results: Mapping[str, Any]) -> bool:
    """Whether every goal judged in ``results`` is met (false when nothing was judged)."""
    judged = verdicts(results)
    return bool(judged) and all(passed for _, passed in judged)


def _mark(passed: bool) -> str:
    return "pass" if passed else "FAIL"


def _peaks(rss: Mapping[str, Any]) -> list[tuple[int, float]]:
    """(files, MB) in increasing corpus size (a JSON round trip sorts the keys as text)."""
    return sorted((int(files), peak) for files, peak in rss["peak_mb"].items())


def _rss_sizes(measured: Mapping[str, Any]) -> str:
    for row in measured["commands"].values():
        if row.get("rss"):
            return " / ".join(str(files) for files, _ in _peaks(row["rss"]))
    return "–"


def table_lines(corpus: str, measured: Mapping[str, Any]) -> list[str]:
    """The Markdown table of one corpus's figures and verdicts."""
    floor = measured["floor"]
    lines = [
        f"{corpus}: {measured['summary']}",
        f"parse floor: {floor['cpu']:.3f} s CPU, {floor['wall']:.3f} s wall",
        "",
        "| command | CPU s | floor beside it (CPU s) | × floor | goal | time | wall × floor"
        f" | peak RSS (MB, {_rss_sizes(measured)} files) | RSS goal | memory"
        " | × time for 10× corpus | linear |",
        "| --- | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | :---: | ---: | :---: |",
    ]
    for command in COMMANDS:
        row = measured["commands"].get(command)
        if row is None:
            continue
        time = row["time"]
        rss = row.get("rss")
        linear = row.get("linearity")
        peaks = " / ".join(f"{peak:.0f}" for _, peak in _peaks(rss)) if rss else "–"
        linear_ratio = f"{linear['ratio']:.2f}" if linear else "–"
        lines.append(
            f"| {command} | {time['seconds']:.2f} | {time['floor_seconds']:.2f}"
            f" | {time['ratio']:.2f} | ≤ {time['goal']} | {_mark(time['passed'])}"
            f" | {row['wall_ratio']:.2f} | {peaks} | ≤ {RSS_GOALS_MB[command]:.0f}"
            f" | {_mark(rss['passed']) if rss else '–'}"
            f" | {linear_ratio}"
            f" | {_mark(linear['passed']) if linear else '–'} |"
        )
    return lines


def _met(values: list[bool]) -> str:
    return "**yes**" if values and all(values) else "no"


def docs_lines(runs: list[Mapping[str, Any]]) -> list[str]:
    """Markdown for ``docs/performance.md`` from the JSON of one or more runs: per corpus, each
    command's time ratio, peak RSS and linearity in every run, and whether each goal is met in
    all of them."""
    lines = []
    for run_index, run in enumerate(runs, 1):
        machine = run["machine"]
        start = " ".join(f"{load:.1f}" for load in machine["load_average_start"])
        end = " ".join(f"{load:.1f}" for load in machine.get("load_average_end", []))
        lines.append(
            f"- run {run_index}: {machine['date']}, commit {machine['commit'][:10]},"
            f" {machine['path']}, load average {start} at the start and {end} at the end"
        )
    for corpus in runs[0]["corpora"]:
        measured = [run["corpora"].get(corpus, {}) for run in runs]
        if any("commands" not in item for item in measured):
            continue
        sizes = _rss_sizes(measured[0])
        lines += [
            "",
            f"**{corpus}**: {measured[0]['summary']}; parse floor "
            + ", ".join(f"{item['floor']['cpu']:.2f}" for item in measured)
            + " s CPU.",
            "",
            "| command | × floor (CPU), by run | goal | met | the issue's today | peak RSS MB"
            f" ({sizes} files) | goal | flat, under goal | × time for 10× corpus | linear |",
            "| --- | ---: | ---: | :---: | ---: | ---: | ---: | :---: | ---: | :---: |",
        ]
        for command in COMMANDS:
            rows = [item["commands"].get(command) for item in measured]
            if any(row is None for row in rows):
                continue
            ratios = " / ".join(f"{row['time']['ratio']:.2f}" for row in rows)
            rss_rows = [row["rss"] for row in rows if row.get("rss")]
            linear_rows = [row["linearity"] for row in rows if row.get("linearity")]
            peaks = "; ".join(
                " / ".join(f"{peak:.0f}" for _, peak in _peaks(rss)) for rss in rss_rows
            )
            linear = " / ".join(f"{row['ratio']:.2f}" for row in linear_rows)
            lines.append(
                f"| {command} | {ratios} | ≤ {RATIO_GOALS[command]}"
                f" | {_met([row['time']['passed'] for row in rows])}"
                f" | {BEFORE.get(corpus, {}).get(command, '–')}"
                f" | {peaks or '–'} | ≤ {RSS_GOALS_MB[command]:.0f}"
                f" | {_met([rss['passed'] for rss in rss_rows]) if rss_rows else '–'}"
                f" | {linear or '–'}"
                f" | {_met([row['passed'] for row in linear_rows]) if linear_rows else '–'} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python bench/issue28_goals.py RUN.json...``: the Markdown of those runs for the docs."""
    import json
    import sys
    from pathlib import Path

    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python bench/issue28_goals.py bench/out/issue28-*.json", file=sys.stderr)
        return 2
    runs = [json.loads(Path(path).read_text(encoding="utf-8")) for path in paths]
    print("\n".join(docs_lines(runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
