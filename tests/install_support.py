"""A base install of the package in a fresh venv, made without the network.

``pip install .`` would fetch the build backend and every dependency from an index, and tests
never touch the network. This builds what that install leaves behind from what is already
installed here:

* a new venv (``python -m venv --without-pip``: it sees none of this environment's packages);
* the distributions the base dependencies reach (``[project].dependencies``, no extras, the
  markers evaluated here), each copied file by file from its ``RECORD`` (hard links where
  the file system allows);
* the package itself: its source tree (and the bundled corpora, where the wheel puts them)
  and a ``.dist-info`` whose ``METADATA`` and ``entry_points.txt`` are the ``[project]``
  table translated as PEP 621 says every backend translates it.

:func:`installed_metadata_agrees` cross-checks that translation with the metadata the real
build backend wrote, wherever this checkout is the installed (editable) one, as in CI.
``tests/unit/test_base_install.py`` and ``bench/bench_plugin_import.py`` use it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
NAME = "pytest-entropy"


def project_table() -> dict[str, Any]:
    table: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    return table


def base_requirements() -> list[Requirement]:
    """The base dependencies whose markers hold here (the extras left out)."""
    found = []
    for text in project_table()["dependencies"]:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.append(requirement)
    return found


def base_closure() -> list[metadata.Distribution]:
    """The installed distributions the base dependencies reach (with the extras each
    requirement asks for), once each, in name order."""
    reached: dict[str, metadata.Distribution] = {}
    visited: set[tuple[str, str]] = set()
    queue = [(requirement, "") for requirement in base_requirements()]
    while queue:
        requirement, extra = queue.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        if name == NAME:
            continue
        if name not in reached:
            try:
                reached[name] = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                raise LookupError(f"{name}, a base dependency, is not installed here") from None
        for asked in ("", *sorted(requirement.extras)):
            if (name, asked) not in visited:
                visited.add((name, asked))
                queue.extend((Requirement(text), asked) for text in reached[name].requires or [])
    return [reached[name] for name in sorted(reached)]


def _entry_points_text(project: dict[str, Any]) -> str:
    groups: dict[str, dict[str, str]] = {}
    if project.get("scripts"):
        groups["console_scripts"] = dict(project["scripts"])
    if project.get("gui-scripts"):
        groups["gui_scripts"] = dict(project["gui-scripts"])
    for group, entries in (project.get("entry-points") or {}).items():
        groups[group] = dict(entries)
    lines = []
    for group, entries in groups.items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {value}" for name, value in entries.items())
        lines.append("")
    return "\n".join(lines)


def _version() -> str:
    namespace: dict[str, Any] = {}
    exec((REPO / "pytest_entropy" / "_version.py").read_text("utf-8"), namespace)
    return str(namespace["__version__"])


def _metadata_text(project: dict[str, Any]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {_version()}"]
    lines += [f"Requires-Dist: {text}" for text in project["dependencies"]]
    for extra, requirements in (project.get("optional-dependencies") or {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for text in requirements:
            requirement = Requirement(text)
            marker = f'extra == "{extra}"'
            if requirement.marker is not None:
                marker = f"({requirement.marker}) and {marker}"
            requirement.marker = None
            lines.append(f"Requires-Dist: {requirement}; {marker}")
    return "\n".join(lines) + "\n"


def _files_of(distribution: metadata.Distribution) -> Iterator[tuple[Path, str]]:
    """``(source file, path relative to site-packages)`` for every file the distribution
    installed under its site-packages folder (scripts in ``bin/`` are left out)."""
    root = Path(str(distribution.locate_file(""))).resolve()
    for entry in distribution.files or []:
        source = Path(str(distribution.locate_file(entry))).resolve()
        try:
            relative = source.relative_to(root)
        except ValueError:
            continue
        if "__pycache__" in relative.parts or not source.is_file():
            continue
        yield source, str(relative)


def _place(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def make_base_install(venv: Path) -> list[str]:
    """A fresh venv at ``venv`` holding the package and exactly its base dependencies;
    returns the names of the distributions it installed besides ours."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    target = site_packages(venv)
    closure = base_closure()
    for distribution in closure:
        for source, relative in _files_of(distribution):
            _place(source, target / relative)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "pytest_entropy", target / "pytest_entropy", ignore=ignore)
    shutil.copytree(REPO / "corpora", target / "pytest_entropy" / "corpora", ignore=ignore)
    project = project_table()
    info = target / f"pytest_entropy-{_version()}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(_metadata_text(project), encoding="utf-8")
    (info / "entry_points.txt").write_text(_entry_points_text(project), encoding="utf-8")
    (info / "INSTALLER").write_text("tests/install_support.py\n", encoding="utf-8")
    # pytest reads RECORD to find a plugin's modules (it rewrites their asserts): list them
    # all, as an installer would.
    listed = sorted(
        str(path.relative_to(target))
        for folder in (target / "pytest_entropy", info)
        for path in folder.rglob("*")
        if path.is_file()
    )
    record = [f"{name},," for name in [*listed, f"{info.name}/RECORD"]]
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")
    return [canonicalize_name(distribution.metadata["Name"]) for distribution in closure]


def clean_environment() -> dict[str, str]:
    """This process's environment without what would let the venv see other packages."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONSTARTUP", "VIRTUAL_ENV"}
    return {key: value for key, value in os.environ.items() if key not in drop}


def pytest_plugins_in(venv: Path) -> list[list[str]]:
    """``[name, module]`` of every ``pytest11`` entry point the venv's interpreter sees."""
    code = (
        "import json; from importlib.metadata import entry_points;"
        "print(json.dumps(sorted([e.name, e.value] for e in entry_points(group='pytest11'))))"
    )
    out = subprocess.run(
        [str(venv_python(venv)), "-c", code],
        env=clean_environment(),
        cwd=venv,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    plugins: list[list[str]] = json.loads(out)
    return plugins


def installed_metadata_agrees() -> bool | None:
    """Whether the metadata the real build backend wrote for this checkout (its editable
    install, as in CI) has the dependencies and entry points this module writes; ``None``
    where the installed package is another checkout's (or none)."""
    try:
        distribution = metadata.distribution(NAME)
    except metadata.PackageNotFoundError:
        return None
    direct = json.loads(distribution.read_text("direct_url.json") or "{}")
    if direct.get("url", "").removeprefix("file://") != str(REPO):
        return None
    project = project_table()
    written = {str(Requirement(text)) for text in project["dependencies"]}
    declared = {
        str(Requirement(text))
        for text in distribution.requires or []
        if Requirement(text).marker is None or "extra" not in str(Requirement(text).marker)
    }
    entry_points = {(entry.group, entry.name, entry.value) for entry in distribution.entry_points}
    ours = {
        (group, name, value)
        for group, entries in (project.get("entry-points") or {}).items()
        for name, value in entries.items()
    }
    return declared == written and ours <= entry_points
