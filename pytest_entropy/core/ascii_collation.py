"""ICU's collation of printable-ASCII object keys, without ICU.

The canonical JSON orders object keys as JavaScript's ``localeCompare`` (ICU, root
collation); loading ICU and asking it for sort keys costs more than most commands' report
writing. For keys made of printable ASCII only, the order is simple enough to compute:
see :func:`ascii_collation_key`. ``canonical._order_keys`` uses it when every key of a set
qualifies; any other key set still goes to ICU.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final


__all__ = ["ascii_collation_key"]

# ICU's root collation (localeCompare) of printable ASCII: every character has one primary
# weight, in this order, a letter's two cases sharing one; strings compare by their primary
# weights, then, primaries equal, by case, lowercase first (the tertiary level). No
# contraction, no ignorable character, no secondary difference. The table was checked
# against ICU for all 866,496 strings of up to three printable characters;
# tests/property/test_canonical_routes.py checks every string of up to two, a sample of
# three and generated longer ones.
_ASCII_COLLATION_ORDER: Final = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789" + "".join(
    chr(c) + chr(c).upper() for c in range(ord("a"), ord("z") + 1)
)


def _primary_table() -> dict[int, int]:
    table: dict[int, int] = {}
    weight = 0x20
    for ch in _ASCII_COLLATION_ORDER:
        if ch.isupper():
            table[ord(ch)] = table[ord(ch.lower())]
            continue
        weight += 1
        table[ord(ch)] = weight
    return table


_ASCII_PRIMARY: Final = _primary_table()


def ascii_collation_key(key: str) -> tuple[str, str]:
    """A sort key of a printable ASCII string under which Python orders as ICU collates:
    the primary weights, then the case of each letter (swapped: lowercase sorts first)."""
    return key.translate(_ASCII_PRIMARY), key.swapcase()
