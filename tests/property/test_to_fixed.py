"""``js_to_fixed`` is ``Number.prototype.toFixed``: the double's exact value rounded half
away from zero (spec pitfall 3), computed in integers (issue 32: the demo ``measure`` no
longer imports :mod:`decimal` for it).

The oracle is the same rounding done by :mod:`decimal` with a context wide enough for any
double and any digit count JavaScript allows (0 to 100), so the comparison covers the whole
range, not only what 28 significant digits can hold.
"""

from __future__ import annotations

import decimal
import math

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_entropy.core.jscompat import js_to_fixed

# 1e21 has 22 integer digits, the smallest subnormal 1074 decimal places: 1200 is plenty.
_WIDE = decimal.Context(prec=1200, rounding=decimal.ROUND_HALF_UP)


def _exact_to_fixed(x: float, digits: int) -> str:
    sign = "-" if x < 0 else ""
    quantum = decimal.Decimal(1).scaleb(-digits)
    rounded = decimal.Decimal(abs(x)).quantize(quantum, context=_WIDE)
    return sign + format(rounded, "f")


@given(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e21, max_value=1e21).filter(
        lambda x: abs(x) < 1e21
    ),
    st.integers(min_value=0, max_value=100),
)
@example(0.0078125, 6)  # the spec's example: a tie, away from zero
@example(2.5, 0)
@example(1.005, 2)  # 1.00499999999999989...: no tie
@example(-1e-9, 3)  # JavaScript keeps the sign: "-0.000"
@example(-0.0, 2)  # but not of minus zero: "0.00"
@example(5e-324, 100)
@example(9.999999999999999e20, 100)
def test_to_fixed_is_the_exact_value_rounded_half_up(x: float, digits: int) -> None:
    assert js_to_fixed(x, digits) == _exact_to_fixed(x, digits)


def test_the_other_numbers_print_as_javascript_does() -> None:
    assert js_to_fixed(math.nan, 2) == "NaN"
    assert js_to_fixed(math.inf, 2) == "Infinity"
    assert js_to_fixed(-math.inf, 0) == "-Infinity"
    assert js_to_fixed(1e21, 2) == "1e+21"
    assert js_to_fixed(-0.0, 0) == "0"
