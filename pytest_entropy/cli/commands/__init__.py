"""One module per ``pytest-entropy`` command; each exposes ``register(subparsers)``.

A module's ``register`` adds its sub-parser and sets ``handler`` to a function
``(args, out) -> exit status``. :data:`COMMANDS` names every command, its module and the
one-line help the top-level ``--help`` lists, in the order of that help text: the CLI builds
the listing from this table and imports a command's module only when that command runs (or
its own ``--help`` is asked for), so ``--help``, ``--version`` and each command pay only for
what they use (issue 32). ``tests/cli/test_lazy_commands.py`` holds the table to what the
modules register.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the way to --help (issue 32)
if TYPE_CHECKING:
    from typing import Final

__all__ = ["COMMANDS", "COMMAND_MODULES", "Command", "command_named"]


class Command:
    """A command as the top-level help lists it, and the module that implements it."""

    __slots__ = ("help", "module", "name")

    def __init__(self, name: str, module: str, help: str) -> None:
        self.name = name  # as typed on the command line
        self.module = module  # under pytest_entropy.cli.commands
        self.help = help  # the line of the top-level help

    def __repr__(self) -> str:
        return f"Command({self.name!r}, {self.module!r})"


COMMANDS: Final = (
    Command("measure", "measure", "measure session files into a hashed entropy report"),
    Command("status", "status", "latest session entropy, trend and ratchet verdict over a window"),
    Command("freedom", "freedom", "static freedom of every action of a surface, worst first"),
    Command(
        "propose",
        "propose",
        "proposals from the evidence: tightenings, quarantines, review signals",
    ),
    Command("compile", "compile", "compile a tighter surface behind the gate (score never rises)"),
    Command(
        "trial", "trial", "held-out trial: replay recorded calls against the compiled artifact"
    ),
    Command(
        "certify", "certify", "run the certification checks (spec §12), optionally on a corpus"
    ),
    Command(
        "export", "export", "write the surface snapshot (sorted by ref) for hashing and sharing"
    ),
    Command(
        "export-artifact",
        "export_artifact",
        "write the compiled artifact (default STATE_DIR/artifact.json)",
    ),
    Command(
        "import", "import_artifact", "merge a peer's compiled artifact (digest-proven entries only)"
    ),
    Command("pool", "pool", "merge each session's audit values into an observation pool file"),
    Command("watch", "watch", "compile continuously as agents append to session files"),
    Command(
        "proxy",
        "proxy",
        "sit between an MCP client and server: record calls, enforce the compiled surface",
    ),
    Command("convert", "convert", "convert foreign session logs into native session JSONL"),
    Command(
        "diff",
        "diff",
        "classify every schema change between two surfaces (loosened, tightened, ...)",
    ),
    Command("lint", "lint", "schema hygiene, size and provider-profile rules over a surface"),
    Command("report", "report", "render a saved --json output as HTML or Markdown"),
    Command(
        "apply",
        "apply",
        "write the declared surface with a compiled artifact applied, in its own format"
        " (or JSON Patches with --patch)",
    ),
    Command("config", "config", "print the effective configuration and where each value came from"),
)

# The module names alone, in help order (kept for callers that walk the modules).
COMMAND_MODULES: Final = tuple(command.module for command in COMMANDS)


def command_named(name: str) -> Command | None:
    """The command spelled ``name`` on the command line, or ``None``."""
    for command in COMMANDS:
        if command.name == name:
            return command
    return None
