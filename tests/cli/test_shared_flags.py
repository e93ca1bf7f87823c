"""Flags several commands share are defined once, in state/config.py's table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest_entropy
from pytest_entropy.state.config import COMMAND_FLAGS, OPTIONS
from tests.parser_support import command_parsers

CLI = Path(pytest_entropy.__file__).parent / "cli"
SHARED = {entry.flag for entry in COMMAND_FLAGS.values()}


def test_no_command_spells_a_shared_flag_itself() -> None:
    spelled = re.compile(r"add_argument\(\s*\"(--[a-z-]+)\"")
    found = [
        f"{path.name}: {flag}"
        for path in sorted(CLI.rglob("*.py"))
        for flag in spelled.findall(path.read_text(encoding="utf-8"))
        if flag in SHARED
    ]
    assert found == []


def test_every_command_takes_the_shared_flags_from_the_table() -> None:
    commands = command_parsers()
    seen: dict[str, set[str]] = {}
    for name, parser in commands.items():
        for action in parser._actions:
            for flag in action.option_strings:
                if flag not in SHARED:
                    continue
                seen.setdefault(flag, set()).add(name)
                entries = [e for e in COMMAND_FLAGS.values() if e.flag == flag]
                if flag == "--sessions" and name == "certify":
                    # The certification corpus: the pytest table's option, one DIR.
                    certify_option = next(o for o in OPTIONS if o.bare_flag == flag)
                    assert (action.metavar, action.nargs) == (certify_option.metavar, None)
                    continue
                if any(e.action == "store_true" for e in entries):
                    # A switch of the table: no value, "not given" left to the configuration.
                    assert (action.nargs, action.default) == (0, None), (name, flag)
                    continue
                assert action.metavar in {e.metavar for e in entries}, (name, flag)
                many = {e.many for e in entries if e.metavar == action.metavar}
                assert many == {action.nargs == "+"}, (name, flag)
    assert {"measure", "compile", "trial", "propose", "pool", "status", "watch", "convert"} <= seen[
        "--sessions"
    ]
    assert commands["status"].parse_args(["--sessions", "d"]).sessions == "d"
    assert commands["measure"].parse_args(["--sessions", "a", "b"]).sessions == ["a", "b"]
