"""A demo corpus whose names are hostile (issue 26: names are data), and the invariants every
rendering of it must keep.

:func:`hostile_corpus` copies ``corpora/demo`` with ``mcp.report.render`` (the tool the
compiler tightens), its parameter ``format``, the enum value ``pdf`` and ``mcp.flaky.sync``
(the tool it hides) renamed, so every command has a name to print: in the report, in the
proposals, in the trial, in lint findings and in the diff.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "corpora" / "demo"

RENDER, FLAKY, PARAMETER, VALUE = "mcp.report.render", "mcp.flaky.sync", "format", "pdf"

# What a hostile name is made of: terminal controls (OSC 52 clipboard write, screen clear,
# cursor moves, bell, C1 CSI), newlines followed by GitHub Actions workflow commands, the
# runner's older command form, lone surrogates, bidi overrides and isolates, HTML that
# would end or bend a <script>, Markdown that would end a code span, a cell or add a link.
HOSTILE_PIECES = (
    "\x1b]52;c;aGVsbG8=\x07",
    "\x1b[2J\x1b[H",
    "\x1b[1;1H\x1b[K",
    "\x9b31m",
    "\x07",
    "\r",
    "\n::error::pwned",
    "\n::add-mask::secret",
    "\n  ::stop-commands::token",
    "\n::warning file=x::y",
    "##[error]old form",
    "\ud800",
    "\udfff",
    "\u202e",
    "\u2066",
    "\u200f",
    "\u2028",
    "<!--<script>",
    "</script>",
    "<svg onload=alert(1)>",
    "&amp;",
    "`",
    "``",
    "|",
    "[x](https://example.invalid)",
    "![i](https://example.invalid/i.png)",
    "*",
    "::",
)

SAMPLES = (
    "mcp.c.\ud800",
    "\x1b]52;c;aGVsbG8=\x07\x1b[2J",
    "x\n::error::pwned\n::add-mask::secret\n::stop-commands::tok",
    "`<svg onload=alert(1)>`|<!--<script>",
    "\u202eevil\u2066",
    "a``b`",
    "::error::at the start",
)


@dataclass(frozen=True)
class HostileCorpus:
    sessions: Path
    surface: Path
    loosened: Path  # the surface with the renamed parameter's enum widened (for diff)
    render: str
    flaky: str
    parameter: str
    value: str

    @property
    def names(self) -> tuple[str, ...]:
        return (self.render, self.flaky, self.parameter, self.value)


def _renamed(value: Any, names: dict[str, str], parent: str | None = None) -> Any:
    if isinstance(value, dict):
        return {
            (names.get(key, key) if parent in ("args", "properties") else key): _renamed(
                item, names, key
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renamed(item, names, parent) for item in value]
    if isinstance(value, str):
        if parent == "required":
            return names.get(value, value)
        return names.get(value, value) if value != PARAMETER else value
    return value


def hostile_corpus(root: Path, name: str) -> HostileCorpus:
    """The demo corpus under ``root`` with its names built from ``name``. Each name starts and
    ends with a letter (an audit key that JavaScript's trim would change is counted, not
    stored, so it would leave the proposals)."""
    render, flaky = f"mcp.r{name}z", f"mcp.f{name}z"
    parameter, value = f"p{name}q", f"v{name}w"
    names = {
        RENDER: render,
        RENDER[4:]: render[4:],
        FLAKY: flaky,
        FLAKY[4:]: flaky[4:],
        PARAMETER: parameter,
        VALUE: value,
    }
    sessions = root / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for source in sorted((DEMO / "sessions").glob("*.jsonl")):
        lines = []
        for line in source.read_text(encoding="utf-8").splitlines():
            lines.append(json.dumps(_renamed(json.loads(line), names)))
        (sessions / source.name).write_text("\n".join(lines) + "\n", encoding="ascii")
    surface = _renamed(json.loads((DEMO / "surface.json").read_text(encoding="utf-8")), names)
    (root / "surface.json").write_text(json.dumps(surface), encoding="ascii")
    for action in surface["actions"]:
        if action["ref"] == render:
            action["inputSchema"]["properties"][parameter].pop("enum")
    (root / "loosened.json").write_text(json.dumps(surface), encoding="ascii")
    return HostileCorpus(
        sessions, root / "surface.json", root / "loosened.json", render, flaky, parameter, value
    )


# ------------------------------------------------------------------------------ invariants

# What a terminal or a CI log acts on: C0 controls but the newline, DEL, C1 controls, the line
# and paragraph separators, the bidi embeddings, overrides and isolates, and surrogates.
UNSAFE_CHARACTERS = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SGR = re.compile("\x1b\\[[0-9;]*m")  # the colour codes a TTY run adds around whole lines


def assert_terminal_safe(text: str, *, tty: bool = False) -> None:
    """No control a terminal or a runner would act on; no line that is a workflow command."""
    if tty:
        text = _SGR.sub("", text)
    found = UNSAFE_CHARACTERS.search(text)
    assert found is None, f"raw {found.group()!r} in terminal output: {text[:2000]!r}"
    for line in text.split("\n"):
        assert not line.lstrip().startswith("::"), f"a workflow command line: {line!r}"
        assert "##[" not in line, f"an old-form workflow command: {line!r}"


# JSON text keeps exact values (the reference's bytes): JSON.stringify escapes C0 controls
# and a lone surrogate, not C1 controls, bidi characters or the line separators.
_JSON_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\ud800-\udfff]")


def assert_json_terminal_safe(text: str) -> None:
    """JSON printed to a terminal: no raw C0 control or surrogate, no workflow command line."""
    found = _JSON_UNSAFE.search(text)
    assert found is None, f"raw {found.group()!r} in JSON output"
    for line in text.split("\n"):
        assert not line.lstrip().startswith("::"), f"a workflow command line: {line!r}"


_MARKDOWN = MarkdownIt("commonmark").enable("table")


def _inline_tokens(tokens: list[Any]) -> list[Any]:
    out = []
    for token in tokens:
        out.append(token)
        out.extend(_inline_tokens(token.children or []))
    return out


def assert_markdown_safe(text: str, names: tuple[str, ...] = ()) -> None:
    """The Markdown renders no raw HTML, no link or image and no control, and each name shown
    as a code span shows as itself (its controls as visible escapes)."""
    assert_terminal_safe(text)
    tokens = _inline_tokens(_MARKDOWN.parse(text))
    kinds = {token.type for token in tokens}
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}, kinds
    rendered = _MARKDOWN.render(text)
    for tag in ("<svg", "<script", "<!--", "</script", "<a ", "<img"):
        assert tag not in rendered.lower(), (tag, rendered[:2000])
    if names:
        from pytest_entropy.report.names import terminal_text

        spans = {token.content for token in tokens if token.type == "code_inline"}
        for name in names:
            shown = terminal_text(name)
            # markdown-it keeps a table cell's \| inside a code span (GitHub unescapes it).
            assert any(shown in span.replace("\\|", "|") for span in spans), (shown, spans)


_SCRIPT = re.compile(r'<script type="application/json" id="entropy-data">(.*?)</script>', re.S)


def embedded_document(page: str) -> Any:
    """The JSON the HTML page embeds, checked to hold nothing that bends a <script>."""
    (data,) = _SCRIPT.findall(page)
    assert "<" not in data and ">" not in data and "&" not in data, data[:2000]
    assert page.count("<script") == 2, "the page's own script is gone"
    return json.loads(data)


def assert_html_safe(page: str, document: Any) -> None:
    """The embedded JSON round-trips to ``document``; no hostile markup in the page; the
    page encodes as UTF-8."""
    page.encode("utf-8")
    assert embedded_document(page) == document
    lowered = page.lower()
    for tag in ("<svg onload", "<!--<script", "<a ", "<img"):
        assert tag not in lowered, tag
    markup = _SCRIPT.sub("", page)  # the embedded JSON keeps exact values
    found = UNSAFE_CHARACTERS.search(markup.replace("\t", " "))
    assert found is None, f"raw {found.group()!r} in the page"
    found = _JSON_UNSAFE.search(_SCRIPT.findall(page)[0])
    assert found is None, f"raw {found.group()!r} in the embedded JSON"
