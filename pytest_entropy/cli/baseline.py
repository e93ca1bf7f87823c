"""The ratchet's command-line side: ``--baseline FILE``, ``--update-baseline`` and
``--size-factor`` on ``measure`` (the corpus entry) and ``freedom`` (the surface entry),
and the exit status a baseline check gives (:func:`pytest_entropy.testing.ratchet.check_baseline`
does the checking)."""

from __future__ import annotations

from pytest_entropy.ingest.paths import as_path
from pytest_entropy.report.names import terminal_line

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "CORPUS_ENTRY",
    "SURFACE_ENTRY",
    "add_baseline_options",
    "baseline_exit_status",
    "size_factor_of",
]

CORPUS_ENTRY: Final = "corpus"
# The entry `pytest-entropy freedom --baseline` keeps the surface under (the freedom ratchet).
SURFACE_ENTRY: Final = "surface"


def add_baseline_options(parser: Any) -> None:
    """``--baseline FILE`` and ``--update-baseline`` (the ``measure`` command's ratchet)."""
    from pytest_entropy.state.config import add_cli_option

    add_cli_option(parser, "baseline")
    add_cli_option(parser, "update")
    add_cli_option(parser, "size-factor")


def baseline_exit_status(args: Any, report: Any, out: Any, entry: str | None = None) -> int:
    """Check ``report`` against ``--baseline`` (entry ``corpus``, or ``entry``; a surface
    for ``freedom``'s entry ``surface``): 1 on a rise or a loosening, else 0.

    The verdict goes to ``out``, or to stderr when ``--json`` keeps stdout machine-readable.
    """
    import sys

    from pytest_entropy.core.errors import EntropyInputError
    from pytest_entropy.state.config import is_ci

    path = getattr(args, "entropy_baseline", None)
    if path is None:
        if getattr(args, "entropy_update", False):
            raise EntropyInputError("--update-baseline needs --baseline FILE")
        return 0
    # The ratchet (surface diffs, freedom reports) loads only for a run that has a baseline.
    from pytest_entropy.testing.ratchet import check_baseline

    result = check_baseline(
        as_path(path),
        entry or CORPUS_ENTRY,
        report,
        update=bool(args.entropy_update),
        ci=is_ci(),
        update_hint="--update-baseline",
        size_factor=size_factor_of(args),
    )
    stream = sys.stderr if getattr(args, "json", False) else out
    for line in result.lines():
        stream.write(terminal_line(line) + "\n")
    return 0 if result.passed else 1


def size_factor_of(args: Any) -> float | None:
    """``--size-factor`` checked (at least 1), else exit 2."""
    from pytest_entropy.core.errors import EntropyInputError
    from pytest_entropy.state.settings import factor_value

    value = getattr(args, "entropy_size_factor", None)
    if value is None:
        return None
    try:
        return factor_value(value, "--size-factor")
    except ValueError as error:
        raise EntropyInputError(str(error)) from None
