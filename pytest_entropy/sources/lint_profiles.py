"""The provider profiles of ``lint``: shipped JSON files, one per provider, or a user's file.

The files sit in ``lint_profiles/`` beside this module (package data in a wheel); updating a
provider's rules is an edit of its file. ``--profile`` takes a shipped name or a path.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.lint import Profile, profile_from_value

__all__ = ["PROFILE_DIRECTORY", "load_profile", "load_profiles", "profile_names"]

PROFILE_DIRECTORY = Path(__file__).resolve().parent / "lint_profiles"


def profile_names() -> list[str]:
    """The shipped profiles, by name."""
    return sorted(path.stem for path in PROFILE_DIRECTORY.glob("*.json"))


@cache
def _read(path: str) -> Profile:
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EntropyInputError("lint profile file not found", source=path) from None
    except (OSError, UnicodeDecodeError) as error:
        raise EntropyInputError(f"lint profile is unreadable: {error}", source=path) from None
    except json.JSONDecodeError as error:
        raise EntropyInputError(
            f"lint profile is not valid JSON ({error.msg})", source=path, line=error.lineno
        ) from None
    return profile_from_value(value, source=path)


def load_profile(name: str) -> Profile:
    """A shipped profile by name (``openai-strict``, ``anthropic``, ``gemini``, ``mcp``) or a
    profile file by path."""
    shipped = PROFILE_DIRECTORY / f"{name}.json"
    if os.sep not in name and "/" not in name and not name.endswith(".json"):
        if not shipped.is_file():
            known = ", ".join(profile_names())
            raise EntropyInputError(f"unknown lint profile {name!r} (known: {known}, or a path)")
        return _read(str(shipped))
    return _read(name)


def load_profiles(names: list[str] | tuple[str, ...]) -> list[Profile]:
    """Each named profile once, in the order given (a comma-separated name counts as many)."""
    out: list[Profile] = []
    seen: set[str] = set()
    for given in names:
        for name in (part.strip() for part in given.split(",")):
            if name and name not in seen:
                seen.add(name)
                out.append(load_profile(name))
    return out
