"""Output that never crashes on an encoding: a stream that cannot encode a character gets
an ASCII stand-in instead (``→`` becomes ``->``, ``✓`` ``ok``), and ``?`` for the rest.

A Windows console, a redirected stream on cp1252 or ``PYTHONIOENCODING=ascii`` cannot encode
the symbols our lines use (``·``, ``→``, ``—``, ``✓``, ``✗``); Python's default (strict) error
handler would stop the command with a ``UnicodeEncodeError`` (exit 3). The CLI switches its
standard streams to the ``entropy-ascii`` error handler (:func:`degrade_stream`); what the
stream can encode is written unchanged, so UTF-8 output keeps every byte.
"""

from __future__ import annotations

import codecs

# typing costs a third of the interpreter's start-up; this module is on the path of
# `pytest-entropy --version` and of every pytest start (issue 32): its names are for mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["ERRORS", "ascii_fallback", "degrade_stream"]

ERRORS: Final = "entropy-ascii"

_STAND_INS: Final = {
    "·": "-",
    "→": "->",
    "←": "<-",
    "—": "--",
    "–": "-",
    "−": "-",
    "✓": "ok",
    "✗": "x",
    "×": "x",
    "§": "S",
    "…": "...",
    "⊆": "<=",
    "⊄": "!<=",
    "±": "+-",
    "Σ": "sum",
    "≤": "<=",
    "≥": ">=",
    "▲": "^",
    "▼": "v",
    "“": '"',
    "”": '"',
    "‘": "'",
    "’": "'",
    **dict.fromkeys("▁▂▃▄▅▆▇█", "#"),
}


def ascii_fallback(text: str) -> str:
    """``text`` with every character outside ASCII replaced by its stand-in (or ``?``)."""
    return "".join(char if ord(char) < 128 else _STAND_INS.get(char, "?") for char in text)


def _stand_in(char: str) -> str:
    # A lone surrogate (no encoding can write one) as the JSON path writes it: \ud800.
    return f"\\u{ord(char):04x}" if "\ud800" <= char <= "\udfff" else ascii_fallback(char)


def _handler(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(map(_stand_in, error.object[error.start : error.end])), error.end


codecs.register_error(ERRORS, _handler)


def degrade_stream(stream: Any) -> None:
    """Let ``stream`` (a text stream) write what it cannot encode as ASCII stand-ins.

    A stream that encodes all of Unicode (UTF-8, -16, -32), one that already has a
    non-strict error handler, or one that cannot be reconfigured is left alone (names reach
    a stream through ``report.names``, which writes lone surrogates as ``\\udxxx``).
    """
    encoding = getattr(stream, "encoding", None)
    reconfigure = getattr(stream, "reconfigure", None)
    if not encoding or reconfigure is None or getattr(stream, "errors", "strict") != "strict":
        return
    try:
        if codecs.lookup(encoding).name.startswith("utf"):
            return
        reconfigure(errors=ERRORS)
    except (LookupError, ValueError, OSError):
        return
