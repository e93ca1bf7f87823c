"""The command line's exit statuses, in a module of their own so the light start-up path
(``--help``, ``--version``) names them without importing the commands' shared helpers."""

from __future__ import annotations

# typing costs a third of the interpreter's start-up; this module is on the path of
# `pytest-entropy --version` and of every pytest start (issue 32): its names are for mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["EXIT_FAILED", "EXIT_INTERNAL", "EXIT_OK", "EXIT_USAGE"]

EXIT_OK: Final = 0  # ok
EXIT_FAILED: Final = 1  # a gate or check failed
EXIT_USAGE: Final = 2  # usage or input error
EXIT_INTERNAL: Final = 3  # an internal error (a bug, never the user's mistake)
