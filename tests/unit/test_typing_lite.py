"""The run-time stand-ins of typing's names (core/typing_lite.py, issue 32).

Each behaves, where the package uses it, as typing's own object does: the classes a
``NamedTuple`` body builds are compared with typing's, field by field, and the errors with
typing's messages.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import typing

import pytest

from pytest_entropy.core import typing_lite

# What the interpreter sees (the module's TYPE_CHECKING branch is for the type checker only).
lite = typing_lite


def _build(base: object) -> type:
    namespace: dict[str, object] = {}
    exec(
        "class Row(base):\n"
        "    '''A row.'''\n"
        "    name: 'str'\n"
        "    count: 'int' = 0\n"
        "    tags: 'tuple[str, ...]' = ()\n"
        "    def total(self):\n"
        "        return self.count + len(self.tags)\n"
        "    @property\n"
        "    def label(self):\n"
        "        return self.name.upper()\n",
        {"base": base, "__name__": "tests.unit.test_typing_lite"},
        namespace,
    )
    return namespace["Row"]


def test_the_module_is_not_typing_at_run_time() -> None:
    assert lite.NamedTuple is not typing.NamedTuple
    assert lite.cast is not typing.cast


def test_a_named_tuple_is_what_typing_builds() -> None:
    ours, theirs = _build(lite.NamedTuple), _build(typing.NamedTuple)
    assert ours.__bases__ == theirs.__bases__ == (tuple,)
    assert ours._fields == theirs._fields == ("name", "count", "tags")
    assert ours._field_defaults == theirs._field_defaults == {"count": 0, "tags": ()}
    assert ours.__doc__ == theirs.__doc__ == "A row."
    assert ours.__module__ == theirs.__module__
    assert list(ours.__annotations__) == list(theirs.__annotations__)
    for row_class in (ours, theirs):
        row = row_class("a", 2, ("x",))
        assert row == ("a", 2, ("x",))
        assert row.total() == 3 and row.label == "A"
        assert repr(row) == "Row(name='a', count=2, tags=('x',))"
        assert row._replace(count=5).count == 5
        assert row._asdict() == {"name": "a", "count": 2, "tags": ("x",)}
        assert row_class("b") == ("b", 0, ())
        with pytest.raises(TypeError):
            row_class()


def test_a_named_tuple_pickles_by_its_module_name() -> None:
    row = Point(1, 2)
    assert pickle.loads(pickle.dumps(row)) == row
    assert type(pickle.loads(pickle.dumps(row))) is Point


class Point(lite.NamedTuple):
    x: int
    y: int = 0


@pytest.mark.parametrize(
    "body",
    [
        "    a: int = 0\n    b: int\n",
        "    a: int = 0\n    b: int = 1\n    c: int\n",
        "    _fields: int\n    x: int\n",
        "    x: int\n    def _asdict(self):\n        return {}\n",
        "    x: int\n    __slots__ = ()\n",
    ],
)
def test_a_named_tuple_refuses_what_typing_refuses(body: str) -> None:
    errors = []
    for base in (lite.NamedTuple, typing.NamedTuple):
        with pytest.raises((TypeError, AttributeError, ValueError)) as caught:
            exec(f"class Bad(base):\n{body}", {"base": base, "__name__": "m"}, {})
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1]


def test_a_named_tuple_has_one_base() -> None:
    with pytest.raises(TypeError, match="can only inherit from a NamedTuple type"):
        exec("class Bad(base, int):\n    x: int\n", {"base": lite.NamedTuple, "__name__": "m"}, {})


def test_a_typed_dict_builds_a_plain_dict() -> None:
    class Options(lite.TypedDict, total=False):
        engine: str
        jobs: int

    made = Options(engine="local", jobs=2)
    assert type(made) is dict and made == {"engine": "local", "jobs": 2}
    assert Options() == {}
    assert Options({"jobs": 1}) == {"jobs": 1}


def test_cast_overload_and_type_variables_do_nothing() -> None:
    value = object()
    assert lite.cast("list[int]", value) is value
    assert lite.cast(int, value) is value

    def function() -> int:
        return 1

    assert lite.overload(function) is function
    variable = lite.TypeVar("ItemT", bound="int", covariant=True)
    assert variable.__name__ == "ItemT" and repr(variable) == "~ItemT"
    assert lite.AnyStr.__name__ == "AnyStr"


def test_generic_and_protocol_bases_are_plain_classes() -> None:
    item = lite.TypeVar("item")

    class Box(lite.Generic[item]):
        def __init__(self, content: object) -> None:
            self.content = content

    class Sink(lite.Protocol):
        def add(self, value: object) -> None: ...

    assert Box[int] is Box  # subscription gives the class back
    assert Box(3).content == 3
    assert Box.__mro__[1:] == (lite.Generic, lite._Subscriptable, object)
    assert Sink[int] is Sink
    assert Sink.add(Sink(), 1) is None


def test_importing_the_package_s_records_needs_no_typing() -> None:
    # The modules a command loads take their run-time names from here, not from typing.
    code = (
        "import sys\n"
        "import pytest_entropy.core.records, pytest_entropy.core.patterns\n"
        "import pytest_entropy.run.executor, pytest_entropy.cli.common\n"
        "print('typing' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
