"""The value checks behind the settings and flags (:mod:`pytest_entropy.state.config`):
seconds, counts and fsspec storage options, each refused with a message that never repeats
a value that may be a secret."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from pytest_entropy.core.errors import EntropyInputError

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["metric_version_value", "positive_int", "positive_seconds", "storage_options_value"]


def positive_seconds(value: Any, name: str, source: str) -> float:
    """A number of seconds above zero (``scheduler-timeout``), as a float."""
    if type(value) not in (int, float) or not 0 < value < float("inf"):
        raise EntropyInputError(f"{name} must be a positive number of seconds", source=source)
    return float(value)


def storage_options_value(value: Any, name: str, source: str) -> dict[str, Any]:
    """fsspec storage options: a mapping (a TOML table, a YAML or JSON object) with string
    keys. The message on a wrong value never repeats the value: it may hold a secret."""
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise EntropyInputError(
            f"{name} must be a table of fsspec storage options (string keys)", source=source
        )
    return dict(value)


def positive_int(text: str) -> int:
    """argparse's type of a count of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def metric_version_value(text: str) -> int:
    """argparse's type of ``--metric-version``: the generation 2 (the reference) or 3."""
    value = text.strip() if isinstance(text, str) else text
    if value not in ("2", "3"):
        raise argparse.ArgumentTypeError(f"must be 2 or 3, not {str(text)[:20]!r}")
    return int(value)
