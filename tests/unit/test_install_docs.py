"""Installable as documented (issue 32, item 6): where the package is on no index, the CI
examples and docs/install.md name a route that works today (a git URL or a built wheel).
``.ci/wheels`` builds the wheels and installs them; this checks what the user reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GIT_ROUTE = re.compile(r"pytest-entropy @ git\+https://\S+@")
WHEEL_ROUTE = re.compile(r"pytest_entropy-[\w.]+-(py3-none-any|cp311-abi3-[\w.]+)\.whl")


@pytest.mark.parametrize(
    "example", ["examples/github-actions/entropy.yml", "examples/gitlab-ci/entropy.gitlab-ci.yml"]
)
def test_each_ci_example_installs_a_variable_with_the_routes_beside_it(example: str) -> None:
    text = (REPO / example).read_text(encoding="utf-8")
    # The install command takes its package from one variable, an index name by default ...
    assert 'python -m pip install "$ENTROPY_PACKAGE"' in text
    assert re.search(r"^\s*ENTROPY_PACKAGE: pytest-entropy$", text, re.MULTILINE)
    assert "python -m pip install pytest-entropy" not in text
    # ... and the comment beside it gives the git and the wheel routes, ready to paste.
    assert GIT_ROUTE.search(text), f"{example}: no git URL route"
    assert WHEEL_ROUTE.search(text), f"{example}: no wheel route"
    assert "docs/install.md" in text


def test_the_install_page_gives_the_index_git_and_wheel_routes() -> None:
    text = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    assert "python -m pip install pytest-entropy" in text
    assert GIT_ROUTE.search(text)
    assert "python -m pip wheel . --no-deps" in text
    assert WHEEL_ROUTE.search(text)
    assert "-C native=false" in text  # the pure wheel, for machines without Rust
