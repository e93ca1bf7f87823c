"""Record every command's ``--help`` text and option table, to compare builds.

    python bench/cli_help.py --out before.json
    python bench/cli_help.py --out after.json
    python bench/cli_help.py --compare before.json after.json

A refactor of how the commands register their options must leave the grammar as it was:
for every command the rendered help (at a fixed width of 100 columns) and each option's
strings, destination, default, choices, whether it is required, its nargs, metavar, type
name and help text, in registration order. Two manifests that ``--compare`` finds equal
prove it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _action_row(action: argparse.Action) -> dict[str, Any]:
    kind = getattr(action.type, "__name__", None) if action.type is not None else None
    return {
        "class": type(action).__name__,
        "options": list(action.option_strings),
        "dest": action.dest,
        "default": repr(action.default),
        "choices": list(action.choices) if action.choices is not None else None,
        "required": action.required,
        "nargs": repr(action.nargs),
        "metavar": repr(action.metavar),
        "type": kind,
        "help": action.help,
    }


def _groups(parser: argparse.ArgumentParser) -> list[list[str]]:
    groups = getattr(parser, "_mutually_exclusive_groups", [])
    return [[action.dest for action in group._group_actions] for group in groups]


def help_manifest() -> dict[str, Any]:
    """``{command: {"help": text, "actions": [...], "groups": [...]}}`` for the top level
    (under ``""``) and every command."""
    os.environ["COLUMNS"] = "100"
    from pytest_entropy.cli.app import build_parser
    from tests.parser_support import command_parsers

    parser = build_parser()
    manifest: dict[str, Any] = {}
    for name, command in [("", parser), *command_parsers(parser).items()]:
        manifest[name] = {
            "help": command.format_help(),
            "actions": [_action_row(action) for action in command._actions],
            "groups": _groups(command),
        }
    return manifest


def _compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after.read_text(encoding="utf-8"))
    changed = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
    for name in changed:
        print(f"differs: {name or '(top level)'}")
    print(f"{len(old)} parsers before, {len(new)} after, {len(changed)} differ")
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the manifest here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        return _compare(*args.compare)
    text = json.dumps(help_manifest(), indent=1, sort_keys=True) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
