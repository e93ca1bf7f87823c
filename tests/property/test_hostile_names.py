"""Names are data (issue 26): generated hostile names through every renderer of every command.

A name made of terminal controls, lone surrogates, bidi overrides, ``<!--``, ``</script>``,
backticks, pipes, links and newlines followed by ``::`` workflow commands is given to the
demo corpus's tools, parameter and enum value (tests/hostile_support.py); then every command
that prints names runs in every output it has, and each output keeps its invariant:

* text and TTY text: no raw control, bidi or surrogate; no line is a workflow command;
* JSON and SARIF: parse, and hold the names exactly (the reference's values);
* Markdown: no raw HTML, link or image; every name's code span shows the name;
* HTML: the embedded JSON round-trips to the ``--json`` document and nothing bends the
  ``<script>``;
* no command crashes (exit 3) on a name.

The pytest front (gate and certification items, lint items, the terminal summary and the
JUnit XML properties) runs in tests/plugin/test_hostile_names_plugin.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.cli.app import main
from tests.hostile_support import (
    HOSTILE_PIECES,
    SAMPLES,
    HostileCorpus,
    assert_html_safe,
    assert_json_terminal_safe,
    assert_markdown_safe,
    assert_terminal_safe,
    hostile_corpus,
)

# A hostile name: pieces of attacks glued with arbitrary text (controls and surrogates
# included), so the generator reaches what the list does not spell out.
hostile_names = st.one_of(
    st.sampled_from(SAMPLES),
    st.lists(
        st.one_of(
            st.sampled_from(HOSTILE_PIECES),
            st.text(st.characters(codec=None, exclude_categories=()), max_size=4),
        ),
        min_size=1,
        max_size=6,
    ).map("".join),
)

# Each example runs about forty commands (a second or two): a third of the profile's examples
# covers every renderer many times over (CI's profile is derandomized: the same ones).
EXAMPLES = max(10, settings().max_examples // 3)


@contextlib.contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(argv: list[str], *, tty: bool = False) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    colour = {"FORCE_COLOR": "1", "NO_COLOR": None} if tty else {"FORCE_COLOR": None}
    with (
        _environment(**colour, TERM="xterm", CI=None),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(argv)
    assert code != 3, (argv, err.getvalue()[-3000:])
    return code, out.getvalue(), err.getvalue()


def _contains_exactly(document: Any, names: tuple[str, ...]) -> None:
    text = json.dumps(document, ensure_ascii=True)
    for name in names:
        assert json.dumps(name, ensure_ascii=True)[1:-1] in text, name


def _without_inputs(markdown: str) -> str:
    kept = (line for line in markdown.split("\n") if not line.startswith("Inputs: "))
    return "\n".join(kept).rstrip()


def text_commands(corpus: HostileCorpus, root: Path) -> list[list[str]]:
    sessions, surface = str(corpus.sessions), str(corpus.surface)
    artifact = str(root / "artifact.json")
    return [
        ["measure", "--sessions", sessions, "--surface", surface],
        ["propose", "--sessions", sessions, "--surface", surface],
        ["compile", "--sessions", sessions, "--surface", surface, "--out", artifact],
        ["trial", "--sessions", sessions, "--surface", surface, "--artifact", artifact],
        ["status", "--sessions", sessions, "--surface", surface, "--state-dir",
         str(root / "state")],
        ["freedom", "--surface", surface, "--explain"],
        ["diff", surface, str(corpus.loosened)],
        ["lint", "--surface", surface],
        ["certify", "--sessions", sessions, "--surface", surface],
        ["apply", "--surface", surface, "--artifact", artifact, "--out", str(root / "ap.json")],
        ["watch", "--sessions", sessions, "--surface", surface, "--state-dir",
         str(root / "watched"), "--once"],
    ]  # fmt: skip


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(name=hostile_names)
def test_every_renderer_of_every_command_keeps_names_inert(name: str) -> None:
    with TemporaryDirectory() as temporary:
        root = Path(temporary)
        corpus = hostile_corpus(root, name)
        sessions, surface = str(corpus.sessions), str(corpus.surface)

        # The names count: the renamed traces pass the guard like the demo's.
        _, measured, _ = run(["measure", "--sessions", sessions, "--surface", surface, "--json"])
        document = json.loads(measured)
        assert document["report"]["totals"]["operations"] == 34
        _contains_exactly(document, (corpus.render, corpus.flaky))

        # Text and TTY text.
        for argv in text_commands(corpus, root):
            for tty in (False, True):
                code, out, err = run(argv, tty=tty)
                assert code in (0, 1), (argv, err)
                if argv[0] == "certify":  # the summary, then the report's JSON (exact)
                    out, _, report = out.partition("\n\n{")
                    assert_json_terminal_safe(report)
                assert_terminal_safe(out, tty=tty)
                assert_terminal_safe(err, tty=tty)

        # JSON keeps exact values.
        artifact = str(root / "artifact.json")
        for argv, names in (
            (["propose", "--sessions", sessions, "--surface", surface, "--json"],
             (corpus.render, corpus.flaky, corpus.value)),
            (["compile", "--sessions", sessions, "--surface", surface, "--json"],
             (corpus.render, corpus.flaky)),
            (["trial", "--sessions", sessions, "--surface", surface, "--artifact", artifact,
              "--json"], ()),
            (["freedom", "--surface", surface, "--json"], (corpus.render, corpus.flaky)),
            (["diff", surface, str(corpus.loosened), "--json"], (corpus.render,)),
            (["lint", "--surface", surface, "--output-format", "json"], (corpus.flaky,)),
        ):  # fmt: skip
            code, out, _ = run(argv)
            assert_json_terminal_safe(out)
            _contains_exactly(json.loads(out), names)

        # watch --json: one JSON object a line, exact values.
        watched = str(root / "watched-json")
        code, out, _ = run(
            ["watch", "--sessions", sessions, "--surface", surface, "--state-dir", watched,
             "--once", "--json"]
        )  # fmt: skip
        assert_json_terminal_safe(out)
        notices = [json.loads(line) for line in out.split("\n") if line]  # not splitlines: NEL
        assert any(corpus.flaky in str(notice.get("text")) for notice in notices), notices

        # SARIF: a JSON log whose logical locations name the tools exactly.
        code, out, _ = run(["lint", "--surface", surface, "--output-format", "sarif"])
        sarif = json.loads(out)
        located = {
            location["name"]
            for result in sarif["runs"][0]["results"]
            for location in result["locations"][0]["logicalLocations"]
        }
        assert {corpus.render, corpus.flaky} <= located

        # Markdown and HTML, from every command that writes them, and report --from.
        for kind, argv in (
            ("measure", ["measure", "--sessions", sessions, "--surface", surface, "--json"]),
            ("status", ["status", "--sessions", sessions, "--surface", surface,
                        "--state-dir", str(root / "state-md"), "--json"]),
            ("compile", ["compile", "--sessions", sessions, "--surface", surface, "--json"]),
            ("trial", ["trial", "--sessions", sessions, "--surface", surface,
                       "--artifact", artifact, "--json"]),
            ("certify", ["certify", "--sessions", sessions, "--surface", surface, "--trial",
                         "--artifact", artifact, "--output-format", "json"]),
        ):  # fmt: skip
            markdown, page = root / f"{kind}.md", root / f"{kind}.html"
            code, out, _ = run([*argv, "--markdown", str(markdown), "--html", str(page)])
            doc = json.loads(out)
            text = markdown.read_text(encoding="utf-8")
            shown = (corpus.render, corpus.flaky) if kind in ("measure", "compile") else ()
            assert_markdown_safe(text, shown)
            assert_html_safe(page.read_text(encoding="utf-8"), doc)
            saved = root / f"{kind}.json"
            saved.write_text(out, encoding="utf-8")
            again_md, again_html = root / f"{kind}-again.md", root / f"{kind}-again.html"
            run(["report", "--from", str(saved), "--surface", surface, "--markdown",
                 str(again_md), "--html", str(again_html)])  # fmt: skip
            again = again_md.read_text(encoding="utf-8")
            assert _without_inputs(again) == _without_inputs(text), (kind, again, text)
            assert_html_safe(again_html.read_text(encoding="utf-8"), doc)
            code, out, _ = run(["report", "--from", str(saved)])
            assert_markdown_safe(out, shown)
        code, out, _ = run(["lint", "--surface", surface, "--output-format", "markdown"])
        assert_markdown_safe(out, (corpus.render, corpus.flaky))
        code, out, _ = run(
            ["certify", "--sessions", sessions, "--surface", surface, "--output-format", "markdown"]
        )
        assert_markdown_safe(out)
