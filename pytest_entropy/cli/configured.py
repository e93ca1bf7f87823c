"""The project configuration applied to every command's arguments.

:func:`main` parses the command line, then fills every argument the user did not give from
the configured settings (``PYTEST_ENTROPY_<KEY>``, ``[tool.entropy]``, ``entropy.yml``; see
:mod:`pytest_entropy.state.settings`): a setting ``state-dir`` fills the argument whose
``dest`` is ``state_dir`` (or the certification's ``entropy_state_dir``) when the command has
one. A flag the command line gave always wins, and so does any flag of the same mutually
exclusive group (``--sessions`` given: a configured ``agent-dir`` is not applied). A required
flag the configuration provides is not required on the command line.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.state.settings import Resolved, configured_settings

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ConfiguredArguments", "prepare"]

# Read only where they are used (the storage options only for session URLs), never
# written into the arguments.
_NOT_ARGUMENTS = frozenset({"storage-options", "compile", "poll-ms", "window"})
_UNSET = object()
# Flags that name the same input another way, beside argparse's exclusive groups: a
# configured surface does not apply when `export --mcp` or `--mcp-url` lists a server.
_ALTERNATIVES = {"surface": ("mcp", "mcp_url")}


class _UnsetList(list["Any"]):
    """The unset marker of repeatable flags (``append`` copies and extends it)."""


def _action_for(parser: argparse.ArgumentParser, key: str) -> argparse.Action | None:
    dest = key.replace("-", "_")
    by_dest = {action.dest: action for action in parser._actions if action.option_strings}
    return by_dest.get(dest) or by_dest.get("entropy_" + dest)


def _cwd_of(argv: Sequence[str]) -> str | None:
    """``--cwd DIR`` before parsing (the project whose configuration applies)."""
    for position, word in enumerate(argv):
        if word == "--cwd" and position + 1 < len(argv):
            return argv[position + 1]
        if word.startswith("--cwd="):
            return word.partition("=")[2]
    return None


class ConfiguredArguments:
    """The settings one command will take from the configuration."""

    def __init__(
        self, parser: argparse.ArgumentParser, argv: Sequence[str], settings: Mapping[str, Resolved]
    ) -> None:
        self.parser = parser
        self.argv = list(argv)
        self.actions: dict[str, tuple[argparse.Action, Resolved]] = {}
        for key, resolved in settings.items():
            if key in _NOT_ARGUMENTS:
                continue
            action = _action_for(parser, key)
            if action is not None:
                self.actions[key] = (action, resolved)
        # A flag the configuration provides need not be given.
        for action, _resolved in self.actions.values():
            action.required = False
        for group in parser._mutually_exclusive_groups:
            if any(action in group._group_actions for action, _ in self.actions.values()):
                group.required = False

    def _given(self) -> set[str]:
        """The ``dest`` of every flag the command line gave."""
        markers: dict[str, Any] = {}
        for action in self.parser._actions:
            if isinstance(action, argparse._AppendAction | argparse._ExtendAction):
                markers[action.dest] = _UnsetList()
            elif action.dest and not isinstance(action, argparse._CountAction):
                markers[action.dest] = _UNSET
        parsed, _rest = self.parser.parse_known_args(self.argv, argparse.Namespace(**markers))
        return {
            dest
            for dest, value in vars(parsed).items()
            if value is not _UNSET and not (isinstance(value, _UnsetList) and not value)
        }

    def apply(self, args: argparse.Namespace) -> dict[str, str]:
        """Fill ``args``; returns ``{dest: source}`` of what the configuration gave."""
        if not self.actions:
            return {}
        given = self._given()
        filled: dict[str, str] = {}
        exclusive = [group._group_actions for group in self.parser._mutually_exclusive_groups]
        # Highest level first, so in an exclusive group the stronger source wins.
        rank = {"environment": 0, "pyproject": 1, "yaml": 2}
        # (On a tie an agent directory wins over sessions, as watch always chose.)
        ordered = sorted(
            self.actions.items(),
            key=lambda item: (rank.get(item[1][1].level, 3), item[0] != "agent-dir"),
        )
        for key, (action, resolved) in ordered:
            if action.dest in given:
                continue
            if any(getattr(args, dest, None) for dest in _ALTERNATIVES.get(key, ())):
                continue
            rivals = [member for group in exclusive if action in group for member in group]
            if any(member.dest in given or member.dest in filled for member in rivals):
                continue
            setattr(args, action.dest, _argument_value(key, action, resolved))
            filled[action.dest] = resolved.source
        return filled


def _argument_value(key: str, action: argparse.Action, resolved: Resolved) -> Any:
    value = resolved.value
    source = resolved.source
    if action.nargs == 0:  # store_true / store_false
        if type(value) is not bool:
            raise EntropyInputError(f"{key} must be true or false", source=source)
        return value if action.const is True else not value
    many = action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction)
    items = list(value) if isinstance(value, list | tuple) else [value]
    if not many and len(items) != 1:
        raise EntropyInputError(
            f"{key}: this command takes one value, got {len(items)}", source=source
        )
    converted = [_converted(key, action, item, source) for item in items]
    return converted if many else converted[0]


def _converted(key: str, action: argparse.Action, item: Any, source: str) -> Any:
    text = item if isinstance(item, str) else str(item)
    converter = action.type
    if callable(converter):
        try:
            value = converter(text)
        except (argparse.ArgumentTypeError, TypeError, ValueError) as error:
            raise EntropyInputError(f"{key}: {error}", source=source) from None
    else:
        value = text
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise EntropyInputError(f"{key} must be one of {choices}, not {text!r}", source=source)
    return value


def prepare(
    commands: Mapping[str, argparse.ArgumentParser], argv: Sequence[str]
) -> ConfiguredArguments | None:
    """Read the configuration for the command ``argv`` names, before parsing (so a flag the
    configuration provides is not required). ``None`` for no command or ``config``."""
    name = next((word for word in argv if not word.startswith("-")), None)
    if name is None or name not in commands or name == "config":
        return None
    parser = commands[name]
    settings = configured_settings(_cwd_of(argv))
    return ConfiguredArguments(parser, argv[list(argv).index(name) + 1 :], settings)
