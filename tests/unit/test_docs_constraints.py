"""constraints/docs.txt pins the docs extra (what ``mkdocs build`` needs) within its ranges,
with the versions of constraints/test.txt wherever the two share a package, so .ci/run can
install both into one environment without a conflict."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]


def pins(name: str) -> dict[str, Version]:
    """Every ``name==version`` line of constraints/NAME.txt whose marker holds here."""
    found: dict[str, Version] = {}
    for raw in (REPO / "constraints" / name).read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{line!r}: a pin is one exact version"
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        found[canonicalize_name(requirement.name)] = Version(specifier.version)
    return found


def test_every_docs_requirement_is_pinned_within_its_range() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    docs = pins("docs.txt")
    for text in project["optional-dependencies"]["docs"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in docs, f"{requirement} is not pinned in constraints/docs.txt"
        assert requirement.specifier.contains(docs[name], prereleases=True), (
            f"constraints/docs.txt pins {name}=={docs[name]}, outside {requirement}"
        )
        for extra in requirement.extras:  # mkdocstrings[python] needs its handler pinned too
            assert f"{name}-{extra}" in docs, f"{name}-{extra} is not pinned"


def test_the_docs_pins_agree_with_the_test_pins() -> None:
    docs, test = pins("docs.txt"), pins("test.txt")
    differing = {
        name: (str(docs[name]), str(test[name]))
        for name in docs.keys() & test.keys()
        if docs[name] != test[name]
    }
    assert differing == {}, "regenerate constraints/docs.txt against constraints/test.txt"
