"""The package's PEP 517 build backend: maturin when Rust is there, a pure wheel when not.

``pyproject.toml`` names this module (``backend-path = ["build_backend"]``). It chooses, for
each wheel or editable build, one of two backends and hands the call on:

* **maturin** when ``cargo`` runs here: the wheel carries the Rust core
  (``pytest_entropy._core``, built for the stable ABI) and is tagged ``cp311-abi3-<platform>``.
  maturin's own PEP 517 backend tags Linux wheels plain ``linux_*`` (it passes
  ``--compatibility off``), which package indexes refuse; this backend asks for
  ``--compatibility pypi`` instead, so maturin audits the library and names the wheel after
  the lowest ``manylinux``/``musllinux`` policy it satisfies. A ``--compatibility`` (or
  ``--zig``) the caller passes through ``-C build-args=...`` or ``MATURIN_PEP517_ARGS`` wins.
  maturin cannot put a top-level folder into the package, so the shipped ``corpora/`` is
  added to the finished wheel as ``pytest_entropy/corpora`` (with its ``RECORD`` lines).
* **hatchling** otherwise: a pure ``py3-none-any`` wheel without the extension, which runs
  the plain Python path (the specification; same bytes). maturin has no optional-extension
  mode, and without this a machine with neither a matching wheel nor Rust could not install
  the package at all.

``-C native=false`` asks for the pure wheel even where cargo runs (CI builds both kinds);
``-C native=true`` refuses to fall back, so a broken toolchain fails the build instead of
quietly giving a pure wheel. The sdist is always hatchling's, so it has the same contents on
every machine (the crate included); a wheel built from it takes the same choice.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MATURIN = "maturin>=1.9.4,<2"
HATCHLING = "hatchling>=1.21"
NATIVE_SETTING = "native"
# Where the shipped data lives in the source tree, and where a wheel carries it.
CORPORA_SOURCE = "corpora"
CORPORA_IN_WHEEL = "pytest_entropy/corpora"

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
]

Settings = Mapping[str, Any] | None


class BuildChoiceError(RuntimeError):
    """``-C native=...`` has a value this backend does not know, or cannot be honoured."""


def cargo_usable() -> bool:
    """Whether ``cargo --version`` runs here (what the Rust build needs first)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return False
    try:
        done = subprocess.run([cargo, "--version"], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.startswith(b"cargo")


def wants_native(config_settings: Settings) -> bool:
    """The choice for this build: ``-C native=true|false|auto`` (auto: when cargo runs)."""
    raw = str((config_settings or {}).get(NATIVE_SETTING, "auto")).strip().lower()
    if raw in ("false", "0", "no", "off"):
        return False
    usable = cargo_usable()
    if raw in ("true", "1", "yes", "on"):
        if not usable:
            raise BuildChoiceError(
                "-C native=true: the Rust core was asked for, but cargo does not run here"
            )
        return True
    if raw != "auto":
        raise BuildChoiceError(f"-C native={raw!r}: expected true, false or auto")
    if not usable:
        print("pytest-entropy: cargo is not usable here; building the pure wheel (plain path)")
    return usable


def maturin_settings(config_settings: Settings) -> dict[str, Any]:
    """The settings handed to maturin: ours removed, ``--compatibility pypi`` added."""
    settings = {k: v for k, v in (config_settings or {}).items() if k != NATIVE_SETTING}
    given = settings.pop("maturin.build-args", settings.pop("build-args", None))
    if given is None:
        args = shlex.split(os.environ.get("MATURIN_PEP517_ARGS", ""))
    elif isinstance(given, str):
        args = shlex.split(given)
    else:
        args = [str(arg) for arg in given]
    if not any(arg.split("=")[0] in ("--compatibility", "--manylinux") for arg in args):
        args = ["--compatibility", "pypi", *args]
    settings["maturin.build-args"] = args
    return settings


def _hatchling_settings(config_settings: Settings) -> dict[str, Any]:
    return {k: v for k, v in (config_settings or {}).items() if k != NATIVE_SETTING}


def get_requires_for_build_wheel(config_settings: Settings = None) -> list[str]:
    return [MATURIN] if wants_native(config_settings) else [HATCHLING]


def get_requires_for_build_editable(config_settings: Settings = None) -> list[str]:
    return get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings: Settings = None) -> list[str]:
    return [HATCHLING]


def build_wheel(
    wheel_directory: str, config_settings: Settings = None, metadata_directory: str | None = None
) -> str:
    if not wants_native(config_settings):
        from hatchling import build as hatchling

        return str(hatchling.build_wheel(wheel_directory, _hatchling_settings(config_settings)))
    import maturin

    name = str(maturin.build_wheel(wheel_directory, maturin_settings(config_settings)))
    add_tree_to_wheel(Path(wheel_directory) / name, Path(CORPORA_SOURCE), CORPORA_IN_WHEEL)
    return name


def build_editable(
    wheel_directory: str, config_settings: Settings = None, metadata_directory: str | None = None
) -> str:
    # An editable install imports the package (and corpora/ beside it) from the source tree;
    # maturin puts the built _core into pytest_entropy/ there.
    if not wants_native(config_settings):
        from hatchling import build as hatchling

        return str(hatchling.build_editable(wheel_directory, _hatchling_settings(config_settings)))
    import maturin

    return str(maturin.build_editable(wheel_directory, maturin_settings(config_settings)))


def build_sdist(sdist_directory: str, config_settings: Settings = None) -> str:
    from hatchling import build as hatchling

    return str(hatchling.build_sdist(sdist_directory, _hatchling_settings(config_settings)))


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _member(name: str) -> zipfile.ZipInfo:
    # A fixed date keeps the added members reproducible; rw-r--r-- as a regular file.
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o100644 << 16
    return info


def add_tree_to_wheel(wheel: Path, source: Path, prefix: str) -> int:
    """Copy every file under ``source`` into ``wheel`` at ``prefix/``; returns how many.

    The wheel is rewritten with the files before its ``RECORD`` and one ``RECORD`` line each
    (PEP 376/427 hashes), so installers and ``twine check`` accept it.
    """
    files = sorted(path for path in source.rglob("*") if path.is_file())
    if not files:
        raise FileNotFoundError(f"{source}: no files to ship (the wheel needs the corpora)")
    with zipfile.ZipFile(wheel) as old:
        entries = old.infolist()
        contents = {entry.filename: old.read(entry) for entry in entries}
    records = [name for name in contents if name.endswith(".dist-info/RECORD")]
    if len(records) != 1:
        raise ValueError(f"{wheel}: expected one .dist-info/RECORD, found {len(records)}")
    record_name = records[0]
    added = {f"{prefix}/{path.relative_to(source).as_posix()}": path.read_bytes() for path in files}
    clash = sorted(set(added) & set(contents))
    if clash:
        raise ValueError(f"{wheel}: already has {clash[0]} (and {len(clash) - 1} more)")
    record = contents[record_name].decode("utf-8").splitlines()
    record = [line for line in record if not line.startswith(record_name + ",")]
    record += [f"{name},{_record_hash(data)},{len(data)}" for name, data in added.items()]
    record.append(f"{record_name},,")
    handle, scratch = tempfile.mkstemp(suffix=".whl", dir=wheel.parent)
    os.close(handle)
    with zipfile.ZipFile(scratch, "w", compression=zipfile.ZIP_DEFLATED) as new:
        for entry in entries:
            if entry.filename != record_name:
                new.writestr(entry, contents[entry.filename])
        for name, data in added.items():
            new.writestr(_member(name), data)
        new.writestr(_member(record_name), "\n".join(record) + "\n")
    os.chmod(scratch, wheel.stat().st_mode & 0o777)
    os.replace(scratch, wheel)
    return len(added)
