"""constraints/test.txt pins the whole closure of the test and dask extras.

A cold ``pip install -e ".[test,dask]"`` without pins backtracked for about 48 minutes through
aiobotocore and s3fs versions (issue 26, item 20). The README's test command and ``.ci/run``
install with ``-c constraints/test.txt``; these tests keep the file true to pyproject.toml.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
CONSTRAINTS = REPO / "constraints" / "test.txt"
EXTRAS = ("test", "dask")


def pins() -> dict[str, Version]:
    """Every ``name==version`` line whose marker holds here (other platforms' lines skipped)."""
    found: dict[str, Version] = {}
    for raw in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1, f"{line!r}: a pin is one exact version"
        assert specifiers[0].operator == "==", f"{line!r}: a pin is one exact version"
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        found[canonicalize_name(requirement.name)] = Version(specifiers[0].version)
    return found


def project_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = list(project["dependencies"])
    for extra in EXTRAS:
        listed.extend(project["optional-dependencies"][extra])
    return [Requirement(text) for text in listed]


def test_every_direct_requirement_is_pinned_within_its_range() -> None:
    pinned = pins()
    for requirement in project_requirements():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement} is not pinned in constraints/test.txt"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"constraints/test.txt pins {name}=={pinned[name]}, outside {requirement}"
        )


def _closure(requirements: list[Requirement]) -> set[str]:
    """Names of the installed distributions reachable from ``requirements`` (extras followed)."""
    visited: set[tuple[str, str]] = set()
    reached: set[str] = set()
    queue = [(requirement, "") for requirement in requirements]
    while queue:
        requirement, extra = queue.pop()
        environment = {**default_environment(), "extra": extra}
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        name = canonicalize_name(requirement.name)
        reached.add(name)
        for asked in ("", *sorted(requirement.extras)):
            if (name, asked) in visited:
                continue
            visited.add((name, asked))
            try:
                distribution = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                continue
            queue.extend((Requirement(text), asked) for text in distribution.requires or [])
    return reached


def test_every_installed_dependency_of_the_extras_is_pinned_to_the_installed_version() -> None:
    # Walks the installed closure: a package pip brought in that the file does not pin would
    # be resolved afresh on a cold machine (and could send the resolver backtracking again).
    try:
        metadata.distribution("pytest-xdist")
        metadata.distribution("dask")
    except metadata.PackageNotFoundError:
        pytest.skip("the test and dask extras are not installed here")
    pinned = pins()
    closure = _closure(project_requirements())
    own = canonicalize_name("pytest-entropy")
    for name in sorted(closure):
        if name == own:
            continue
        try:
            installed = Version(metadata.distribution(name).version)
        except metadata.PackageNotFoundError:
            continue
        assert name in pinned, f"{name} is installed by the extras but not pinned"
        assert installed == pinned[name], (
            f"{name} {installed} is installed, constraints/test.txt pins {pinned[name]}"
        )


def test_the_install_commands_use_the_constraints() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    pattern = re.compile(r"pip install[^\n]*-c constraints/test\.txt[^\n]*\.\[test,dask\]")
    assert pattern.search(readme), "the README's test command installs without the pins"
    assert pattern.search(ci), ".ci/run installs without the pins"
