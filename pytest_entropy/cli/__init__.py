"""The ``pytest-entropy`` command line (console script ``pytest_entropy.cli:console_main``).

This module stays light on purpose: :func:`main` catches a Ctrl-C (``KeyboardInterrupt``)
before it imports the commands, their libraries and the parser, which takes the first second
or two of every run. An interrupt then ends the run with status 130 and one line, not with a
traceback from inside an import (issue 26, item 16).

:func:`console_main` is what the console script and ``python -m pytest_entropy`` call: the
same run, then the objects still alive are handed to the collector's permanent generation
(``gc.freeze``) so the interpreter's exit does not walk them all once more, which was a
tenth of a demo ``measure`` (issue 32). Library callers and tests call :func:`main`, which
leaves the collector as it found it.
"""

from __future__ import annotations

import gc
import sys

from pytest_entropy.cli.interrupt import EXIT_INTERRUPTED, interrupted

TYPE_CHECKING = False  # typing is not imported on the way to --version (issue 32)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from pytest_entropy.cli.app import build_parser

__all__ = ["EXIT_INTERRUPTED", "build_parser", "console_main", "interrupted", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never calls ``sys.exit``)."""
    try:
        if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
            # The one-word form needs no grammar: answered before argparse is imported.
            from pytest_entropy.cli.version import version_text
            from pytest_entropy.report.encoding import degrade_stream

            degrade_stream(sys.stdout)
            sys.stdout.write(version_text() + "\n")
            return 0
        from pytest_entropy.cli.app import main as run

        return run(argv)
    except KeyboardInterrupt:
        return interrupted()


def console_main() -> int:
    """:func:`main` for a process that ends with it: the console script's entry point.

    Every file a command writes is closed by the command itself before it returns, so
    leaving the survivors to the process's end loses nothing."""
    status = main()
    gc.freeze()
    return status


def __getattr__(name: str) -> Any:
    if name == "build_parser":  # the grammar loads every command: only when asked for
        from pytest_entropy.cli import app

        return app.build_parser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
