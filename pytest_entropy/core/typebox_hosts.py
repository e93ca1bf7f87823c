"""Hosts and URLs as TypeBox 1.3.8's formats judge them (``format/_idna.mjs``,
``_puny.mjs``, ``hostname.mjs``, ``idn_hostname.mjs``, ``ipv4.mjs``, ``ipv6.mjs``) and as the
WHATWG URL parser behind its ``iri`` formats refuses them (``new URL``).

:func:`url_parses` follows that parser's failure rules for the parts a value can fail on
(scheme, authority, host, port) without building the URL.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from typing import Final

__all__ = ["HEX", "is_hostname", "is_idn_hostname", "is_ipv4", "is_ipv6", "url_parses"]

# --------------------------------------------------------------------------- hosts


def _ascii_label(label: str) -> bool:
    if label[0] == "-" or label[-1] == "-":
        return False
    if len(label) >= 4 and label[2] == "-" and label[3] == "-":
        return False
    return all(c.isascii() and (c.isalnum() or c == "-") for c in label)


_PUNY_BASE, _PUNY_TMIN, _PUNY_TMAX, _PUNY_SKEW, _PUNY_DAMP = 36, 1, 26, 38, 700


def _adapt(delta: int, points: int, first: bool) -> int:
    delta = delta // _PUNY_DAMP if first else delta >> 1
    delta += delta // points
    k = 0
    while delta > ((_PUNY_BASE - _PUNY_TMIN) * _PUNY_TMAX) >> 1:
        delta //= _PUNY_BASE - _PUNY_TMIN
        k += _PUNY_BASE
    return k + ((_PUNY_BASE - _PUNY_TMIN + 1) * delta) // (delta + _PUNY_SKEW)


def _puny_decode(value: str) -> str | None:
    """TypeBox's Puny.Decode (RFC 3492); ``None`` where it throws."""
    output: list[int] = []
    n, i, bias = 128, 0, 72
    delimiter = value.rfind("-")
    if delimiter > 0:
        for char in value[:delimiter]:
            if ord(char) >= 128:
                return None
            output.append(ord(char))
    index = 0 if delimiter < 0 else delimiter + 1
    while index < len(value):
        old, weight, k = i, 1, _PUNY_BASE
        while True:
            if index >= len(value):
                return None
            code = ord(value[index])
            index += 1
            if 0x61 <= code <= 0x7A:
                digit = code - 0x61
            elif 0x30 <= code <= 0x39:
                digit = code - 0x30 + 26
            else:
                return None
            i += digit * weight
            t = _PUNY_TMIN if k <= bias else _PUNY_TMAX if k >= bias + _PUNY_TMAX else k - bias
            if digit < t:
                break
            weight *= _PUNY_BASE - t
            k += _PUNY_BASE
        size = len(output) + 1
        bias = _adapt(i - old, size, old == 0)
        n += i // size
        i %= size
        if n > 0x10FFFF:
            return None  # String.fromCodePoint throws a RangeError
        output.insert(i, n)
        i += 1
    return "".join(chr(point) for point in output)


_DISALLOWED: Final = frozenset(
    {0x0640, 0x07FA, 0x302E, 0x302F, 0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x303B}
)
_VIRAMAS: Final = frozenset(
    {
        0x094D, 0x09CD, 0x0A4D, 0x0ACD, 0x0B4D, 0x0BCD, 0x0C4D, 0x0CCD, 0x0D3B, 0x0D3C,
        0x0D4D, 0x0DCA, 0x1B44, 0x1BAA, 0x1BAB, 0xA9C0, 0x11046, 0x1107F, 0x110B9, 0x11133,
        0x11134, 0x111C0, 0x11235, 0x1134D, 0x11442, 0x114C2, 0x115BF, 0x1163F, 0x116B6,
        0x11C3F, 0x11D44, 0x11D45,
    }
)  # fmt: skip


def _script(point: int) -> str:
    import icu  # the ICU tables JavaScript's \p{Script=...} reads too

    return str(icu.Script.getScript(point).getShortName())


def _unicode_label(label: str) -> bool:
    """TypeBox IsUnicodeLabel (RFC 5891/5892 rules as it applies them)."""
    points = [ord(c) for c in label]
    if points[0] == 0x2D or points[-1] == 0x2D:
        return False
    if len(points) >= 4 and points[2] == 0x2D and points[3] == 0x2D:
        return False
    if unicodedata.category(label[0]) in ("Mn", "Mc", "Me"):
        return False
    japanese = arabic = extended = False
    for index, point in enumerate(points):
        if point in _DISALLOWED:
            return False
        if _script(point) in ("Hira", "Kana", "Hani"):
            japanese = True
        if 0x0660 <= point <= 0x0669:
            arabic = True
        if 0x06F0 <= point <= 0x06F9:
            extended = True
        before = points[index - 1] if index > 0 else None
        after = points[index + 1] if index + 1 < len(points) else None
        if point == 0x00B7 and (before != 0x6C or after != 0x6C):
            return False
        if point == 0x0375 and (after is None or _script(after) != "Grek"):
            return False
        if point in (0x05F3, 0x05F4) and (before is None or _script(before) != "Hebr"):
            return False
        if point == 0x200C and (before is None or (before < 0x80 and before not in _VIRAMAS)):
            return False
        if point == 0x200D and (before is None or before not in _VIRAMAS):
            return False
    if "\u30fb" in label and not japanese:
        return False
    return not (arabic and extended)


def _puny_label(label: str) -> bool:
    payload = label[4:].lower()
    if payload.rfind("-") == 0:
        return False
    decoded = _puny_decode(payload)
    if not decoded:
        return False
    return _unicode_label(decoded)


def _utf16_length(text: str) -> int:
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _label(label: str, unicode: bool) -> bool:
    if not label or _utf16_length(label) > 63:
        return False
    if label.lower().startswith("xn--"):
        return _puny_label(label)
    return _unicode_label(label) if unicode else _ascii_label(label)


def is_hostname(value: str) -> bool:
    """TypeBox IsHostname: at most 253 code units, no final dot, ASCII or xn-- labels."""
    if not value or _utf16_length(value) > 253 or value.endswith("."):
        return False
    return all(_label(label, False) for label in value.split("."))


def is_idn_hostname(value: str) -> bool:
    """TypeBox IsIdnHostname: NFC, the four full stops as dots, Unicode labels."""
    if not value or " " in value:
        return False
    canonical = re.sub("[.\u3002\uff0e\uff61]", ".", unicodedata.normalize("NFC", value))
    if _utf16_length(canonical) > 253:
        return False
    return all(_label(label, True) for label in canonical.split("."))


def _ipv4_span(value: str, start: int, end: int) -> bool:
    """TypeBox IsIPv4Internal: four dotted decimals up to 255, no leading zero."""
    dots = number = digits = 0
    leading = ""
    for char in value[start:end]:
        if char == ".":
            if digits == 0 or number > 255 or (leading == "0" and digits > 1):
                return False
            dots += 1
            number = digits = 0
            leading = ""
        elif "0" <= char <= "9":
            if digits == 0:
                leading = char
            number = number * 10 + ord(char) - 48
            digits += 1
        else:
            return False
    return dots == 3 and digits > 0 and number <= 255 and not (leading == "0" and digits > 1)


def is_ipv4(value: str) -> bool:
    """TypeBox IsIPv4."""
    return _ipv4_span(value, 0, len(value))


HEX: Final = frozenset("0123456789abcdefABCDEF")


def is_ipv6(value: str) -> bool:
    """TypeBox IsIPv6: its own scanner (at most one ``::``, an IPv4 tail, 4 hex digits)."""
    length = len(value)
    if length == 0:
        return False
    groups = 0
    compressed = False
    i = 0
    if value.startswith("::"):
        if length == 2:
            return True
        compressed = True
        i = 2
    while i < length:
        start = i
        while i < length and value[i] in HEX:
            i += 1
        digits = i - start
        if digits == 0:
            return False
        following = value[i] if i < length else ""
        if following == ".":
            if not _ipv4_span(value, start, length):
                return False
            groups += 2
            break
        if digits > 4:
            return False
        groups += 1
        if i == length:
            break
        if following != ":":
            return False
        i += 1
        if i < length and value[i] == ":":
            if compressed:
                return False
            if i + 1 < length and value[i + 1] == ":":
                return False
            compressed = True
            i += 1
            if i == length:
                break
    return groups <= 7 if compressed else groups == 8


# --------------------------------------------------------------------------- WHATWG URL

_SPECIAL: Final = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_FORBIDDEN_HOST: Final = frozenset("\0\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN: Final = _FORBIDDEN_HOST | frozenset("%\x7f") | frozenset(map(chr, range(0x20)))
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*:")


def _percent_decode(text: str) -> str:
    from urllib.parse import unquote

    return unquote(text, errors="surrogateescape")


def _ipv4_number(part: str) -> int | None:
    if part[:2].lower() == "0x":
        digits, base = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if digits == "":
        return 0
    try:
        return int(digits, base) if digits.isascii() and digits.isalnum() else None
    except ValueError:
        return None


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return _ipv4_number(last) is not None if last[:2].lower() == "0x" else False


def _ipv4_host(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return False
    numbers = [_ipv4_number(part) if part else None for part in parts]
    if any(number is None for number in numbers):
        return False
    values = [number for number in numbers if number is not None]
    if any(number > 255 for number in values[:-1]):
        return False
    return bool(values[-1] < 256 ** (5 - len(values)))


def _special_host(host: str) -> bool:
    if host.startswith("["):
        return host.endswith("]") and _ipv6_literal(host[1:-1])
    domain = _percent_decode(host)
    ascii_domain = _domain_to_ascii(domain)
    if ascii_domain is None:
        return False
    if not ascii_domain or any(c in _FORBIDDEN_DOMAIN for c in ascii_domain):
        return False
    for label in ascii_domain.split("."):
        if label.startswith("xn--") and not _valid_a_label(label[4:]):
            return False
    if _ends_in_number(ascii_domain):
        return _ipv4_host(ascii_domain)
    return True


def _domain_to_ascii(domain: str) -> str | None:
    # UTS 46 ToASCII as the URL standard runs it: map (not transitional, no STD3 rules),
    # then punycode each non-ASCII label; no IDNA2008 validity test, so an emoji host passes.
    if domain.isascii():
        return domain.lower()
    try:
        import idna

        mapped = idna.uts46_remap(domain, std3_rules=False, transitional=False)
        # UTS 46 validity: no label begins with a combining mark.
        if any(
            label and unicodedata.category(label[0]) in ("Mn", "Mc", "Me")
            for label in mapped.split(".")
        ):
            return None
        labels = [
            label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
            for label in mapped.split(".")
        ]
    except Exception:
        return None
    return ".".join(labels)


def _valid_a_label(payload: str) -> bool:
    # UTS 46 decodes an xn-- label and refuses one whose Unicode form is empty, all ASCII,
    # or holds a control, unassigned or private code point.
    decoded = _puny_decode(payload)
    if not decoded or decoded.isascii():
        return False
    return all(unicodedata.category(c) not in ("Cc", "Cn", "Co", "Cs") for c in decoded)


def _ipv6_literal(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _port(text: str) -> bool:
    return text == "" or (text.isascii() and text.isdigit() and int(text) <= 65535)


def _authority(authority: str, special: bool) -> bool:
    host_port = authority.rpartition("@")[2]
    if host_port.startswith("["):
        close = host_port.find("]")
        if close < 0:
            return False
        host, rest = host_port[: close + 1], host_port[close + 1 :]
        if rest and not (rest.startswith(":") and _port(rest[1:])):
            return False
        return _ipv6_literal(host[1:-1])
    host, colon, port = host_port.partition(":")
    if colon and not _port(port):
        return False
    if special:
        return bool(host) and _special_host(host)
    return not any(c in _FORBIDDEN_HOST for c in host)


def url_parses(value: str, base_is_http: bool) -> bool:
    """Whether ``new URL(value)`` (or ``new URL(value, "http://example.com")``) succeeds."""
    text = value.strip("".join(map(chr, range(0x21)))).translate({9: None, 10: None, 13: None})
    scheme = _SCHEME.match(text)
    if scheme is None:
        if not base_is_http:
            return False
        rest, special = text, True
        if not (rest.startswith("//") or rest.startswith("\\\\") or rest[:2] in ("/\\", "\\/")):
            return True
        rest = rest[2:]
    else:
        name = scheme.group()[:-1].lower()
        rest = text[scheme.end() :]
        special = name in _SPECIAL
        if name == "file":
            return True
        if special:
            rest = rest.lstrip("/\\")
        elif rest.startswith("//"):
            rest = rest[2:]
        else:
            return True
    end = len(rest)
    for index, char in enumerate(rest):
        if char in "/?#" or (special and char == "\\"):
            end = index
            break
    return _authority(rest[:end], special)
