"""How long ``lint`` takes on 1,000 tools, and how every output format scales (printed; not
a timed test).

    python bench/bench_lint.py [--corpora ../shared/corpora] [--repeat 5]
                               [--scale 2000] [--scale-repeat 3] [--part all|rules|formats]

Two surfaces of 1,000 tools each: the 370 real tools of ``mcp-servers-tools-list`` repeated
under new names, and 1,000 generated tools (a few typed, described parameters each, as a
code generator writes them). Each is linted with the hygiene and size rules alone and with
all four provider profiles; the best of ``--repeat`` runs is printed (wall clock and the
process's CPU time, which a machine shared with other jobs inflates less), after one cold
run (which includes importing jsonschema and building its meta-schema validators).

The formats part writes two generated MCP ``tools/list`` files of ``--scale`` and ten times as
many tools, shaped as an OpenAPI generator writes them (every tool carries the same
catalogue of ``$defs`` and references one entry; undescribed parameters give every tool
findings), and runs the whole command (``pytest-entropy lint --surface F --output-format X``,
in this process) in every output format on both, the formats interleaved in each of
``--scale-repeat`` rounds. It prints each format's best CPU and wall time, its time against
the text format's at each size, and its 10x ratio (the time on 10N tools over the time on N:
10 for a linear command, 100 for a quadratic one).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))


def real_tools(corpora: Path, count: int) -> list[dict[str, Any]]:
    tools = []
    for path in sorted((corpora / "mcp-servers-tools-list" / "servers").glob("*.tools.json")):
        tools.extend(json.loads(path.read_text(encoding="utf-8"))["tools"])
    out = []
    for index in range(count):
        tool = tools[index % len(tools)]
        out.append(
            {
                "ref": f"t{index}_{tool['name']}"[:64],
                "inputSchema": tool["inputSchema"],
                "description": tool.get("description"),
            }
        )
    return out


def generated_tools(count: int) -> list[dict[str, Any]]:
    kinds = ["string", "integer", "boolean", "number"]
    out = []
    for index in range(count):
        properties = {
            f"arg{n}": {
                "type": kinds[(index + n) % 4],
                "description": f"argument {n} of tool {index}",
            }
            for n in range(1 + index % 6)
        }
        if index % 5 == 0:
            properties["mode"] = {"type": "string", "enum": ["fast", "safe", f"m{index}"]}
        out.append(
            {
                "ref": f"tool_{index}",
                "description": f"Tool number {index}.",
                "inputSchema": {
                    "type": "object",
                    "properties": properties,
                    "required": sorted(properties)[:1],
                },
            }
        )
    return out


FORMATS = ("text", "json", "sarif", "markdown")


def openapi_like_tools(count: int) -> list[dict[str, Any]]:
    """MCP tools as an OpenAPI generator writes them: each carries all eight definitions of
    the catalogue and references one; some parameters and definition members undescribed."""
    catalogue = {
        f"Model{index}": {
            "type": "object",
            "description": f"component {index}",
            "properties": {
                "id": {"type": "string"},
                "kind": {"type": "string", "enum": [f"k{index}"]},
                "note": {"type": "string", "description": "a note"},
            },
            "required": ["id"],
        }
        for index in range(8)
    }
    out = []
    for index in range(count):
        properties: dict[str, Any] = {
            f"arg{n}": {"type": ["string", "integer", "boolean"][n % 3]}
            if n % 2
            else {"type": "string", "description": f"argument {n}"}
            for n in range(1 + index % 6)
        }
        properties["body"] = {"$ref": f"#/$defs/Model{index % 6}", "description": "the body"}
        out.append(
            {
                "name": f"api_operation_{index}",
                "description": f"Operation {index} of the API.",
                "inputSchema": {
                    "type": "object",
                    "properties": properties,
                    "required": ["body"],
                    "$defs": catalogue,
                },
            }
        )
    return out


def _run_lint(argv: list[str]) -> tuple[float, float, int]:
    """Wall and CPU seconds of one in-process ``pytest-entropy lint`` run, and the bytes it
    printed."""
    import contextlib
    import io

    from pytest_entropy.cli.app import main as cli_main

    out = io.StringIO()
    begin, begin_cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out):
        cli_main(["lint", *argv])
    return time.perf_counter() - begin, time.process_time() - begin_cpu, len(out.getvalue())


def scaling(scale: int, repeat: int) -> None:
    """Every output format on N and 10N generated tools (see the module's docstring)."""
    import tempfile

    sizes = (scale, 10 * scale)
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for size in sizes:
            path = Path(folder) / f"tools-{size}.json"
            path.write_text(json.dumps({"tools": openapi_like_tools(size)}, indent=2))
            paths[size] = str(path)
        common = ["--max-tools", str(10 * scale + 1)]
        _run_lint(["--surface", paths[sizes[0]], *common])  # imports and caches, untimed
        best: dict[tuple[str, int], tuple[float, float, int]] = {}
        for _ in range(repeat):
            for size in sizes:
                for output in FORMATS:
                    argv = ["--surface", paths[size], "--output-format", output, *common]
                    wall, cpu, size_out = _run_lint(argv)
                    old = best.get((output, size))
                    if old is None or cpu < old[1]:
                        best[(output, size)] = (wall, cpu, size_out)
    small, large = sizes
    print(
        f"\nevery output format on {small} and {large} generated tools (best CPU of {repeat},"
        " wall in parentheses)"
    )
    print(
        f"{'format':10} {f'{small} tools':>18} {f'{large} tools':>18} {'10x ratio':>10}"
        f" {'vs text':>8} {'vs text':>8} {'output':>10}"
    )
    for output in FORMATS:
        s_wall, s_cpu, _ = best[(output, small)]
        l_wall, l_cpu, l_bytes = best[(output, large)]
        small_time, large_time = f"{s_cpu:.2f} s ({s_wall:.2f})", f"{l_cpu:.2f} s ({l_wall:.2f})"
        print(
            f"{output:10} {small_time:>18} {large_time:>18}"
            f" {l_cpu / s_cpu:>10.1f} {s_cpu / best[('text', small)][1]:>7.2f}x"
            f" {l_cpu / best[('text', large)][1]:>7.2f}x {l_bytes / 1e3:>9,.0f} KB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scale", type=int, default=2000, help="N of the formats part")
    parser.add_argument("--scale-repeat", type=int, default=3)
    parser.add_argument("--part", choices=("all", "rules", "formats"), default="all")
    args = parser.parse_args()
    if args.part != "formats":
        rules(args.corpora, args.repeat)
    if args.part != "rules":
        scaling(args.scale, args.scale_repeat)


def rules(corpora: Path, repeat: int) -> None:
    """The rules alone on two surfaces of 1,000 tools, without and with the profiles."""
    started = time.perf_counter()
    from pytest_entropy.core.lint import LintOptions, lint_surface
    from pytest_entropy.sources.lint_profiles import load_profiles, profile_names

    profiles = load_profiles(profile_names())
    options = LintOptions(max_tools=2000)
    surfaces = {
        "real (370 MCP tools, repeated)": real_tools(corpora, 1000),
        "generated": generated_tools(1000),
    }
    first = True
    for label, actions in surfaces.items():
        surface = {"version": 1, "actions": actions}
        for with_profiles in (False, True):
            chosen = profiles if with_profiles else []
            if first:
                lint_surface(surface, chosen, options)
                print(f"cold first run (imports included): {time.perf_counter() - started:.3f} s")
                first = False
            best = cpu = float("inf")
            findings = 0
            for _ in range(repeat):
                begin, begin_cpu = time.perf_counter(), time.process_time()
                findings = len(lint_surface(surface, chosen, options))
                best = min(best, time.perf_counter() - begin)
                cpu = min(cpu, time.process_time() - begin_cpu)
            scope = "hygiene+size+4 profiles" if with_profiles else "hygiene+size"
            print(
                f"{label:32} {scope:24} 1000 tools  wall {best:.3f} s  cpu {cpu:.3f} s"
                f"  ({findings} findings)"
            )


if __name__ == "__main__":
    main()
