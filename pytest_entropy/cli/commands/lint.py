"""``pytest-entropy lint``: every schema-hygiene, size and provider-profile violation of a
surface in one run.

Exit 1 when any finding has error severity, else 0; a surface that cannot be read, an unknown
profile or a ``--select``/``--ignore`` that matches no rule is a usage error (2).
``--output-format`` picks text (default), json (``--json``), sarif (GitHub code scanning) or
markdown; ``--format`` stays the session format, as in every command.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    add_allow_empty,
    add_command_flag,
    add_format_options,
    add_mcp_timeout_option,
    add_sessions_option,
    positive_int,
    print_json,
    print_lines,
    surface_of,
)
from pytest_entropy.core.errors import EntropyInputError

OUTPUT_FORMATS = ("text", "json", "sarif", "markdown")


def register(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "lint", help="schema hygiene, size and provider-profile rules over a surface"
    )
    add_command_flag(
        parser,
        "surface",
        required=True,
        help="tool surface: a snapshot or a tool list (MCP, OpenAI, Anthropic, ...); a"
        " directory means its tool files; or a live MCP server: mcp+stdio:COMMAND ARGS,"
        " http(s)://URL, module:attribute",
    )
    add_mcp_timeout_option(parser)
    add_format_options(parser)
    parser.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="P",
        help="also check a provider profile: openai-strict, anthropic, gemini, mcp or a"
        " profile file (repeatable; comma-separated names too)",
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="RULE",
        help="run only these rules (repeatable; RULE* matches a prefix)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="RULE",
        help="skip these rules (repeatable; RULE* matches a prefix)",
    )
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default=None,
        help="text (default), json, sarif (SARIF 2.1.0 for code scanning) or markdown",
    )
    parser.add_argument("--json", action="store_true", help="same as --output-format json")
    parser.add_argument(
        "--max-tools",
        type=positive_int,
        default=20,
        metavar="N",
        help="surface-too-many-tools above N tools (default 20)",
    )
    parser.add_argument(
        "--max-depth",
        type=positive_int,
        default=5,
        metavar="N",
        help="schema-too-deep above N levels (default 5)",
    )
    parser.add_argument(
        "--max-schema-bytes",
        type=positive_int,
        default=8192,
        metavar="N",
        help="schema-too-large above N bytes of JSON (default 8192)",
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="write a surface that satisfies the (one) --profile to --out and print the diff",
    )
    parser.add_argument("--out", metavar="FILE", help="where --fix writes the fixed snapshot")
    add_sessions_option(parser, required=False)
    add_allow_empty(parser)
    parser.set_defaults(handler=run)


def _artifact_uri(path: str) -> str:
    """The surface file as code scanning wants it: relative to the working directory (the
    repository root in CI) when inside it, else an absolute file URI; a live server (not a
    local file) is named by its spelling, percent-encoded where a URI needs it."""
    if not os.path.exists(path):
        from urllib.parse import quote

        return quote(path, safe=":/?#[]@!$&'()*+,;=%.-_~")
    relative = os.path.relpath(os.path.abspath(path))
    if relative.startswith(".."):
        return Path(path).resolve().as_uri()
    return Path(relative).as_posix()


def _tool_lines(path: str, refs: list[str], prefix: str) -> dict[str, int]:
    """The 1-based line where each tool's name appears in the surface file (a directory's
    tools stay at line 1)."""
    import json

    if not os.path.isfile(path):  # a directory or a live server
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    # One pass over the file: the first `"name"`/`"ref"` member holding each string, its line
    # counted from the previous match (a search per tool from the top was quadratic).
    wanted: dict[str, list[str]] = {}
    for ref in refs:
        name = ref[len(prefix) :] if prefix and ref.startswith(prefix) else ref
        wanted.setdefault(name, []).append(ref)
    lines: dict[str, int] = {}
    line, scanned = 1, 0
    for match in _NAME_MEMBER.finditer(text):
        try:
            name = json.loads(match.group(1))
        except ValueError:
            continue
        owners = wanted.pop(name, None) if type(name) is str else None
        if owners is None:
            continue
        line += text.count("\n", scanned, match.start())
        scanned = match.start()
        for ref in owners:
            lines[ref] = line
        if not wanted:
            break
    return lines


_NAME_MEMBER = re.compile(r'"(?:name|ref)"\s*:\s*("(?:[^"\\]|\\.)*")')


def run(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_entropy.core.lint import LintOptions, check_rule_patterns, has_errors, lint_surface
    from pytest_entropy.report.lint import (
        findings_json,
        lint_markdown_lines,
        lint_sarif,
        lint_text_lines,
    )
    from pytest_entropy.sources.lint_profiles import load_profiles

    profiles = load_profiles(args.profile)
    options = LintOptions(
        max_tools=args.max_tools,
        max_depth=args.max_depth,
        max_schema_bytes=args.max_schema_bytes,
        select=tuple(args.select),
        ignore=tuple(args.ignore),
    )
    check_rule_patterns(options, profiles)
    # The one surface loader of every command (files, mcp+stdio:, URLs, module:attribute),
    # with the tools' descriptions and other fields, which the rules read.
    surface = surface_of(args, args.surface, tool_fields=True)
    if args.fix:
        from pytest_entropy.cli.commands.lint_fix import run_fix

        return run_fix(args, out, surface, profiles, options)
    if args.out or args.sessions:
        raise EntropyInputError("--out and --sessions go with --fix")
    findings = lint_surface(surface, profiles, options)
    tools = len(surface["actions"])
    output = "json" if args.json else (args.output_format or "text")
    if output == "json":
        print_json(out, findings_json(findings))
    elif output == "sarif":
        refs = [action["ref"] for action in surface["actions"]]
        print_json(
            out,
            lint_sarif(
                findings,
                artifact_uri=_artifact_uri(args.surface),
                profiles=profiles,
                lines=_tool_lines(args.surface, refs, args.ref_prefix or ""),
            ),
        )
    elif output == "markdown":
        print_lines(out, lint_markdown_lines(findings, tools))
    else:
        print_lines(out, lint_text_lines(findings, tools))
    return EXIT_FAILED if has_errors(findings) else EXIT_OK
