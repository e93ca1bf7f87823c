"""``pytest-entropy lint --fix``: the fixed surface, its diff, what is left, and the calls.

Not a command of its own: :mod:`.lint` hands over when ``--fix`` is given. Exit 1 when the
fixed surface still breaks a rule of the profile or refuses a recorded successful call the
original accepted (``--sessions``), else 0.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from pytest_entropy.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    check_corpus,
    print_json,
    print_lines,
    read_options_of,
    session_sources_of,
)
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.lint import LintOptions, Profile, has_errors, lint_surface
from pytest_entropy.report.names import terminal_text


def run_fix(
    args: argparse.Namespace,
    out: TextIO,
    surface: dict[str, Any],
    profiles: list[Profile],
    options: LintOptions,
) -> int:
    from pytest_entropy.core.canonical import file_text
    from pytest_entropy.core.lint.fix import FixReplay, fix_surface
    from pytest_entropy.report.lint import findings_json, fix_diff_lines, lint_text_lines
    from pytest_entropy.state.store import write_file_atomic

    if len(profiles) != 1:
        raise EntropyInputError("--fix needs exactly one --profile (the one to satisfy)")
    (profile,) = profiles
    if not profile.fixes:
        raise EntropyInputError(f"lint profile {profile.id!r} defines no fix")
    if not args.out:
        raise EntropyInputError("--fix needs --out FILE (where the fixed surface goes)")
    fixed, tools = fix_surface(surface, profile)
    replay = None
    if args.sessions:
        from pytest_entropy.run.lint import replay_fix

        read = read_options_of(args, surface)
        replay, diagnostics = replay_fix(
            session_sources_of(args, read), FixReplay.of(surface, fixed, tools), read
        )
        check_corpus(args, diagnostics)  # a corpus that held no call vouches for nothing
    from pytest_entropy.core.surface_diff import diff_snapshots

    # What the fix does to the calls each tool accepts (the ratchet's containment check),
    # decided before anything is written: a surface it cannot compare leaves no --out.
    try:
        contained = diff_snapshots(surface, fixed)
    except EntropyInputError as error:
        if error.source is not None:
            raise
        raise EntropyInputError(error.problem, source=args.surface) from None
    target = Path(args.out)
    write_file_atomic(target, file_text(fixed))
    remaining = [f for f in lint_surface(fixed, [profile], options) if f.profile == profile.id]
    broken = sum(replay.broken.values()) if replay is not None else 0
    if args.json or args.output_format == "json":
        value: dict[str, Any] = {
            "fixed": str(target.resolve()),
            "tools": [{"ref": tool.ref, "changes": list(tool.changes)} for tool in tools],
            "remaining": findings_json(remaining)["findings"],
            "diff": contained.to_json(),
        }
        if replay is not None:
            value["sessions"] = {
                "checked": replay.checked,
                "refused": broken,
                "refusedByRef": dict(sorted(replay.broken.items())),
            }
        print_json(out, value)
    else:
        from pytest_entropy.cli.commands.diff import diff_lines

        print_lines(out, fix_diff_lines(tools))
        print_lines(out, ["containment (as `pytest-entropy diff` sees it):"])
        print_lines(out, [f"  {line}" for line in diff_lines(contained)])
        out.write(
            f"Fixed {len(tools)} of {len(surface['actions'])} tools for {profile.id}"
            f" → {terminal_text(str(target.resolve()))}\n"
        )
        if remaining:
            out.write("still breaking the profile (not fixable by rewriting):\n")
            print_lines(out, lint_text_lines(remaining, len(fixed["actions"])))
        if replay is not None:
            if broken:
                out.write(
                    f"FAIL: the fixed surface refuses {broken} of {replay.checked} recorded"
                    " successful calls the original accepted (new keys filled with null): "
                    + terminal_text(
                        ", ".join(f"{ref} {n}" for ref, n in sorted(replay.broken.items()))
                    )
                    + "\n"
                )
            else:
                out.write(
                    f"sessions: all {replay.checked} recorded successful calls the original"
                    " accepted pass the fixed surface (new keys filled with null);"
                    " re-baseline after adopting it\n"
                )
    return EXIT_FAILED if has_errors(remaining) or broken else EXIT_OK
