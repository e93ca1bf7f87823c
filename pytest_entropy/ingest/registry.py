"""The one registry of session and surface formats.

Each foreign session format is one module of ``ingest/`` that defines ``FORMAT``, a
:class:`~pytest_entropy.ingest.base.SessionFormat` (name, reader, detector, directory
rule); each surface format is a :class:`~pytest_entropy.ingest.base.SurfaceFormat` (name,
reader, default ref prefix). The lists below are the registry: adding a format is its module
and one line here (or, from outside the package, one :func:`register_session_format` call).

Nothing imports this module at plugin load (the readers are imported with it), so
``import pytest_entropy`` never pays for them. ``docs/formats.md`` documents each format.
"""

from __future__ import annotations

import importlib
import os
import stat
from collections.abc import Collection

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.plain_record import Record, field
from pytest_entropy.core.typing_lite import cast
from pytest_entropy.ingest import detectors, tool_lists
from pytest_entropy.ingest.base import (
    NATIVE_FORMAT,
    SKIPPED_COMPANION,
    SKIPPED_SPECIAL,
    SKIPPED_SURFACE,
    SKIPPED_UNRECOGNIZED,
    DirectoryRule,
    ReadOptions,
    SessionFormat,
    SessionReader,
    SurfaceFormat,
    open_session,
)
from pytest_entropy.ingest.detection import (
    FABRIC_MARK,
    file_contains,
    is_jsonl_name,
    is_walked_name,
    native_directory_files,
    sorted_files,
)
from pytest_entropy.ingest.paths import as_path, path_like

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final

    from pytest_entropy.ingest.paths import PathT

__all__ = [
    "SKIPPED_SURFACE",
    "SKIPPED_UNRECOGNIZED",
    "DirectoryListing",
    "claiming_format",
    "directory_files",
    "directory_listing",
    "native_directory_files",
    "register_session_format",
    "register_surface_format",
    "resolve_format",
    "session_format",
    "session_formats",
    "session_reader",
    "surface_format",
    "surface_formats",
    "unregister_session_format",
    "unregister_surface_format",
]


class _BuiltIn:
    """A format of this package before its reader module is imported: its name, what the
    registry asks of it before reading (the session detector, from ``ingest/detectors.py``),
    and the module whose ``FORMAT`` (or ``attribute``) it stands for. Telling a file's format
    imports no reader; the first use of the format itself (a claimed file's reader, its
    directory rule or companions, :func:`session_format`) imports its module."""

    __slots__ = ("_attribute", "_loaded", "_module", "detector", "name")

    def __init__(
        self,
        name: str,
        module: str,
        detector: Callable[[str | os.PathLike[str], bytes], bool] | None = None,
        attribute: str = "FORMAT",
    ) -> None:
        self.name = name
        self.detector = detector
        self._module = module
        self._attribute = attribute
        self._loaded: Any = None

    def load(self) -> Any:
        if self._loaded is None:
            module = importlib.import_module(f"pytest_entropy.ingest.{self._module}")
            self._loaded = getattr(module, self._attribute)
        return self._loaded


# Session formats in detection order: under ``--format auto`` the first whose detector
# accepts a file's first 64 KiB reads it; a file no detector accepts is read natively.
_SESSION_FORMATS: list[SessionFormat | _BuiltIn] = [
    _BuiltIn("pi", "pi", detectors.detect_pi),
    _BuiltIn("claude-code", "claude_code", detectors.detect_claude_code),
    _BuiltIn("codex", "codex", detectors.detect_codex),
    _BuiltIn("gemini-cli", "gemini_cli", detectors.detect_gemini_cli),
    _BuiltIn("inspect", "inspect_ai", detectors.detect_inspect),
    _BuiltIn("otel-genai", "otel_genai", detectors.detect_otel_genai),
    _BuiltIn("bfcl", "bfcl", detectors.detect_bfcl),
    _BuiltIn("tau-bench", "tau_bench", detectors.detect_tau_bench),
    _BuiltIn("openhands", "openhands", detectors.detect_openhands),
    _BuiltIn("toolbench", "toolbench", detectors.detect_toolbench),
    _BuiltIn("mcp", "mcp_jsonrpc", detectors.detect_mcp),
    _BuiltIn("anthropic", "anthropic", detectors.detect_anthropic),
    _BuiltIn("openai", "openai_chat", detectors.detect_openai),
]
# Surface formats; the native snapshot is always there. The log formats' readers (Inspect,
# OpenTelemetry) load with their session readers, when named.
_SURFACE_FORMATS: list[SurfaceFormat | _BuiltIn] = [
    tool_lists.SNAPSHOT_FORMAT,
    *tool_lists.FORMATS,
    _BuiltIn("inspect", "log_surfaces", attribute="INSPECT_SURFACE"),
    _BuiltIn("otel-genai", "log_surfaces", attribute="OTEL_SURFACE"),
]
# What a directory means under ``--format auto``: its ``*.jsonl`` plus Claude Code's
# subagent transcripts (a native directory has none, so it reads as before).
_AUTO_DIRECTORY_FILES: Final = detectors.with_subagents
_HEAD_BYTES: Final = 64 << 10
_RESERVED: Final = frozenset({"auto", NATIVE_FORMAT})
# A file the walk parses whole to tell whether it is a surface (larger ones are not).
_SURFACE_PROBE_BYTES: Final = 32 << 20


# ----------------------------------------------------------------------- registration


def register_session_format(session_format: SessionFormat, *, detect_first: bool = False) -> None:
    """Add a session format; its detector runs after the others (``detect_first``: before).

    For example ``register_session_format(SessionFormat("toy", read_toy, detector=is_toy))``.
    """
    name = session_format.name
    if name in _RESERVED or any(known.name == name for known in _SESSION_FORMATS):
        raise ValueError(f"session format {name!r} is already registered")
    if detect_first:
        _SESSION_FORMATS.insert(0, session_format)
    else:
        _SESSION_FORMATS.append(session_format)


def unregister_session_format(name: str) -> None:
    """Remove the session format ``name`` (a no-op when it is not registered)."""
    _SESSION_FORMATS[:] = [known for known in _SESSION_FORMATS if known.name != name]


def register_surface_format(surface_format: SurfaceFormat) -> None:
    """Add a surface format (read when ``--surface-format`` names it)."""
    name = surface_format.name
    if name == "auto" or any(known.name == name for known in _SURFACE_FORMATS):
        raise ValueError(f"surface format {name!r} is already registered")
    _SURFACE_FORMATS.append(surface_format)


def unregister_surface_format(name: str) -> None:
    """Remove the surface format ``name`` (a no-op when it is not registered)."""
    _SURFACE_FORMATS[:] = [known for known in _SURFACE_FORMATS if known.name != name]


# --------------------------------------------------------------------- session formats


def session_formats() -> list[str]:
    """Every name ``--format`` accepts, ``auto`` and the native ``fabric`` first."""
    return ["auto", NATIVE_FORMAT, *sorted(known.name for known in _SESSION_FORMATS)]


def session_format(name: str) -> SessionFormat | None:
    """The registered foreign format ``name``, or ``None`` (``auto``, ``fabric``, unknown)."""
    for known in _SESSION_FORMATS:
        if known.name == name:
            return cast("SessionFormat", known.load()) if isinstance(known, _BuiltIn) else known
    return None


def session_reader(name: str) -> SessionReader:
    """The reader of the registered foreign format ``name``."""
    found = session_format(name)
    if found is None:
        raise _unknown_session_format(name)
    return found.reader


def _unknown_session_format(name: str) -> EntropyInputError:
    known = ", ".join(sorted(["auto", NATIVE_FORMAT, *(f.name for f in _SESSION_FORMATS)]))
    return EntropyInputError(f"unknown session format {name!r} (known: {known})")


_UTF8_BOM: Final = b"\xef\xbb\xbf"


def _without_bom(head: bytes) -> bytes:
    """A file's head as the detectors see it: an editor's byte order mark is not content
    (the readers skip it too)."""
    return head[len(_UTF8_BOM) :] if head.startswith(_UTF8_BOM) else head


def _detects(known: SessionFormat | _BuiltIn, path: str | os.PathLike[str], head: bytes) -> bool:
    """Whether a format's detector claims a file: this package's detectors take the path as
    given (a command's are strings), a registered format's gets the :class:`pathlib.Path`
    its contract promises."""
    if isinstance(known, _BuiltIn):
        return known.detector is not None and known.detector(path, head)
    return known.detector is not None and known.detector(as_path(path), head)


def rereadable(path: str | os.PathLike[str]) -> bool:
    """Whether a local path can be opened and read from the start again (a regular file;
    not a FIFO or ``/dev/fd/N`` pipe, which a first read drains). One that cannot be
    examined counts as rereadable: its read names the problem."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # the read names the problem


def resolve_format(path: str | os.PathLike[str], options: ReadOptions) -> str:
    """The format of one file: the explicit choice, or what its first bytes look like."""
    chosen = options.session_format
    if chosen != "auto":
        if chosen != NATIVE_FORMAT and session_format(chosen) is None:
            raise _unknown_session_format(chosen)
        return chosen
    detecting = [known for known in _SESSION_FORMATS if known.detector is not None]
    if not detecting or not rereadable(path):
        # A pipe (``<(...)``) or FIFO can be read once: sniffing its head would eat what the
        # reader needs, so it is read natively unless --format names its format.
        return NATIVE_FORMAT
    try:
        with open_session(path) as stream:
            head = stream.read(_HEAD_BYTES)
    except (OSError, EOFError):
        return NATIVE_FORMAT
    head = _without_bom(head)
    for known in detecting:
        if _detects(known, path, head):
            return known.name
    return NATIVE_FORMAT


def directory_files(path: PathT, options: ReadOptions | None = None) -> list[PathT]:
    """The session files a directory means for the chosen format (see ``docs/formats.md``),
    as the kind of path given (str for a str, else :class:`pathlib.Path`)."""
    return directory_listing(path, options).files


class DirectoryListing(Record, frozen=True):
    """What a directory means: its session files in reading order, and the files a walk
    looked at and passed over, each with why (:data:`SKIPPED_SURFACE`,
    :data:`SKIPPED_UNRECOGNIZED`). The paths are of the kind :func:`directory_listing` was
    given: strings for a string, else :class:`pathlib.Path` objects."""

    files: list[Any]
    skipped: list[tuple[Any, str]] = field(default_factory=list)


def directory_listing(
    path: PathT, options: ReadOptions | None = None, exclude: Collection[str] = ()
) -> DirectoryListing:
    """The session files a directory means for the chosen format (``docs/formats.md``).

    A named format uses its directory rule (default: the native ``*.jsonl``). Under
    ``auto`` a directory holding ``*.jsonl`` files is read as it always was (those, with
    Claude Code's subagent transcripts); any other directory is walked recursively and
    each ``.json``, ``.jsonl`` and ``.gz`` file a session reader claims is listed. The
    walk passes over surfaces and repair tables, and the files ``exclude`` names
    (absolute paths: the run's own ``--surface`` / ``--repairs``), as surface files, and
    every other file as unrecognised. The paths listed are of the kind ``path`` is (str for a
    str, else :class:`pathlib.Path`); a format's own directory rule is given a Path.
    """
    chosen = options.session_format if options is not None else "auto"
    rule: DirectoryRule | None = None
    if chosen != "auto":
        found = session_format(chosen)
        if found is not None:
            rule = found.directory_files
    try:
        special: list[PathT] = []
        if chosen == "auto":
            if not native_directory_files(path, special):
                return _walk(path, exclude)
            return DirectoryListing(_AUTO_DIRECTORY_FILES(path), _specials(special))
        if rule is None:
            files = native_directory_files(path, special)
            return DirectoryListing(files, _specials(special))
        return DirectoryListing([path_like(path, os.fspath(item)) for item in rule(as_path(path))])
    except OSError as error:
        raise EntropyInputError(
            f"cannot list the directory: {error.strerror}", source=str(path)
        ) from None


def _specials(paths: list[PathT]) -> list[tuple[PathT, str]]:
    return [(path, SKIPPED_SPECIAL) for path in paths]


def _walk(root: PathT, exclude: Collection[str]) -> DirectoryListing:
    special: list[PathT] = []
    listing = DirectoryListing([])
    passed: list[tuple[PathT, str | None]] = []  # in walk order; None: decided below
    companions: set[str] = set()
    for path in sorted_files(root, is_walked_name, recursive=True, special=special):
        if os.path.abspath(path) in exclude:
            passed.append((path, SKIPPED_SURFACE))
            continue
        name = claiming_format(path)
        if name is None:
            passed.append((path, None))
            continue
        listing.files.append(path)
        claimed = session_format(name)
        if claimed is not None and claimed.companions is not None:
            companions.update(os.path.abspath(item) for item in claimed.companions(as_path(path)))
    for path, why in passed:
        if why is None:
            if os.path.abspath(path) in companions:
                why = SKIPPED_COMPANION
            elif _is_surface_file(path):
                why = SKIPPED_SURFACE
            else:
                why = SKIPPED_UNRECOGNIZED
        listing.skipped.append((path, why))
    listing.skipped.extend(_specials(special))
    return listing


def claiming_format(path: str | os.PathLike[str]) -> str | None:
    """The session format that claims a file under ``auto`` (``fabric`` when it holds a
    native trace line), or ``None`` when no reader does."""
    try:
        with open_session(path) as stream:
            head = stream.read(_HEAD_BYTES)
    except (OSError, EOFError):
        return NATIVE_FORMAT  # read natively, so the failure is counted as unreadable
    head = _without_bom(head)
    for known in _SESSION_FORMATS:
        if _detects(known, path, head):
            return known.name
    if FABRIC_MARK in head:
        return NATIVE_FORMAT
    if is_jsonl_name(os.path.basename(path)):
        try:
            return NATIVE_FORMAT if file_contains(path, FABRIC_MARK) else None
        except (OSError, EOFError):
            return NATIVE_FORMAT
    return None


def _is_surface_file(path: str | os.PathLike[str]) -> bool:
    """Whether a whole-file JSON document is a tool list or a repair table."""
    from pytest_entropy.core.inputs import normalise_repair_rows
    from pytest_entropy.ingest.jsonparse import JSONParseError, parse_json_bytes

    try:
        with open_session(path) as stream:
            raw = stream.read(_SURFACE_PROBE_BYTES + 1)
        if len(raw) > _SURFACE_PROBE_BYTES:
            return False
        value: Any = parse_json_bytes(raw)[0]
    except (OSError, EOFError, JSONParseError, ValueError):
        return False
    if tool_lists.detect_surface_format(value):
        return True
    if type(value) is dict and type(value.get("repairs")) is list:
        return True
    if type(value) is list and value:
        # A bare array is a repair table only when every row is a well-formed alias: the
        # loader counts odd rows too (as the reference does), a detector must not.
        try:
            rows, notes = normalise_repair_rows(value)
        except EntropyInputError:
            return False
        return bool(rows) and not notes
    return False


# --------------------------------------------------------------------- surface formats


def surface_formats() -> list[str]:
    """Every name ``--surface-format`` accepts."""
    return ["auto", *sorted(known.name for known in _SURFACE_FORMATS)]


def surface_format(name: str) -> SurfaceFormat | None:
    """The registered surface format ``name``, or ``None``."""
    for known in _SURFACE_FORMATS:
        if known.name == name:
            return cast("SurfaceFormat", known.load()) if isinstance(known, _BuiltIn) else known
    return None
