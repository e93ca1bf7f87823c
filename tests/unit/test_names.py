"""report/names.py: how a name is printed per output, and the usage-error redaction."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from pytest_entropy.cli.app import REDACTED, redact_arguments
from pytest_entropy.core.canonical import json_string
from pytest_entropy.report.encoding import ERRORS
from pytest_entropy.report.names import (
    html_text,
    markdown_code,
    markdown_fence,
    markdown_text,
    repair_surrogates,
    script_json,
    terminal_line,
    terminal_lines,
    terminal_text,
)

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def test_an_ordinary_name_prints_as_it_always_has() -> None:
    for name in ("mcp.report.render", "naïve — ✓ 😀", "a\\b", "pi.read#/properties/x"):
        assert terminal_text(name) == name
        assert terminal_line(name) == name
        assert repair_surrogates(name) == name


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x00\x7f\x85\x9b", "\\x00\\x7f\\x85\\x9b"),
        ("\u202eevil\u2066\u2069", "\\u202eevil\\u2066\\u2069"),
        ("\u2028\u2029", "\\u2028\\u2029"),
        ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
        ("##[error]x", "##\\x5berror]x"),
    ],
)
def test_terminal_text_makes_every_control_visible(raw: str, shown: str) -> None:
    assert terminal_text(raw) == shown


def test_lone_surrogates_are_written_as_the_json_path_writes_them() -> None:
    name = "mcp.c.\ud800x\udfff"
    assert terminal_text(name) == json_string(name)[1:-1] == "mcp.c.\\ud800x\\udfff"
    assert repair_surrogates(name) == "mcp.c.\\ud800x\\udfff"
    assert terminal_text("\ud83d\ude00") == "😀"  # a pair is one character, as in JavaScript
    assert repair_surrogates("a\x1b\ud800") == "a\x1b\\ud800"  # only surrogates


def test_a_line_that_would_be_a_workflow_command_is_defused() -> None:
    assert terminal_line("::error::x") == "\\x3a:error::x"
    assert terminal_line("   ::add-mask::s") == "   \\x3a:add-mask::s"
    assert terminal_line("score 1 · a::b") == "score 1 · a::b"
    assert terminal_lines("head\n::error::x\x1b") == "head\n\\x3a:error::x\\x1b"


@pytest.mark.parametrize(
    "name", ["a`b", "``x", "x`", "` x `", " a ", "", "a|b", "<svg onload=x>", "x\ny"]
)
def test_a_code_span_shows_the_name_itself(name: str) -> None:
    for table in (False, True):
        span = markdown_code(name, table=table)
        text = f"| h |\n| --- |\n| {span} |" if table else span
        tokens = [t for block in MARKDOWN.parse(text) for t in block.children or []]
        (code,) = [t for t in tokens if t.type == "code_inline"]
        shown = code.content.replace("\\|", "|") if table else code.content
        assert shown == (terminal_text(name) or " ")


def test_markdown_prose_renders_as_itself() -> None:
    text = "<svg onload=alert(1)> & [x](https://e.invalid) ![i](y) *em* __b__ ~~s~~ `c` a|b \\"
    escaped = markdown_text(text)
    rendered = MARKDOWN.render(escaped)
    assert "<svg" not in rendered and "<a " not in rendered and "<img" not in rendered
    assert "<em>" not in rendered and "<strong>" not in rendered and "<code>" not in rendered
    assert "<s>" not in rendered and "<del>" not in rendered
    assert rendered.strip() == "<p>" + html_text(text).replace("&#x27;", "'") + "</p>"


def test_a_fence_outlasts_any_backtick_run() -> None:
    lines = ["```", "x ```` y"]
    fenced = markdown_fence(lines)
    assert fenced[0] == fenced[-1] == "`````"
    (block,) = [t for t in MARKDOWN.parse("\n".join(fenced)) if t.type == "fence"]
    assert block.content == "```\nx ```` y\n"
    assert markdown_fence(["a"])[0] == "```"


def test_script_json_round_trips_and_cannot_end_a_script() -> None:
    document = {"ref": "</script><!--<script>&\ud800", "n": 1}
    text = script_json(json.dumps(document, ensure_ascii=False))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == document
    text.encode("utf-8")


def test_html_text_escapes_markup_and_controls() -> None:
    assert html_text('<b a="1">\x1b\ud800') == "&lt;b a=&quot;1&quot;&gt;\\x1b\\ud800"


def test_a_stream_that_cannot_encode_writes_a_surrogate_as_its_escape() -> None:
    assert "a\ud800→".encode("ascii", ERRORS) == b"a\\ud800->"


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["config", "--storage-options", '{"secret": "s3"}'],
         'unrecognized arguments: --storage-options {"secret": "s3"}'),
        (["config", "--storage_options={'key': 'abc'}"],
         "unrecognized arguments: --storage_options={'key': 'abc'}"),
        (["export", "--mcp-header", "Bearer-xyz"],
         "--mcp-header takes KEY:VALUE, got 'Bearer-xyz'"),
        (["export", "--mcp-env", "TOKEN=xyz1"], "bad --mcp-env 'TOKEN=xyz1'"),
        (["config", '{"secret": "s3"}'], 'unrecognized arguments: {"secret": "s3"}'),
    ],
)  # fmt: skip
def test_redaction_removes_credential_values(words: list[str], message: str) -> None:
    redacted = redact_arguments(message, words)
    assert REDACTED in redacted
    for secret in ("s3", "abc", "xyz"):
        assert secret not in redacted.replace("--storage", "")


def test_redaction_leaves_other_values_alone() -> None:
    words = ["measure", "--sessions", "runs", "--jobs", "x"]
    message = "argument --jobs: not an integer: 'x'"
    assert redact_arguments(message, words) == message
