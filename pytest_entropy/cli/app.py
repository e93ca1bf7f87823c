"""The ``pytest-entropy`` command line. :func:`main` returns the exit status; it never exits.

Exit codes: 0 ok, 1 a gate or check failed, 2 usage or input error, 3 internal error.
Each command lives in its own module under :mod:`pytest_entropy.cli.commands`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from pytest_entropy._version import __version__
from pytest_entropy.cli.commands import COMMAND_MODULES
from pytest_entropy.cli.common import EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from pytest_entropy.cli.configured import prepare
from pytest_entropy.cli.interrupt import interrupted
from pytest_entropy.cli.terminal import StyledStream, colour_wanted
from pytest_entropy.core.canonical import icu_version
from pytest_entropy.core.errors import EntropyError, EntropyInputError
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION
from pytest_entropy.report.encoding import degrade_stream
from pytest_entropy.report.names import terminal_line, terminal_text
from pytest_entropy.run.collector import relaxed_collector
from pytest_entropy.run.memos import command_memos

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_USAGE",
    "build_parser",
    "main",
    "parse_arguments",
    "version_text",
]

PROG = "pytest-entropy"

Handler = Callable[[argparse.Namespace, TextIO], int]


def version_text() -> str:
    """``pytest-entropy X (metric v2, ICU Y)``."""
    return f"{PROG} {__version__} (metric v{ENTROPY_METRIC_VERSION}, ICU {icu_version()})"


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


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so :func:`main` can return a status."""

    def error(self, message: str) -> Any:
        raise _UsageError(f"{self.prog}: error: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The full command-line grammar."""
    parser = _Parser(
        prog=PROG,
        description="Measure and reduce the tool entropy of LLM tool surfaces.",
    )
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    _add_terminal_options(parser, False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__package__}.commands.{name}").register(commands)
    for command in commands.choices.values():
        # Before or after the command name; the command's copy never resets the global one.
        _add_terminal_options(command, argparse.SUPPRESS)
    return parser


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
    parser = parser or build_parser()
    configured = prepare(_commands(parser), words)
    args = parser.parse_args(list(words))
    args.configured = configured.apply(args) if configured is not None else {}
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never calls ``sys.exit``).

    A Ctrl-C anywhere, from building the parser to the command's last line, returns 130
    with one line on standard error (:func:`pytest_entropy.cli.interrupt.interrupted`)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return interrupted()


def _main(argv: Sequence[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):
        degrade_stream(stream)  # a stream that cannot encode a symbol gets ASCII, no crash
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)

    def shown(error: BaseException) -> str:
        # Names, paths and values reach messages raw: escaped for a terminal, secrets out.
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
    if colour_wanted(out, args.no_color):
        out = StyledStream(out)
    try:
        with relaxed_collector(), command_memos():
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
        err.write(f"{PROG}: internal error\n")
        # A bug's message may quote a name: escaped like every other line.
        err.writelines(terminal_line(line) + "\n" for line in traceback.format_exc().splitlines())
        return EXIT_INTERNAL
