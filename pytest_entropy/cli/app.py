"""The ``pytest-entropy`` command line. :func:`main` returns the exit status; it never exits.

Exit codes: 0 ok, 1 a gate or check failed, 2 usage or input error, 3 internal error.
Each command lives in its own module under :mod:`pytest_entropy.cli.commands`, imported
only when that command runs or shows its own help: ``--help`` and ``--version`` import no
command module, and a command imports what it uses (issue 32). The top-level help lists
every command from :data:`~pytest_entropy.cli.commands.COMMANDS`, byte for byte as the
full grammar shows it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from pytest_entropy.cli.commands import COMMANDS, command_named
from pytest_entropy.cli.exits import EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from pytest_entropy.cli.interrupt import interrupted
from pytest_entropy.cli.version import PROG, native_core_text, version_text
from pytest_entropy.core.errors import EntropyError, EntropyInputError
from pytest_entropy.report.encoding import degrade_stream
from pytest_entropy.run.collector import relaxed_collector

TYPE_CHECKING = False  # typing is not imported on the way to --version (issue 32)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TextIO

    Handler = Callable[[argparse.Namespace, TextIO], int]

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_USAGE",
    "build_parser",
    "invoked_command",
    "main",
    "native_core_text",
    "parse_arguments",
    "version_text",
]


class _UsageError(Exception):
    pass


# An option whose spelling holds one of these carries a credential (storage options, MCP
# headers and environment, tokens); so may any word that is a JSON object.
_SECRET_OPTIONS = ("storage", "secret", "header", "env", "token", "password", "passwd", "auth",
                   "key", "credential")  # fmt: skip
REDACTED = "<redacted>"


def _secret_values(words: Sequence[str]) -> list[str]:
    values = []
    for index, word in enumerate(words):
        if word == "--":
            break
        if word.startswith("{"):
            values.append(word)
        if not word.startswith("-"):
            continue
        name, equals, attached = word.partition("=")
        spelled = name.lstrip("-").replace("_", "-").lower()
        if not any(part in spelled for part in _SECRET_OPTIONS):
            continue
        if equals:
            values.append(attached)
        elif index + 1 < len(words) and words[index + 1] != "--":
            values.append(words[index + 1])
    return values


def redact_arguments(message: str, words: Sequence[str]) -> str:
    """``message`` with the value of every credential-like option in ``words`` (whatever its
    spelling: ``--storage-options``, a typo such as ``--storage_options``, ``--mcp-header``)
    and every JSON object argument replaced by ``<redacted>``: argparse and our own
    checks quote a bad value in their error, and a usage error must not print a secret."""
    for value in sorted(set(_secret_values(words)), key=len, reverse=True):
        if len(value) >= 3:
            message = message.replace(value, REDACTED)
        elif value:
            message = message.replace(repr(value), repr(REDACTED))
    return message


def _terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` gives it: ``COLUMNS``
    when it is a positive number, else the width of the terminal on standard output, else
    80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, given the width argparse would find itself: its own
    lookup imports shutil (and with it bz2, lzma and fnmatch) when the first option is
    added, a cost every command paid before parsing a word (issue 32)."""

    def __init__(self, prog: str, *args: Any, **kwargs: Any) -> None:
        if not args and kwargs.get("width") is None:
            kwargs["width"] = _terminal_columns() - 2
        super().__init__(prog, *args, **kwargs)


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so :func:`main` can return a status."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        raise _UsageError(f"{self.prog}: error: {message}")


def invoked_command(words: Sequence[str]) -> str | None:
    """The command ``words`` name: the first word that is not an option (the global options
    take no value), or ``None``; the same rule the configuration uses to pick a command."""
    return next((word for word in words if not word.startswith("-")), None)


def build_parser(
    loaded: Iterable[str] | None = None, *, listed: bool = True
) -> argparse.ArgumentParser:
    """The command-line grammar: every command's module registers its options, or, when
    ``loaded`` names commands, only theirs; the others are listed with their name and help
    (what the top-level help shows) and import nothing. With ``listed=False`` the others
    are left out altogether: the grammar of a run of one known command, which never shows
    the top-level help or the list of choices (each listed command costs an argparse
    parser, a few milliseconds of every run together)."""
    wanted = None if loaded is None else set(loaded)
    parser = _Parser(
        prog=PROG,
        description="Measure and reduce the tool entropy of LLM tool surfaces.",
    )
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    _add_terminal_options(parser, False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        if wanted is None or command.name in wanted:
            from importlib import import_module

            import_module(f"{__package__}.commands.{command.module}").register(commands)
        elif listed:
            commands.add_parser(command.name, help=command.help)
    for command_parser in commands.choices.values():
        # Before or after the command name; the command's copy never resets the global one.
        _add_terminal_options(command_parser, argparse.SUPPRESS)
        _cli_spellings(command_parser)
    return parser


_PLUGIN_FLAG = re.compile(r"--entropy-([a-z][a-z0-9-]*)")


def _cli_spellings(command_parser: argparse.ArgumentParser) -> None:
    """The help the CLI shares with the pytest plugin names the plugin's flags
    (``--entropy-format``); where the command has the option, its own spelling."""
    flags = command_parser._option_string_actions

    def spelled(match: re.Match[str]) -> str:
        own = "--" + match.group(1)
        return own if own in flags else match.group(0)

    for action in command_parser._actions:
        if action.help and "--entropy-" in action.help:
            action.help = _PLUGIN_FLAG.sub(spelled, action.help)


def _parser_for(words: Sequence[str]) -> argparse.ArgumentParser:
    """The grammar with only the command ``words`` name loaded (none for ``--help``,
    ``--version`` or a misspelt command: argparse's messages need only the names). A known
    command with no top-level ``--help`` before it gets its own grammar alone: nothing in
    such a run can show the others' names."""
    name = invoked_command(words)
    if name is None:
        return build_parser(())
    before = list(words)[: list(words).index(name)]
    # -h, --help or an abbreviation of it (argparse accepts --he): the top-level help.
    asks_help = any(w == "-h" or (len(w) > 2 and "--help".startswith(w)) for w in before)
    alone = command_named(name) is not None and not asks_help
    return build_parser((name,), listed=not alone)


def _add_terminal_options(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--no-color",
        action="store_true",
        default=default,
        help="no colour on a terminal (as NO_COLOR=1 does)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        default=default,
        help="no progress bar on a terminal's standard error",
    )


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def parse_arguments(
    words: Sequence[str], parser: argparse.ArgumentParser | None = None
) -> argparse.Namespace:
    """The command line with the project configuration applied to whatever it left out
    (``args.configured``: ``{dest: source}`` of the values the configuration gave)."""
    parser = parser or _parser_for(words)
    configured = None
    name = invoked_command(words)
    if name is not None and command_named(name) is not None:
        from pytest_entropy.cli.configured import prepare  # reads the project's files

        configured = prepare(_commands(parser), words)
    args = parser.parse_args(list(words))
    if args.command is not None and getattr(args, "handler", None) is None:
        # The command argparse chose is not the one loaded (a word the rule above read
        # differently): parse again with every command's grammar.
        return parse_arguments(words, build_parser())
    args.configured = configured.apply(args) if configured is not None else {}
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never calls ``sys.exit``).

    A Ctrl-C anywhere, from building the parser to the command's last line, returns 130
    with one line on standard error (:func:`pytest_entropy.cli.interrupt.interrupted`)."""
    try:
        # The collector looks less often from the first import on: building the grammar and
        # importing a command allocate much and free little (issue 32).
        with relaxed_collector():
            return _main(argv)
    except KeyboardInterrupt:
        return interrupted()


def _main(argv: Sequence[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):
        degrade_stream(stream)  # a stream that cannot encode a symbol gets ASCII, no crash
    out, err = sys.stdout, sys.stderr
    words = list(sys.argv[1:] if argv is None else argv)
    parser = _parser_for(words)

    def shown(error: BaseException) -> str:
        # Names, paths and values reach messages raw: escaped for a terminal, secrets out.
        from pytest_entropy.report.names import terminal_text

        return terminal_text(redact_arguments(str(error), words))

    try:
        args = parse_arguments(words, parser)
    except _UsageError as error:
        err.write(f"{shown(error)}\n")
        return EXIT_USAGE
    except EntropyInputError as error:
        err.write(f"{PROG}: error: {shown(error)}\n")
        return EXIT_USAGE
    except SystemExit as exit_request:  # --help
        return int(exit_request.code or 0)
    if args.version:
        out.write(version_text() + "\n")
        return EXIT_OK
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(err)
        return EXIT_USAGE
    from pytest_entropy.cli.terminal import StyledStream, colour_wanted
    from pytest_entropy.run.memos import command_memos

    if colour_wanted(out, args.no_color):
        out = StyledStream(out)
    try:
        with command_memos():
            return handler(args, out)
    except EntropyInputError as error:
        err.write(f"{PROG}: error: {shown(error)}\n")
        return EXIT_USAGE
    except EntropyError as error:
        err.write(f"{PROG}: error: {shown(error)}\n")
        return EXIT_FAILED
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        return EXIT_OK
    except Exception:
        import traceback

        from pytest_entropy.report.names import terminal_line

        err.write(f"{PROG}: internal error\n")
        # A bug's message may quote a name: escaped like every other line.
        err.writelines(terminal_line(line) + "\n" for line in traceback.format_exc().splitlines())
        return EXIT_INTERNAL
