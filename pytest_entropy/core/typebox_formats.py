"""TypeBox 1.3.8's format registry (``format/*.mjs``), decision for decision.

``Format.Test(name, value)`` runs the registered check of ``name`` and passes any name it
does not know (``Get(format)?.(value) ?? true``). The 21 names registered by default are
below; ``idn-email`` and ``date-time`` are checked, and so is ``url``, but there is no
``uri-template`` beyond its regular expression and no ``regex`` beyond "JavaScript compiles
it". The regular expressions are TypeBox's own, rewritten for Python's ``re``: ``$`` becomes
``\\Z`` (a JavaScript ``$`` never matches before a final newline), ``\\d`` becomes ``[0-9]``
and the ``i`` flag is spelled out where Python's case folding would reach further than
JavaScript's (``[a-z]`` with ``i`` also takes the Kelvin sign in Python).

The host formats and the WHATWG URL parser behind ``iri`` and ``iri-reference`` live in
:mod:`~pytest_entropy.core.typebox_hosts`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Final

from pytest_entropy.core.patterns import LazyPattern
from pytest_entropy.core.typebox_hosts import (
    HEX,
    is_hostname,
    is_idn_hostname,
    is_ipv4,
    is_ipv6,
    url_parses,
)

__all__ = ["FORMATS", "format_check"]

# --------------------------------------------------------------------------- dates


_DAYS: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DATE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_TIME: Final = re.compile(
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))?\Z"
)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def is_date(value: str) -> bool:
    """TypeBox IsDate (from ajv-formats): YYYY-MM-DD with a real day of that month."""
    found = _DATE.match(value)
    if found is None:
        return False
    year, month, day = int(found[1]), int(found[2]), int(found[3])
    if not 1 <= month <= 12:
        return False
    return 1 <= day <= (29 if month == 2 and _leap(year) else _DAYS[month])


def is_time(value: str) -> bool:
    """TypeBox IsTime with its strict time zone: an offset or a Z is required (the test is
    "the text holds a z anywhere"), a leap second only at 23:59 UTC."""
    found = _TIME.match(value)
    if found is None:
        return False
    hour, minute, second = int(found[1]), int(found[2]), float(found[3])
    sign = -1 if found[4] == "-" else 1
    zone_hour = int(found[5] or 0)
    zone_minute = int(found[6] or 0)
    if zone_hour > 23 or zone_minute > 59:
        return False
    if not found[4] and "z" not in value.lower():
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    utc_minute = minute - zone_minute * sign
    utc_hour = hour - zone_hour * sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def is_date_time(value: str) -> bool:
    """TypeBox IsDateTime: ``value.split(/T/i)`` must give exactly a date and a time."""
    parts = re.split("[Tt]", value)
    return len(parts) == 2 and is_date(parts[0]) and is_time(parts[1])


_DURATION: Final = re.compile(
    r"P(?:(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)"
    r"(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?"
    r"|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)|[0-9]+W)\Z"
)

# --------------------------------------------------------------------------- e-mail

_EMAIL_LOCAL: Final = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_EMAIL_HOST: Final = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# TypeBox's Email: ASCII only (so "é@x.com" fails), no ".." anywhere.
_EMAIL: Final = re.compile(
    rf"(?!.*\.\.){_EMAIL_LOCAL}+(?:\.{_EMAIL_LOCAL}+)*@{_EMAIL_HOST}(?:\.{_EMAIL_HOST})*\Z",
    re.DOTALL,
)


def is_email(value: str) -> bool:
    """TypeBox IsEmail (ajv-formats): ASCII only, so ``\u00e9@x.com`` fails. Its lookahead
    ``(?!.*\\.\\.)`` stops at a line terminator, but no line terminator passes the rest."""
    return ".." not in value and _EMAIL.match(value) is not None


def _letter_or_number(char: str) -> bool:
    # \p{L} and \p{N}; with the `iu` flags, also what case-folds to one (every cased letter
    # folds to a letter, so the categories cover it).
    return unicodedata.category(char)[0] in "LN"


_IDN_EXTRA: Final = frozenset("!#$%&'*+/=?^_`{|}~-")


def _idn_local(part: str) -> bool:
    return bool(part) and all(_letter_or_number(c) or c in _IDN_EXTRA for c in part)


def _idn_host_label(label: str) -> bool:
    if not label or len(label) > 63:
        return False
    if not (_letter_or_number(label[0]) and _letter_or_number(label[-1])):
        return False
    return all(_letter_or_number(c) or c == "-" for c in label)


def is_idn_email(value: str) -> bool:
    """TypeBox IsIdnEmail: the e-mail rule with letters and numbers of any script."""
    if ".." in value:
        return False
    local, at, host = value.partition("@")
    if not at or "@" in host:
        return False
    if not all(_idn_local(part) for part in local.split(".")):
        return False
    return all(_idn_host_label(label) for label in host.split("."))


# --------------------------------------------------------------------------- URIs


def _alpha(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _alnum(c: str) -> bool:
    return _alpha(c) or ("0" <= c <= "9")


def _unreserved(c: str) -> bool:
    return _alnum(c) or c in "-._~"


_SUB_DELIMS: Final = frozenset("!$&'()*+,;=")


def _pchar(c: str) -> bool:
    return _unreserved(c) or c in _SUB_DELIMS or c in ":@"


def is_uri(value: str) -> bool:
    """TypeBox IsUri: its RFC 3986 scanner (a scheme, an optional authority whose non-ASCII
    host characters it lets through, then ASCII path, query and fragment)."""
    length = len(value)
    at = value.__getitem__

    def char(index: int) -> str:
        return at(index) if index < length else ""

    if length == 0 or not _alpha(value[0]):
        return False
    i = 1
    while i < length:
        c = value[i]
        if c == ":":
            break
        if not (_alnum(c) or c in "+-."):
            return False
        i += 1
    if char(i) != ":":
        return False
    i += 1
    if char(i) == "/" and char(i + 1) == "/":
        i += 2
        start = i
        at_sign = -1
        for j in range(i, length):
            c = value[j]
            if c == "@":
                at_sign = j
                break
            if c in "/?#":
                break
        if at_sign != -1:
            j = start
            while j < at_sign:
                c = value[j]
                if c in "[]":
                    return False
                if c == "%":
                    if j + 2 >= at_sign or char(j + 1) not in HEX or char(j + 2) not in HEX:
                        return False
                    j += 2
                elif not (_unreserved(c) or c in _SUB_DELIMS or c == ":"):
                    return False
                j += 1
            i = at_sign + 1
        if char(i) == "[":
            i += 1
            while i < length and value[i] != "]":
                i += 1
            if char(i) != "]":
                return False
            i += 1
        else:
            while i < length:
                c = value[i]
                if c in "/?#:":
                    break
                if ord(c) < 128 and not (_unreserved(c) or c in _SUB_DELIMS):
                    return False
                i += 1
        if char(i) == ":":
            i += 1
            while i < length:
                c = value[i]
                if c in "/?#":
                    break
                if not "0" <= c <= "9":
                    return False
                i += 1
    while i < length:
        c = value[i]
        if c == "%":
            if i + 2 >= length or char(i + 1) not in HEX or char(i + 2) not in HEX:
                return False
            i += 2
        elif ord(c) > 127 or not (_pchar(c) or c in "/?#"):
            return False
        i += 1
    return True


# JavaScript's \s (Unicode white space and line terminators), for use inside a class:
# Python's \s also takes U+001C..U+001F and U+0085 and misses U+FEFF.
_SP: Final = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_URI_PART: Final = f"[^{_SP}\\[\\]{{}}<>^`|]*"
_URI_REFERENCE: Final = re.compile(
    f"(?:(?:[A-Za-z][A-Za-z0-9+\\-.]*:)?(?://{_URI_PART})?|{_URI_PART})"
    f"(?:\\?{_URI_PART})?(?:#{_URI_PART})?\\Z"
)


def is_uri_reference(value: str) -> bool:
    """TypeBox IsUriReference: ASCII, no backslash, then its loose reference expression."""
    if not value.isascii() or "\\" in value:
        return False
    return _URI_REFERENCE.match(value) is not None


_URI_TEMPLATE: Final = re.compile(
    r"(?:(?:[^\x00-\x20\"'<>%\\^`{|}]|%[0-9a-fA-F]{2})|\{[+#./;?&=,!@|]?"
    r"(?:[A-Za-z0-9_]|%[0-9a-fA-F]{2})+(?::[1-9][0-9]{0,3}|\*)?"
    r"(?:,(?:[A-Za-z0-9_]|%[0-9a-fA-F]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*\Z",
    re.DOTALL,
)

_URL_HOST: Final = "(?:[a-z0-9\u00a1-\uffff]+-)*[a-z0-9\u00a1-\uffff]+"
# With the `iu` flags: Python's IGNORECASE folds as Unicode case folding does (K, s).
# Compiled at its first use: its case-folded Unicode ranges take 20 ms to compile, a tenth
# of a command that validates no URL.
_URL: Final = LazyPattern(
    f"(?:https?|ftp)://(?:[^{_SP}]+(?::[^{_SP}]*)?@)?(?:"
    r"(?!(?:10|127)(?:\.[0-9]{1,3}){3})(?!(?:169\.254|192\.168)(?:\.[0-9]{1,3}){2})"
    r"(?!172\.(?:1[6-9]|2[0-9]|3[0-1])(?:\.[0-9]{1,3}){2})"
    r"(?:[1-9][0-9]?|1[0-9][0-9]|2[01][0-9]|22[0-3])(?:\.(?:1?[0-9]{1,2}|2[0-4][0-9]|25[0-5])){2}"
    r"(?:\.(?:[1-9][0-9]?|1[0-9][0-9]|2[0-4][0-9]|25[0-4]))"
    f"|{_URL_HOST}(?:\\.{_URL_HOST})*"
    "(?:\\.(?:[a-z\u00a1-\uffff]{2,})))(?::[0-9]{2,5})?(?:/[^" + _SP + "]*)?\\Z",
    re.IGNORECASE,
)
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
_JSON_POINTER: Final = re.compile(r"(?:/(?:[^~/]|~0|~1)*)*\Z", re.DOTALL)
_POINTER_FRAGMENT: Final = re.compile(
    r"#(?:/(?:[A-Za-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-fA-F]{2}|~0|~1)*)*\Z"
)
_RELATIVE_POINTER: Final = re.compile(r"(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~0|~1)*)*)\Z", re.DOTALL)


def _astral_safe(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    # Patterns without the `u` flag see an astral character as two code units; each of
    # these patterns treats any non-ASCII unit alike, so the code point stands for both.
    return lambda value: pattern.match(value) is not None


def is_iri(value: str) -> bool:
    """TypeBox IsIri: ``new URL(value)`` does not throw."""
    return url_parses(value, base_is_http=False)


_CONTROL: Final = re.compile("[\x00-\x1f\x7f]")
_BAD_PERCENT: Final = re.compile("%(?![0-9a-fA-F]{2})")
_SCHEME_NAME: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9+\-.]*\Z")
_MALFORMED: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9+\-.]*//")


def is_iri_reference(value: str) -> bool:
    """TypeBox IsIriReference: no space, backslash, control or stray ``%``, then the URL
    parser with ``http://example.com`` as base (``scheme//`` without a colon fails)."""
    if " " in value or "\\" in value or _CONTROL.search(value) or _BAD_PERCENT.search(value):
        return False
    if value == "":
        return True
    colon = value.find(":")
    if colon > 0 and _SCHEME_NAME.match(value[:colon]):
        return url_parses(value, base_is_http=True)
    if _MALFORMED.match(value) and colon == -1:
        return False
    return url_parses(value, base_is_http=True)


def is_regex(value: str) -> bool:
    """TypeBox IsRegex: non-empty and ``new RegExp(value)`` (no flags) compiles."""
    if value == "":
        return False
    from pytest_entropy.core.js_regex import js_regex_compiles

    return js_regex_compiles(value, unicode=False)


FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "date-time": is_date_time,
    "date": is_date,
    "duration": lambda value: _DURATION.match(value) is not None,
    "email": is_email,
    "hostname": is_hostname,
    "idn-email": is_idn_email,
    "idn-hostname": is_idn_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "iri-reference": is_iri_reference,
    "iri": is_iri,
    "json-pointer-uri-fragment": _astral_safe(_POINTER_FRAGMENT),
    "json-pointer": _astral_safe(_JSON_POINTER),
    "regex": is_regex,
    "relative-json-pointer": _astral_safe(_RELATIVE_POINTER),
    "time": is_time,
    "uri-reference": is_uri_reference,
    "uri-template": _astral_safe(_URI_TEMPLATE),
    "uri": is_uri,
    "url": lambda value: _URL.match(value) is not None,
    "uuid": _astral_safe(_UUID),
}


def format_check(name: str) -> Callable[[str], bool] | None:
    """The check TypeBox registers for ``name``, or ``None`` (an unknown format passes)."""
    return FORMATS.get(name)
