"""Which metric generation a state directory's artifact and pool belong to (issue 30, item 4).

``compiled.json`` and ``observation-pool.json`` keep the reference's formats byte for byte, so
neither can carry a generation of its own (the pool's format is the same in both). A metric
v3 command that writes into a state directory therefore leaves a small marker beside them,
``metric-generation.json`` (``{"metricVersion": 3}``). A v2 command never writes one, so a v2
state directory stays exactly as the reference leaves it. Reading a directory:

* the marker names the generation;
* without one, a ``compiled.json`` of artifact version 2 (what the upstream's v3 compiler
  writes) means v3, and any other ``compiled.json`` or an ``observation-pool.json`` means
  v2 (every state directory written before metric v3 existed);
* a directory with none of these files belongs to no generation yet.

A command of one generation on state of the other explains the mismatch and exits 2
(:func:`check_generation`): the two are never mixed.
"""

from __future__ import annotations

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.records import METRIC_VERSIONS
from pytest_entropy.ingest.paths import as_path
from pytest_entropy.state.files import (
    ensure_state_directory,
    read_regular_bytes,
    write_file_atomic,
)

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final

__all__ = [
    "GENERATION_FILENAME",
    "GenerationMismatchError",
    "check_generation",
    "record_generation",
    "state_generation",
]

GENERATION_FILENAME: Final = "metric-generation.json"
_COMPILED: Final = "compiled.json"
_POOL: Final = "observation-pool.json"
# compiled.json's ``version`` that the upstream's metric-v3 compiler writes.
_V3_ARTIFACT_VERSION: Final = 2


class GenerationMismatchError(EntropyInputError):
    """A command of one metric generation met state written by the other (exit 2)."""


def _read_json(path: Path) -> object:
    try:
        raw = read_regular_bytes(path)
    except (FileNotFoundError, NotADirectoryError):
        # No file, or no directory to hold one: what the command reads or writes there next
        # reports the problem in its own words.
        return None
    except OSError as error:
        raise EntropyInputError(
            f"unreadable: {error.strerror or error}", source=str(path)
        ) from None
    import json  # here: a command that never meets a state file does not load it

    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return ValueError


def state_generation(state_dir: str | Path) -> int | None:
    """The metric generation of ``state_dir``'s artifact and pool, or None for a directory
    that holds neither yet."""
    directory = as_path(state_dir)
    marker = directory / GENERATION_FILENAME
    value = _read_json(marker)
    if value is not None:
        version = value.get("metricVersion") if isinstance(value, dict) else None
        if type(version) is not int or version not in METRIC_VERSIONS:
            raise EntropyInputError(
                'is damaged: expected {"metricVersion": 2} or {"metricVersion": 3}',
                source=str(marker),
            )
        return version
    compiled = _read_json(directory / _COMPILED)
    if isinstance(compiled, dict) and compiled.get("version") == _V3_ARTIFACT_VERSION:
        return 3
    if compiled is not None or (directory / _POOL).exists():
        return 2
    return None


def _files_of(directory: Path) -> str:
    present = [name for name in (_COMPILED, _POOL) if (directory / name).exists()]
    return " and ".join(present) if present else GENERATION_FILENAME


def check_generation(state_dir: str | Path, metric_version: int) -> None:
    """Refuse to run a ``metric_version`` command on state of the other generation.

    Raises :class:`GenerationMismatchError` (exit 2) naming the directory, what it holds and
    the two ways out; a directory of no generation yet, or of this one, passes.
    """
    directory = as_path(state_dir)
    found = state_generation(directory)
    if found is None or found == metric_version:
        return
    raise GenerationMismatchError(
        f"holds metric v{found} state ({_files_of(directory)}) and this command runs metric"
        f" v{metric_version}; the generations are never mixed: run it with --metric-version"
        f" {found}, or give a state directory of its own (--state-dir) for metric"
        f" v{metric_version}",
        source=str(directory),
    )


def record_generation(state_dir: str | Path, metric_version: int) -> bool:
    """Remember that ``state_dir`` now holds ``metric_version`` state; True when the marker
    was written. A v2 command writes nothing (the reference's directory stays as it was)."""
    if metric_version == 2:
        return False
    directory = as_path(state_dir)
    ensure_state_directory(directory)
    import json

    text = json.dumps({"metricVersion": metric_version}) + "\n"
    return write_file_atomic(directory / GENERATION_FILENAME, text)
