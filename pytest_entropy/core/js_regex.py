"""Does ``new RegExp(source, flags)`` compile in JavaScript? A syntax check, no matching.

TypeBox compiles ``pattern`` and ``patternProperties`` with the ``u`` flag (where the grammar
is strict: ``\\-`` outside a class, a lone ``{`` or ``]``, a backreference to a group that
does not exist all throw) and checks the ``regex`` format without flags (where the web
compatibility grammar of ECMAScript Annex B takes almost anything: a lone ``{``, ``\\-``, an
octal escape). A pattern that throws there makes TypeBox's check throw, which the reference
counts as a rejection; matching itself runs on RE2 (:mod:`~pytest_entropy.core.regex`).

The checker follows the ECMAScript 2023 pattern grammar (what Node 20 accepts): groups and
their names, quantifiers and what they may follow, classes and their ranges, escapes, and
Unicode property names (checked against ICU, whose tables JavaScript reads too).
"""

from __future__ import annotations

import functools
import re
from typing import Final

from pytest_entropy.core.patterns import LazyPattern

__all__ = ["js_regex_compiles"]

_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|")
_BRACED: Final = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_NAME: Final = LazyPattern(  # compiled at first use (its astral ranges cost 5 ms)
    r"[A-Za-z_$\u00aa-\uffff\U00010000-\U0010ffff][\w$\u00aa-\uffff\U00010000-\U0010ffff]*"
)
_CLASS_ESCAPES: Final = frozenset("dDsSwW")


class _Invalid(Exception):
    pass


class _Parser:
    def __init__(self, source: str, unicode: bool) -> None:
        self.s = source
        self.i = 0
        self.u = unicode
        self.groups = 0
        self.names: list[str] = []
        self.backrefs: list[int] = []
        self.named_refs: list[str] = []
        self.has_names = "(?<" in source.replace("(?<=", "").replace("(?<!", "")

    def peek(self, offset: int = 0) -> str:
        index = self.i + offset
        return self.s[index] if index < len(self.s) else ""

    def parse(self) -> None:
        self.disjunction()
        if self.i < len(self.s):
            raise _Invalid("unmatched )")
        if self.u and any(ref > self.groups for ref in self.backrefs):
            raise _Invalid("invalid escape")
        if (self.u or self.names) and any(n not in self.names for n in self.named_refs):
            raise _Invalid("invalid named reference")

    def disjunction(self) -> None:
        self.alternative()
        while self.peek() == "|":
            self.i += 1
            self.alternative()

    def alternative(self) -> None:
        while self.i < len(self.s) and self.peek() not in ("|", ")"):
            self.term()

    def term(self) -> None:
        c = self.peek()
        if c in ("^", "$"):
            self.i += 1
            return
        if c == "\\" and self.peek(1) in ("b", "B"):
            self.i += 2
            return
        if c == "(" and self.s.startswith(("(?=", "(?!", "(?<=", "(?<!"), self.i):
            lookbehind = self.s.startswith(("(?<=", "(?<!"), self.i)
            self.i += 4 if lookbehind else 3
            self.disjunction()
            self.expect(")")
            if self.quantifier_ahead():
                if self.u or lookbehind:
                    raise _Invalid("nothing to repeat")
                self.quantifier()
            return
        self.atom()
        if self.quantifier_ahead():
            self.quantifier()

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise _Invalid(f"expected {char}")
        self.i += 1

    def quantifier_ahead(self) -> bool:
        c = self.peek()
        if c in ("*", "+", "?"):
            return True
        return c == "{" and _BRACED.match(self.s, self.i) is not None

    def quantifier(self) -> None:
        c = self.peek()
        if c == "{":
            found = _BRACED.match(self.s, self.i)
            if found is None:
                raise _Invalid("incomplete quantifier")
            if found[3] and int(found[3]) < int(found[1]):
                raise _Invalid("numbers out of order in {} quantifier")
            self.i = found.end()
        else:
            self.i += 1
        if self.peek() == "?":
            self.i += 1

    def atom(self) -> None:
        c = self.peek()
        if c in ("*", "+", "?"):
            raise _Invalid("nothing to repeat")
        if c == "{":
            if self.u or _BRACED.match(self.s, self.i):
                raise _Invalid("nothing to repeat" if not self.u else "lone quantifier brackets")
            self.i += 1
            return
        if c in ("}", "]"):
            if self.u:
                raise _Invalid("lone quantifier brackets")
            self.i += 1
            return
        if c == "(":
            self.group()
            return
        if c == "[":
            self.char_class()
            return
        if c == "\\":
            self.atom_escape()
            return
        self.i += 1

    def group(self) -> None:
        self.i += 1
        if self.peek() == "?":
            if self.peek(1) == ":":
                self.i += 2
            elif self.peek(1) == "<":
                self.i += 2
                name = _NAME.compiled.match(self.s, self.i)
                if name is None or self.s[name.end() : name.end() + 1] != ">":
                    raise _Invalid("invalid capture group name")
                if name.group() in self.names:
                    raise _Invalid("duplicate capture group name")
                self.names.append(name.group())
                self.i = name.end() + 1
                self.groups += 1
            else:
                raise _Invalid("invalid group")
        else:
            self.groups += 1
        self.disjunction()
        self.expect(")")

    def atom_escape(self) -> None:
        self.i += 1
        c = self.peek()
        if c == "":
            raise _Invalid("\\ at end of pattern")
        if c in "123456789":
            start = self.i
            while self.peek().isdigit() and self.peek().isascii():
                self.i += 1
            self.backrefs.append(int(self.s[start : self.i]))
            return
        if c == "k":
            if self.u or self.has_names:
                self.i += 1
                if self.peek() != "<":
                    raise _Invalid("invalid named reference")
                name = _NAME.compiled.match(self.s, self.i + 1)
                if name is None or self.s[name.end() : name.end() + 1] != ">":
                    raise _Invalid("invalid named reference")
                self.named_refs.append(name.group())
                self.i = name.end() + 1
                return
            self.i += 1
            return
        self.character_escape(in_class=False)

    def character_escape(self, in_class: bool) -> bool:
        """One escape after its backslash; True when it was a class escape (\\d, \\p{..})."""
        c = self.peek()
        self.i += 1
        if c in _CLASS_ESCAPES:
            return True
        if c in ("p", "P") and self.u:
            if self.peek() != "{":
                raise _Invalid("invalid property name")
            end = self.s.find("}", self.i)
            if end < 0 or not _property_exists(self.s[self.i + 1 : end]):
                raise _Invalid("invalid property name")
            self.i = end + 1
            return True
        if c in "fnrtv":
            return False
        if c == "c":
            if self.peek().isascii() and self.peek().isalpha():
                self.i += 1
            elif self.u:
                raise _Invalid("invalid unicode escape")
            elif in_class and (self.peek().isdigit() or self.peek() == "_"):
                self.i += 1
            else:
                self.i -= 1  # Annex B: "\c" is a backslash and a "c"
            return False
        if c == "0":
            if self.u and self.peek().isdigit():
                raise _Invalid("invalid decimal escape")
            return False
        if c == "x":
            if _hex(self.s[self.i : self.i + 2], 2):
                self.i += 2
            elif self.u:
                raise _Invalid("invalid escape")
            return False
        if c == "u":
            if _hex(self.s[self.i : self.i + 4], 4):
                self.i += 4
            elif self.u and self.peek() == "{":
                end = self.s.find("}", self.i)
                digits = self.s[self.i + 1 : end] if end > 0 else ""
                if not digits or not _hex(digits, len(digits)) or int(digits, 16) > 0x10FFFF:
                    raise _Invalid("invalid unicode escape")
                self.i = end + 1
            elif self.u:
                raise _Invalid("invalid unicode escape")
            return False
        if self.u:
            if c in _SYNTAX or c == "/" or (in_class and c == "-"):
                return False
            if in_class and c in "0123456789":
                raise _Invalid("invalid class escape")
            raise _Invalid("invalid escape")
        return False

    def char_class(self) -> None:
        self.i += 1
        if self.peek() == "^":
            self.i += 1
        while True:
            if self.i >= len(self.s):
                raise _Invalid("unterminated character class")
            if self.peek() == "]":
                self.i += 1
                return
            low, low_is_class = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                high, high_is_class = self.class_atom()
                if low_is_class or high_is_class:
                    if self.u:
                        raise _Invalid("invalid character class")
                    continue
                if low > high:
                    raise _Invalid("range out of order in character class")

    def class_atom(self) -> tuple[int, bool]:
        c = self.peek()
        if c != "\\":
            self.i += 1
            if (
                self.u
                and 0xD800 <= ord(c) <= 0xDBFF
                and 0xDC00 <= ord(self.peek() or "\0") <= 0xDFFF
            ):
                high, low = ord(c), ord(self.peek())
                self.i += 1
                return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), False
            return ord(c), False
        self.i += 1
        e = self.peek()
        if e == "":
            raise _Invalid("\\ at end of pattern")
        if e == "b":
            self.i += 1
            return 8, False
        if e == "B" and self.u:
            raise _Invalid("invalid class escape")
        if e == "-" and self.u:
            self.i += 1
            return ord("-"), False
        if not self.u and e.isdigit():
            start = self.i
            while self.peek().isdigit() and self.peek() in "01234567" and self.i - start < 3:
                self.i += 1
            if self.i == start:
                self.i += 1
                return ord(e), False
            return int(self.s[start : self.i], 8), False
        start = self.i
        is_class = self.character_escape(in_class=True)
        return _escaped_value(self.s[start : self.i]), is_class


_CONTROL: Final = {"f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "0": 0}


def _escaped_value(escape: str) -> int:
    head = escape[:1]
    if head in _CONTROL and len(escape) == 1:
        return _CONTROL[head]
    if head == "c" and len(escape) == 2:
        return ord(escape[1]) % 32
    if head in ("x", "u") and len(escape) > 1:
        digits = escape[1:].strip("{}")
        try:
            return int(digits, 16)
        except ValueError:
            return ord(head)
    return ord(head) if head else 0


def _hex(text: str, count: int) -> bool:
    return len(text) == count and all(c in "0123456789abcdefABCDEF" for c in text)


_PROPERTY_NAMES: Final = frozenset(
    {"General_Category", "gc", "Script", "sc", "Script_Extensions", "scx"}
)


@functools.cache
def _property_exists(body: str) -> bool:
    """``\\p{body}`` is a property JavaScript knows: a general category, a script (with
    ``Script=``/``sc=``/``scx=``) or a binary property, spelled exactly (no loose matching)."""
    import icu

    name, equals, value = body.partition("=")
    if equals:
        if name not in _PROPERTY_NAMES or not re.fullmatch(r"[A-Za-z0-9_]+", value):
            return False
    elif not re.fullmatch(r"[A-Za-z0-9_]+", body):
        return False
    try:
        icu.UnicodeSet(f"[\\p{{{body}}}]")
    except Exception:
        return False
    return True


@functools.lru_cache(maxsize=4096)
def js_regex_compiles(source: str, *, unicode: bool) -> bool:
    """Whether ``new RegExp(source, unicode ? "u" : "")`` compiles."""
    try:
        _Parser(source, unicode).parse()
    except _Invalid:
        return False
    except (IndexError, ValueError):
        return False
    return True


# ------------------------------------------------------------------ RE2 spelling
#
# A `u`-mode pattern JavaScript compiles, spelled for RE2 with JavaScript's meaning where
# the two engines read the same text differently: `.` stops at \r, U+2028 and U+2029 too;
# \s and \S are JavaScript's Unicode white space; \uXXXX, \u{X} and surrogate-pair escapes
# are code points; \p{Script=X} is RE2's \p{X}; (?<name> is RE2's (?P<name>; \cX, \0 and \v
# are the characters they name. What RE2 has no form for (lookaround, backreferences) is
# left as it is, so RE2 refuses it and the pattern is counted as not enforced.

_JS_SPACES: Final = (
    "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}\\x{FEFF}"
)
_PROPERTY_PREFIXES: Final = (
    "Script=",
    "sc=",
    "Script_Extensions=",
    "scx=",
    "General_Category=",
    "gc=",
)


@functools.lru_cache(maxsize=4096)
def re2_spelling(source: str) -> str:
    """``source`` (a valid JavaScript ``u``-mode pattern) in RE2's syntax; a pattern this
    spelling cannot read (one valid only without ``u``) is returned as it is."""
    try:
        return _spelled(source)
    except (ValueError, IndexError):
        return source


def _spelled(source: str) -> str:
    out: list[str] = []
    i = 0
    in_class = False
    n = len(source)
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            e = source[i + 1]
            if e in ("s", "S"):
                if in_class:
                    out.append(_JS_SPACES if e == "s" else "\\S")
                else:
                    out.append(("[" if e == "s" else "[^") + _JS_SPACES + "]")
                i += 2
                continue
            if e == "u":
                if source.startswith("{", i + 2):
                    end = source.index("}", i + 2)
                    out.append("\\x{" + source[i + 3 : end] + "}")
                    i = end + 1
                    continue
                point = int(source[i + 2 : i + 6], 16)
                i += 6
                if 0xD800 <= point <= 0xDBFF and source.startswith("\\u", i):
                    try:
                        low = int(source[i + 2 : i + 6], 16)
                    except ValueError:
                        low = 0
                    if 0xDC00 <= low <= 0xDFFF:
                        point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                out.append(f"\\x{{{point:X}}}")
                continue
            if e in ("p", "P") and source.startswith("{", i + 2):
                end = source.index("}", i + 2)
                body = source[i + 3 : end]
                for prefix in _PROPERTY_PREFIXES:
                    if body.startswith(prefix):
                        body = body[len(prefix) :]
                        break
                out.append(f"\\{e}{{{body}}}")
                i = end + 1
                continue
            if e == "c" and i + 2 < n:
                out.append(f"\\x{{{ord(source[i + 2]) % 32:X}}}")
                i += 3
                continue
            if e == "0":
                out.append("\\x{0}")
                i += 2
                continue
            if e == "v":
                out.append("\\x{0B}")
                i += 2
                continue
            if e == "/":
                out.append("/")
                i += 2
                continue
            out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
        elif c == "[":
            if source.startswith("[]", i):
                out.append("[^\\x{0}-\\x{10FFFF}]")  # JavaScript's empty class matches nothing
                i += 2
                continue
            if source.startswith("[^]", i):
                out.append("[\\x{0}-\\x{10FFFF}]")  # and its negation anything
                i += 3
                continue
            in_class = True
            out.append(c)
            if source.startswith("^", i + 1):
                out.append("^")
                i += 1
        elif c == ".":
            out.append("[^\\n\\r\\x{2028}\\x{2029}]")
        elif (
            c == "(" and source.startswith("(?<", i) and not source.startswith(("(?<=", "(?<!"), i)
        ):
            out.append("(?P<")
            i += 3
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)
