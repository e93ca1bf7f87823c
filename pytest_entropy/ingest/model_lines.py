"""How metric v3's session scanner differs from v2's (notes §1.1-§1.2), for ``native.py``.

With ``SessionScanner(metric_version=3)`` a session reads as the upstream's v3 scanner
reads it, in three places:

* its guard (``guard.py``) also accepts an operation's ``normalization`` witness, which
  v2's guard rejects as an unknown key;
* a trace line whose trace fails the guard (or has none) gives no audits either, where v2
  still harvests them;
* every parsed line moves the model cursor, a trace line too, and the model prefilter
  below allows whitespace around the colon (v2 needs the compact ``"type":"model_change"``).
"""

from __future__ import annotations

from pytest_entropy.core.patterns import LazyPattern
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION_V3, check_metric_version

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final

__all__ = ["METRIC_VERSION_V3", "is_model_line_v3", "metric_version_checked"]

METRIC_VERSION_V3: Final = ENTROPY_METRIC_VERSION_V3

# The upstream's prefilter is ``/"type"\s*:\s*"model_change"/`` or the same for the
# assistant role: JavaScript's ``\s`` (ASCII spaces and the Unicode spaces, here as their
# UTF-8 bytes) may stand on either side of the colon.
_JS_SPACES: Final = (
    rb"(?:[\t\n\v\f\r ]|\xc2\xa0|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
    rb"|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf)*"
)
# Compiled at the first v3 line read: a v2 run never pays for it.
_MODEL_LINE_V3: Final = LazyPattern(
    rb'"type"' + _JS_SPACES + rb":" + _JS_SPACES + rb'"model_change"'
    rb'|"role"' + _JS_SPACES + rb":" + _JS_SPACES + rb'"assistant"'
)


def is_model_line_v3(raw: bytes) -> bool:
    """Whether v3's prefilter reads ``raw`` (not a trace line) as a possible model line.

    >>> is_model_line_v3(b'{"type": "model_change"}'), is_model_line_v3(b'{"role":"user"}')
    (True, False)
    """
    return _MODEL_LINE_V3.search(raw) is not None


def metric_version_checked(metric_version: int) -> int:
    """The scanner's generation, 2 or 3 (``ValueError`` otherwise)."""
    return check_metric_version(metric_version)
