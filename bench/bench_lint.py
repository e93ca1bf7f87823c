"""How long ``lint`` takes on 1,000 tools (printed; not a timed test).

    python bench/bench_lint.py [--corpora ../shared/corpora] [--repeat 5]

Two surfaces of 1,000 tools each: the 370 real tools of ``mcp-servers-tools-list`` repeated
under new names, and 1,000 generated tools (a few typed, described parameters each, as a
code generator writes them). Each is linted with the hygiene and size rules alone and with
all four provider profiles; the best of ``--repeat`` runs is printed (wall clock and the
process's CPU time, which a machine shared with other jobs inflates less), after one cold
run (which includes importing jsonschema and building its meta-schema validators).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    from pytest_entropy.core.lint import LintOptions, lint_surface
    from pytest_entropy.sources.lint_profiles import load_profiles, profile_names

    profiles = load_profiles(profile_names())
    options = LintOptions(max_tools=2000)
    surfaces = {
        "real (370 MCP tools, repeated)": real_tools(args.corpora, 1000),
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
            for _ in range(args.repeat):
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
