"""The opt-in compile flags (``--partial``, ``--only``, ``--exclude``, ``--min-gain``,
``--explain``) and ``--redact-values``, read back with their configuration twins."""

from __future__ import annotations

import argparse
import math
from typing import Any

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.steering import Steering
from pytest_entropy.state.config import add_command_flag, load_config

__all__ = [
    "add_explain_option",
    "add_redact_option",
    "add_steering_options",
    "explain_of",
    "min_gain_of",
    "redact_values_of",
    "steering_lines",
    "steering_of",
]


def add_steering_options(parser: argparse.ArgumentParser) -> None:
    """``--partial``, ``--only``, ``--exclude``, ``--min-gain`` and ``--explain``."""
    for name in ("partial", "only", "exclude", "min-gain"):
        add_command_flag(parser, name)
    add_explain_option(parser)


def add_explain_option(parser: argparse.ArgumentParser) -> None:
    add_command_flag(parser, "explain")


def add_redact_option(parser: argparse.ArgumentParser) -> None:
    add_command_flag(parser, "redact-values")


def _config_value(args: argparse.Namespace, name: str) -> Any:
    return getattr(load_config(getattr(args, "cwd", None) or None), name)


def explain_of(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "explain", None))


def redact_values_of(args: argparse.Namespace) -> bool:
    """``--redact-values``, else ``redact-values`` of the project configuration."""
    given = getattr(args, "redact_values", None)
    if given is not None:
        return bool(given)
    return bool(_config_value(args, "redact_values"))


def min_gain_of(text: str | None) -> float | None:
    """``--min-gain X`` as a finite number (``None`` when not given)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise EntropyInputError(f"--min-gain must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise EntropyInputError(f"--min-gain must be a finite number, not {text!r}")
    return value


def steering_of(args: argparse.Namespace) -> Steering | None:
    """The steering the flags (and ``partial`` of the configuration) ask for; ``None``
    when nothing is asked, so the compile is the reference's own code path."""
    partial = args.partial
    if partial is None:
        partial = bool(_config_value(args, "partial"))
    steering = Steering(
        partial=bool(partial),
        only=tuple(args.only or ()),
        exclude=tuple(args.exclude or ()),
        min_gain=min_gain_of(args.min_gain),
        explain=explain_of(args),
    )
    return None if steering == Steering() else steering


def steering_lines(result: dict[str, Any]) -> list[str]:
    """Human lines for what steering left out and the explanations."""
    lines = []
    for entry in result.get("dropped") or ():
        lines.append(f"dropped: {_label(entry)} · {entry['reason']}")
    for entry in result.get("skipped") or ():
        lines.append(f"skipped: {_label(entry)} · {entry['reason']}")
    for entry in result.get("explanations") or ():
        lines.append(f"explain: {entry['kind']} {entry['text']}")
    return lines


def _label(entry: dict[str, Any]) -> str:
    name = entry["ref"] + (f".{entry['key']}" if "key" in entry else "")
    return f"{entry['kind']} {name}"
