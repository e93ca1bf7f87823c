"""Issue 26, items 1 and 3-6: names are data, and they reach no output raw.

Each test reproduces the issue's report on the CLI; tests/property/test_hostile_names.py
generalises them over generated names and every renderer.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.core.meter import report_hash
from pytest_entropy.core.records import Report
from tests.hostile_support import (
    REPO,
    assert_html_safe,
    assert_markdown_safe,
    assert_terminal_safe,
    embedded_document,
    hostile_corpus,
)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def trace_line(ref: str) -> str:
    """One Pi tool result holding a trace of two calls to ``ref`` (one failed)."""
    provider, action = ref.split(".", 1)
    operations = [
        {"type": "call", "sequence": index, "ref": ref, "provider": provider, "action": action,
         "args": {"q": query}, "outcome": outcome, **extra}
        for index, (query, outcome, extra) in enumerate(
            [("a", "succeeded", {}),
             ("b", "failed", {"failureStage": "validate", "error": "bad"})]
        )
    ]  # fmt: skip
    trace = {
        "kind": "pi-fabric.execution", "version": 1, "outcome": "failed", "phases": ["p"],
        "operations": operations,
        "counts": {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0,
                   "droppedOperations": 0},
    }  # fmt: skip
    record = {"type": "message", "message": {"role": "toolResult", "toolName": "fabric_exec",
              "details": {"success": False, "trace": trace}}}  # fmt: skip
    return json.dumps(record)  # ASCII: a lone surrogate is written \ud800, valid JSON


def sessions_with(root: Path, ref: str) -> str:
    path = root / "trace.jsonl"
    path.write_text(trace_line(ref) + "\n", encoding="ascii")
    return str(path)


# ---------------------------------------------------------------- 1. lone surrogates


def test_a_lone_surrogate_in_a_ref_prints_everywhere(tmp_path: Path) -> None:
    """Item 1: ``mcp.c.\\ud800`` made text, --markdown, --html and report --from exit 3."""
    sessions = sessions_with(tmp_path, "mcp.c.\ud800")
    code, text, err = run(["measure", "--sessions", sessions])
    assert code == 0, err
    assert "  mcp.c.\\ud800  score" in text  # written as the JSON path writes it
    text.encode("utf-8")

    markdown, page = tmp_path / "m.md", tmp_path / "m.html"
    code, out, err = run(
        ["measure", "--sessions", sessions, "--json", "--markdown", str(markdown),
         "--html", str(page)]
    )  # fmt: skip
    assert code == 0, err
    # --json keeps the exact value: the JSON path's own escape, and the report's own hash.
    assert '"ref": "mcp.c.\\ud800"' in out
    document = json.loads(out)
    assert document["report"]["refs"][0]["ref"] == "mcp.c.\ud800"
    assert document["reportHash"] == report_hash(Report.from_json(document["report"]))
    assert f"report hash {document['reportHash']}" in text
    assert "`mcp.c.\\ud800`" in markdown.read_text(encoding="utf-8")
    assert embedded_document(page.read_text(encoding="utf-8")) == document

    saved = tmp_path / "measure.json"
    saved.write_text(out, encoding="utf-8")
    code, shown, err = run(["report", "--from", str(saved)])
    assert code == 0, err
    assert "`mcp.c.\\ud800`" in shown
    code, _, err = run(["report", "--from", str(saved), "--html", str(tmp_path / "r.html")])
    assert code == 0, err


def test_a_lone_surrogate_reaches_a_real_utf8_stdout(tmp_path: Path) -> None:
    """The crash was in the process's own stdout (strict UTF-8): run it for real."""
    sessions = sessions_with(tmp_path, "mcp.c.\ud800")
    done = subprocess.run(
        [sys.executable, "-m", "pytest_entropy", "measure", "--sessions", sessions],
        capture_output=True,
        env={"PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"mcp.c.\\ud800" in done.stdout


# ------------------------------------------------------------- 3. terminal controls

CONTROLS = "mcp.c.\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[H\u202e"
COMMANDS = "mcp.c.x\n::error::pwned\n::add-mask::secret\n  ::stop-commands::token"


@pytest.mark.parametrize("ref", [CONTROLS, COMMANDS], ids=["controls", "workflow-commands"])
def test_names_carry_no_terminal_control_or_workflow_command(tmp_path: Path, ref: str) -> None:
    """Item 3: OSC 52, screen clears, cursor moves and ``::`` lines reached the terminal."""
    sessions = sessions_with(tmp_path, ref)
    code, out, err = run(["measure", "--sessions", sessions])
    assert code == 0, err
    assert_terminal_safe(out)
    assert "\\x1b]52;c;aGVsbG8=\\x07" in out or "\\n::error::pwned" in out


def test_a_path_in_an_error_message_is_escaped(tmp_path: Path) -> None:
    code, _, err = run(["measure", "--sessions", str(tmp_path / "x\n::error::pwned\x1b[2J")])
    assert code == 2
    assert "x\\n::error::pwned\\x1b[2J" in err
    assert_terminal_safe(err)


def test_colour_on_a_tty_styles_only_our_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    sessions = sessions_with(tmp_path, CONTROLS)
    code, out, err = run(["measure", "--sessions", sessions])
    assert code == 0, err
    assert "\x1b[" in out  # coloured
    assert_terminal_safe(out, tty=True)


# -------------------------------------------------------------------- 4. Markdown


def test_markdown_escapes_parameters_messages_and_backticks(tmp_path: Path) -> None:
    """Item 4: ``<svg onload>`` in the parameter and lint message columns ran as HTML, and
    a backtick in a name ended its code span early."""
    corpus = hostile_corpus(tmp_path, "`<svg onload=alert(1)>`&|")
    markdown = tmp_path / "m.md"
    code, _, err = run(
        ["measure", "--sessions", str(corpus.sessions), "--surface", str(corpus.surface),
         "--markdown", str(markdown)]
    )  # fmt: skip
    assert code == 0, err
    text = markdown.read_text(encoding="utf-8")
    assert_markdown_safe(text, (corpus.render, corpus.flaky))
    assert "p\\`&lt;svg onload=alert(1)&gt;\\`&amp;\\|q" in text  # the parameter column
    code, out, _ = run(["lint", "--surface", str(corpus.surface), "--output-format", "markdown"])
    assert code == 1
    assert_markdown_safe(out, (corpus.render, corpus.flaky))
    assert "&lt;svg onload=alert(1)&gt;" in out  # the message column


# ------------------------------------------------------------------------ 5. HTML


def test_html_report_survives_a_script_comment_in_a_ref(tmp_path: Path) -> None:
    """Item 5: ``<!--<script>`` inside the embedded JSON swallowed the page's own script."""
    sessions = sessions_with(tmp_path, "mcp.c.<!--<script>x</script>&")
    page = tmp_path / "m.html"
    code, out, err = run(["measure", "--sessions", sessions, "--json", "--html", str(page)])
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert_html_safe(html, json.loads(out))
    assert "mcp.c.\\u003c!--\\u003cscript\\u003ex\\u003c/script\\u003e\\u0026" in html


# ------------------------------------------------------------ 6. secrets in usage errors


@pytest.mark.parametrize(
    "argv",
    [
        ["config", "--storage-options", '{"secret": "S3CR3T-VALUE"}'],
        ["config", "--storage_options", '{"secret": "S3CR3T-VALUE"}'],
        ["measure", "--sessions", "x", "--storage_options", '{"secret": "S3CR3T-VALUE"}'],
        ["config", '--storage-options={"secret": "S3CR3T-VALUE"}'],
        ["export", "--mcp-url", "http://127.0.0.1:9", "--mcp-header", "S3CR3T-VALUE"],
    ],
    ids=["config", "typo", "measure-typo", "attached", "mcp-header"],
)
def test_a_usage_error_never_prints_a_secret(argv: list[str]) -> None:
    """Item 6: argparse and our own checks quoted the bad value, secret included."""
    code, out, err = run(argv)
    assert code == 2
    assert "S3CR3T" not in out + err
    assert "error" in err
