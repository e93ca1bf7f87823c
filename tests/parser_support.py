"""The command-line grammar as the tests and ``bench/cli_help.py`` walk it."""

from __future__ import annotations

import argparse

from pytest_entropy.cli.app import build_parser


def command_parsers(
    parser: argparse.ArgumentParser | None = None,
) -> dict[str, argparse.ArgumentParser]:
    """Each command's sub-parser by name, in registration order (of ``parser``, by default
    a fresh :func:`~pytest_entropy.cli.app.build_parser`)."""
    for action in (parser or build_parser())._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no sub-commands")
