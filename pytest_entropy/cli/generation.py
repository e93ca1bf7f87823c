"""``--metric-version 2|3`` on the commands, and the state directory's generation check.

Every command that measures, proposes, compiles, trials, pools, imports or certifies takes
``--metric-version`` (or ``metric-version`` in ``[tool.entropy]``, or the environment's
``PYTEST_ENTROPY_METRIC_VERSION``): 2, the default, is the reference; 3 is the upstream's
current generation (docs/metric-v3.md).
What this build cannot do in v3 yet refuses with exit 2 (:func:`refuse_unavailable`) rather
than quietly running v2, and a command never mixes the generations in one state directory
(:mod:`pytest_entropy.state.generation`).
"""

from __future__ import annotations

import argparse

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.state.config import add_command_flag
from pytest_entropy.state.generation import check_generation, record_generation
from pytest_entropy.state.values import metric_version_value

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "add_metric_version_option",
    "check_state_generation",
    "metric_version_of",
    "record_state_generation",
    "refuse_unavailable",
]


def add_metric_version_option(parser: argparse.ArgumentParser) -> None:
    """``--metric-version 2|3`` (the shared flag of ``state/config.py``)."""
    add_command_flag(parser, "metric-version")


def metric_version_of(args: argparse.Namespace) -> int:
    """The generation the command runs: ``--metric-version`` or its configured value, else 2."""
    value = getattr(args, "metric_version", None)
    if value is None:
        return 2
    if type(value) is int and value in (2, 3):
        return value
    try:  # a configured value that did not come through argparse's type
        return metric_version_value(str(value))
    except argparse.ArgumentTypeError as error:
        raise EntropyInputError(f"metric-version {error}") from None


def refuse_unavailable(args: argparse.Namespace, command: str) -> None:
    """Exit 2 for ``--metric-version 3`` on a command whose v3 this build does not have yet,
    rather than silently running v2."""
    if metric_version_of(args) == 3:
        raise EntropyInputError(
            f"--metric-version 3 is not available yet for `{command}` (metric v3's compiler,"
            " trial, federation merge and certification list are still to come; see"
            " docs/metric-v3.md); run it with --metric-version 2, the default"
        )


def check_state_generation(args: argparse.Namespace, state_dir: str | Path) -> int:
    """The command's generation, after checking ``state_dir`` holds no state of the other
    one (exit 2 naming the directory otherwise)."""
    version = metric_version_of(args)
    check_generation(state_dir, version)
    return version


def record_state_generation(args: argparse.Namespace, state_dir: str | Path) -> None:
    """Mark ``state_dir`` as holding the command's generation (a v2 command writes nothing)."""
    record_generation(state_dir, metric_version_of(args))
