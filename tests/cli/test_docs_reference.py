"""The docs site's generated reference pages (docs/_hooks/reference.py) cover what the code
has: every command and its flags, every option and setting, every ``--json`` schema, every
format of the registry, every name of the curated API and every fixture. No MkDocs needed."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

import pytest_entropy
from pytest_entropy.ingest import registry
from pytest_entropy.state.config import OPTIONS
from pytest_entropy.state.settings import SETTINGS
from tests.parser_support import command_parsers

REPO = Path(__file__).resolve().parents[2]
HOOKS = REPO / "docs" / "_hooks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    return _load("reference")


def test_the_cli_page_has_every_command_with_every_flag(reference: ModuleType) -> None:
    page = reference.cli_page()
    for name, parser in command_parsers().items():
        section = page.split(f"\n## pytest-entropy {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            for option in action.option_strings:
                assert option in section, (name, option)


def test_the_help_on_the_page_is_what_the_command_prints(
    reference: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_entropy.cli.app import main

    monkeypatch.setenv("COLUMNS", reference.HELP_COLUMNS)
    capsys.readouterr()
    assert main(["measure", "--help"]) == 0
    printed = capsys.readouterr().out
    section = reference.cli_page().split("\n## pytest-entropy measure\n", 1)[1]
    assert section.split("```text\n", 1)[1].split("\n```", 1)[0] + "\n" == printed


def test_the_options_page_has_every_option_and_setting(reference: ModuleType) -> None:
    page = reference.options_page()
    for option in OPTIONS:
        assert f"`{option.flag}`" in page and f"`{option.dest}`" in page, option.name
    for setting in SETTINGS:
        assert f"| `{setting.key}` |" in page and f"`{setting.environment_name}`" in page
    precedence = page.split("## Precedence", 1)[1].split("## Settings", 1)[0]
    order = ["command line", "environment", "ini file", "[tool.entropy]", "entropy.yml", "default"]
    positions = [precedence.index(word) for word in order]
    assert positions == sorted(positions)


def test_the_exit_codes_page_takes_the_numbers_from_the_code(reference: ModuleType) -> None:
    from pytest_entropy.cli import common

    page = reference.exit_codes_page()
    for name in ("EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERNAL"):
        assert f"| {getattr(common, name)} | `{name}` |" in page


def test_the_json_page_has_every_schema(reference: ModuleType) -> None:
    page = reference.json_page()
    schemas = sorted((REPO / "pytest_entropy" / "report" / "schemas").glob("*.json"))
    assert schemas
    for path in schemas:
        assert f"\n## {path.stem}\n" in page
        for key in json.loads(path.read_text(encoding="utf-8")).get("properties", {}):
            assert f"`{key}`" in page, (path.name, key)


def test_the_formats_page_lists_the_registry(reference: ModuleType) -> None:
    page = reference.formats_page()
    for name in [*registry.session_formats(), *registry.surface_formats()]:
        assert f"| `{name}` |" in page, name


def test_the_api_page_renders_every_public_name_from_where_it_is_defined(
    reference: ModuleType,
) -> None:
    page = reference.api_page()
    targets = dict(re.findall(r"## `(\w+)`\n\n::: ([\w.]+)", page))
    assert set(targets) == set(pytest_entropy.__all__) - {"__version__"}
    for name, target in targets.items():
        module, _, attribute = target.rpartition(".")
        assert attribute == name
        assert getattr(importlib.import_module(module), name) is getattr(pytest_entropy, name)


def test_the_fixtures_page_has_every_fixture_and_assertion(reference: ModuleType) -> None:
    from pytest_entropy.testing import assertions

    page = reference.fixtures_page()
    for name in ("entropy_surface", "entropy_sessions", "entropy_meter", "entropy_ratchet"):
        assert f"::: pytest_entropy.pytest.fixtures.{name}\n" in page
    for name in assertions.__all__:
        assert f"::: pytest_entropy.testing.assertions.{name}\n" in page
    assert "::: pytest_entropy.testing.lint.assert_lint_clean\n" in page


def test_the_extras_page_has_every_extra_with_its_comment(reference: ModuleType) -> None:
    table = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    page = reference.extras_page()
    for name, requirements in table.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
        for requirement in requirements:
            assert f"`{requirement}`" in row, (name, requirement)
    dask = next(line for line in page.splitlines() if line.startswith("| `dask` |"))
    assert "The Dask engine" in dask  # the comment above the extra in pyproject.toml


def test_a_link_out_of_docs_becomes_a_page_of_the_file() -> None:
    files = _load("repository_files")
    docs = REPO / "docs"
    text = "[the workflow](../../examples/github-actions/entropy.yml) and [a page](../ci.md)"
    links = files.repository_links("tutorials/ci-certify.md", text, docs)
    assert links == {
        "../../examples/github-actions/entropy.yml": "examples/github-actions/entropy.yml"
    }
    page = files.file_page("examples/github-actions/entropy.yml")
    assert page.startswith("# examples/github-actions/entropy.yml\n")
    assert re.search(r"^(```|~~~~)yaml$", page, re.M)  # fenced apart from the file's own fences


def test_every_generated_page_is_in_the_nav(reference: ModuleType) -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for uri in reference.PAGES:
        assert f": {uri}\n" in config, uri


def test_the_site_fetches_no_font() -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^theme:\n(?:  .*\n)*  font: false\n", config, re.M)


def test_doctests_become_code_blocks() -> None:
    docstrings = _load("docstrings")
    text = (
        "Classify.\n\n>>> diff = f([1])\n>>> [c.text() for c in diff]\n['s:q']\n\n"
        "See :func:`measure`. Example::\n\n    f()"
    )
    assert docstrings.markdown_docstring(text) == (
        "Classify.\n\n```pycon\n>>> diff = f([1])\n>>> [c.text() for c in diff]\n['s:q']\n```\n\n"
        "See `measure`. Example:\n\n    f()"
    )


def test_the_docs_extra_is_what_mkdocs_yml_uses() -> None:
    extra = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["docs"]
    names = {re.split(r"[\[<>=!~ ]", requirement, maxsplit=1)[0] for requirement in extra}
    assert names == {"mkdocs", "mkdocs-material", "mkdocstrings"}
    assert any(requirement.startswith("mkdocstrings[python]") for requirement in extra)
