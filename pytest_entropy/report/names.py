"""How a name (a tool ref, a parameter, a path, a message carrying them) is printed, per output.

Names are data: a session or a schema author writes them, and nothing they write may become a
terminal control, a CI workflow command, markup or a crash. Each output has one function here,
and every renderer of that output goes through it:

* terminal text (:func:`terminal_text`): C0 and C1 controls, DEL, the line and paragraph
  separators and the bidirectional marks, embeddings, overrides and isolates are written as
  visible escapes (``\\x1b``, ``\\n``, ``\\u202e``), and a lone surrogate as the JSON path writes it
  (``\\ud800``); so is the ``[`` of ``##[`` (the runner's older command form, obeyed
  anywhere in a line). A name holding none of them prints as it always has; one that does can
  no longer clear the screen, write the clipboard (OSC 52), move the cursor or start a line
  with ``::`` that a GitHub Actions runner would obey. :func:`terminal_line` also escapes the
  first colon of a whole line that begins (after blanks) with ``::``: no line of ours does, so
  such a line starts with a name.
* Markdown (:func:`markdown_text` for prose, :func:`markdown_code` for a code span): ``<``,
  ``>`` and ``&`` become entities, ``|`` and the characters that open links, emphasis or code
  are backslash-escaped, and a code span's fence is longer than any backtick run inside it.
* JSON inside an HTML ``<script>`` (:func:`script_json`): ``<``, ``>`` and ``&`` are written as
  ``\\u003c``, ``\\u003e`` and ``\\u0026``, so no ``</script>`` or ``<!--`` can end or bend the
  element, and the text still parses to the same document.

``--json`` output keeps every value exact: it is the reference's serialisation, which already
escapes controls and writes lone surrogates as ``\\udxxx``.
"""

from __future__ import annotations

import re

from pytest_entropy.core.patterns import LazyPattern

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "html_text",
    "markdown_code",
    "markdown_fence",
    "markdown_text",
    "repair_surrogates",
    "script_json",
    "terminal_line",
    "terminal_lines",
    "terminal_text",
]

# Characters a terminal (or a log viewer) acts on or reorders: C0 controls, DEL, C1 controls,
# the bidi marks (U+061C, U+200E, U+200F), the line and paragraph separators, the bidi
# embeddings and overrides (U+202A-U+202E), the bidi isolates (U+2066-U+2069), and every
# surrogate code point (a pair is re-joined first).
# None of them is printable (``str.isprintable``), so printable text (the common case, every
# line of a report about ordinary names) is let through without the patterns, which are
# compiled at the first text that needs them.
_UNSAFE_CLASS: Final = (
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SURROGATE_CLASS: Final = "[\ud800-\udfff]"
_PAIR_TEXT: Final = "[\ud800-\udbff][\udc00-\udfff]"
_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


_UNSAFE: Final = LazyPattern(_UNSAFE_CLASS)
_SURROGATE: Final = LazyPattern(_SURROGATE_CLASS)
_PAIR: Final = LazyPattern(_PAIR_TEXT)


def _plain(text: str) -> bool:
    # Every character the patterns escape is unprintable to Python (Cc, Cf, Cs, Zl, Zp).
    return text.isprintable()


def _join_pairs(text: str) -> str:
    # A high surrogate followed by a low one is one astral character (as JavaScript reads it).
    return _PAIR.sub(
        lambda m: chr(0x10000 + ((ord(m.group()[0]) - 0xD800) << 10) + ord(m.group()[1]) - 0xDC00),
        text,
    )


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def repair_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as the JSON path writes it (``\\ud800``);
    anything else, controls included, unchanged. Always encodable as UTF-8."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(_visible, _join_pairs(text))


def terminal_text(text: str) -> str:
    """``text`` safe to print on a terminal or into a CI log (see the module's docstring).

    >>> terminal_text("mcp.a\\x1b]52;c;aGk=\\x07\\n::error::x")
    'mcp.a\\\\x1b]52;c;aGk=\\\\x07\\\\n::error::x'
    """
    if not _plain(text) and _UNSAFE.search(text):
        text = _UNSAFE.sub(_visible, _join_pairs(text))
    if "##[" in text:
        text = text.replace("##[", "##\\x5b")
    return text


def terminal_line(line: str) -> str:
    """One whole line of terminal text: :func:`terminal_text`, and a line that begins (after
    blanks) with ``::``, a GitHub Actions workflow command, gets its first colon escaped."""
    line = terminal_text(line)
    stripped = line.lstrip()
    if stripped.startswith("::"):
        cut = len(line) - len(stripped)
        line = line[:cut] + "\\x3a" + line[cut + 1 :]
    return line


def html_text(text: str) -> str:
    """``text`` as HTML character data or an attribute value: controls and lone surrogates
    as :func:`terminal_text` writes them, then ``&<>"'`` as entities."""
    import html  # only where HTML is written: html.entities is a large table

    return html.escape(terminal_text(text))


def terminal_lines(text: str) -> str:
    """A message of several lines, each as :func:`terminal_line` writes it (for messages
    already joined, such as an assertion's: a name's newline stays a line break there, but
    pytest prefixes every line of it, so none can start with ``::``)."""
    return "\n".join(terminal_line(line) for line in text.split("\n"))


_MARKDOWN_ENTITIES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# Characters that open markup in CommonMark / GitHub Flavored Markdown prose: code, links and
# images, emphasis and strikethrough, table cells, and the backslash that would escape ours.
_MARKDOWN_SPECIAL: Final = LazyPattern(r"[&<>\\`*_~\[\]|]")


def markdown_text(text: str) -> str:
    """``text`` as Markdown prose that renders as itself: no HTML, link, image, emphasis,
    code span or table cell can start inside it (controls as :func:`terminal_text` writes
    them). Safe in a table cell and outside one."""
    text = terminal_text(text)
    return _MARKDOWN_SPECIAL.sub(
        lambda m: _MARKDOWN_ENTITIES.get(m.group()) or "\\" + m.group(), text
    )


_BACKTICKS: Final = LazyPattern("`+")


def markdown_code(text: str, *, table: bool = False) -> str:
    """``text`` as one inline code span: the fence is one backtick longer than the longest run
    inside, padded with a space where the content starts or ends with a backtick (or with a
    space on both sides, which CommonMark would strip). In a ``table`` cell ``|`` is written
    ``\\|``, which GitHub's tables read as a pipe inside the cell, code spans included."""
    text = terminal_text(text)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    if not text:
        text = " "
    elif text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " "):
        text = f" {text} "
    if table:
        text = text.replace("|", "\\|")
    return f"{fence}{text}{fence}"


def markdown_fence(lines: list[str]) -> list[str]:
    """``lines`` as a fenced code block whose fence is longer than any backtick run inside
    (so no line can close it), each line escaped as :func:`terminal_text` does."""
    shown = [terminal_text(line) for line in lines]
    longest = max((len(run) for line in shown for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *shown, fence]


_SCRIPT_ESCAPES: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
# Lazily compiled: a class with a surrogate range costs a few million instructions to build.
_SCRIPT_SPECIAL: Final = LazyPattern("[<>&\ud800-\udfff]")


def script_json(text: str) -> str:
    """JSON ``text`` made safe inside an HTML ``<script>`` element: ``<``, ``>``, ``&`` as
    ``\\u003c``, ``\\u003e``, ``\\u0026`` and lone surrogates as ``\\udxxx``. Those characters
    can only stand inside JSON strings, where the escapes mean the same character, so
    ``json.loads`` of the result equals ``json.loads`` of ``text``."""
    if not _SCRIPT_SPECIAL.search(text):
        return text
    return _SCRIPT_SPECIAL.sub(
        lambda m: _SCRIPT_ESCAPES.get(m.group()) or f"\\u{ord(m.group()):04x}", _join_pairs(text)
    )
