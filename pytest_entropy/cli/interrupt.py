"""How a Ctrl-C ends the command line: one line on standard error and status 130.

Its own small module so that both the light entry point (``pytest_entropy.cli``) and the
command runner (``cli/app.py``) use it without importing each other.
"""

from __future__ import annotations

import sys

# typing costs a third of the interpreter's start-up; this module is on the path of
# `pytest-entropy --version` and of every pytest start (issue 32): its names are for mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["EXIT_INTERRUPTED", "INTERRUPTED_LINE", "interrupted"]

# The shell's status for a command ended by SIGINT (128 + 2).
EXIT_INTERRUPTED: Final = 130
INTERRUPTED_LINE: Final = "pytest-entropy: interrupted\n"


def interrupted() -> int:
    """Say so in one line and return :data:`EXIT_INTERRUPTED`."""
    try:
        sys.stderr.write(INTERRUPTED_LINE)
        sys.stderr.flush()
    except (OSError, ValueError, KeyboardInterrupt):  # a closed stream or a second Ctrl-C
        pass
    return EXIT_INTERRUPTED
