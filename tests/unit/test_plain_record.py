"""Records behave as the ``@dataclass(slots=True)`` classes they replaced (issue 32, item 2).

Each behaviour is checked against a real dataclass declared the same way, so the records
keep what their callers, the pickled parts and the reports' equality relied on.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
from typing import Any, ClassVar

import pytest

from pytest_entropy.core import plain_record
from pytest_entropy.core.plain_record import (
    FrozenRecordError,
    Record,
    field,
    field_names,
    replace,
)


class Point(Record, frozen=True):
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = field(default="", compare=False)
    secret: str = field(default="hidden", repr=False)
    kind: ClassVar[str] = "point"


@dataclasses.dataclass(frozen=True, slots=True)
class DataPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = dataclasses.field(default="", compare=False)
    secret: str = dataclasses.field(default="hidden", repr=False)
    kind: ClassVar[str] = "point"


class Bag(Record):
    name: str
    items: list[int] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    size: int = 0

    def __post_init__(self) -> None:
        self.size = len(self.items)


class LabelledBag(Bag):
    label: str | None = None


class Empty(Record, frozen=True):
    pass


@pytest.fixture(autouse=True, params=["bound", "generated"])
def init_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: through the generic binding a class's first instances use, and
    through the generated ``__init__`` the later ones use."""
    for cls in (Point, Bag, LabelledBag, Empty):
        stand_in = plain_record._deferred_init(cls)
        monkeypatch.setattr(cls, "__init__", stand_in)
        if request.param == "generated":
            plain_record._generated_init(cls)
    return str(request.param)


def test_the_init_has_the_dataclass_s_signature(init_path: str) -> None:
    if init_path == "generated":
        assert str(inspect.signature(Point)) == str(inspect.signature(DataPoint))

    class Fresh(Record):
        name: str
        items: list[int] = field(default_factory=list)

    # Until its __init__ is generated a class shows the stand-in that binds generically.
    for _ in range(plain_record.COMPILE_AFTER):
        Fresh("a")
        assert str(inspect.signature(Fresh)) == "(*args: 'Any', **kwargs: 'Any') -> 'None'"
    Fresh("a")
    assert str(inspect.signature(Fresh)) == (
        "(name: 'str', items: 'list[int]' = <factory>) -> None"
    )
    assert field_names(Point) == ("x", "y", "tags", "note", "secret")
    assert field_names(Point(1)) == field_names(Point)
    assert Point.kind == "point" and "kind" not in vars(Point)["__slots__"]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "missing 1 required positional argument: 'x'"),
        ((1,), {"z": 2}, "got an unexpected keyword argument 'z'"),
        ((1,), {"x": 2}, "got multiple values for argument 'x'"),
        ((1, 2, (), "", "", 3), {}, "takes from 2 to 6 positional arguments but 7 were given"),
    ],
)
def test_a_wrong_call_is_refused_as_the_dataclass_refuses_it(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        Point(*args, **kwargs)
    with pytest.raises(TypeError, match=message):
        DataPoint(*args, **kwargs)


def test_positional_keyword_and_default_arguments() -> None:
    assert Point(1, 2, ("a",)) == Point(x=1, tags=("a",), y=2)
    point = Point(3)
    assert (point.x, point.y, point.tags, point.note, point.secret) == (3, 0, (), "", "hidden")


def test_equality_and_hash_over_the_compared_fields_in_order() -> None:
    assert Point(1, note="a") == Point(1, note="b")
    assert Point(1) != Point(2)
    assert (
        hash(Point(1, 2, note="a")) == hash(DataPoint(1, 2, note="a")) == hash((1, 2, (), "hidden"))
    )
    assert len({Point(1), Point(1, note="other"), Point(2)}) == 2
    # Another class with the same fields is not equal (NotImplemented both ways).
    assert Point(1) != DataPoint(1)
    assert Point(1).__eq__(DataPoint(1)) is NotImplemented
    assert Bag("a") == Bag("a") and Bag("a") != LabelledBag("a")
    assert Empty() == Empty() and hash(Empty()) == hash(())


def test_mutable_records_are_unhashable() -> None:
    assert Bag.__hash__ is None
    with pytest.raises(TypeError):
        hash(Bag("a"))


def test_the_repr_is_the_dataclass_s() -> None:
    shown = repr(Point(1, 2, ("a",), note="n"))
    assert shown == "Point(x=1, y=2, tags=('a',), note='n')"
    assert shown.replace("Point", "DataPoint", 1) == repr(DataPoint(1, 2, ("a",), note="n"))
    assert repr(Bag("b", [1])) == "Bag(name='b', items=[1], seen=set(), size=1)"
    assert repr(Empty()) == "Empty()"


def test_a_frozen_record_refuses_assignment_and_deletion() -> None:
    point = Point(1)
    with pytest.raises(FrozenRecordError, match="cannot assign to field 'x'"):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.y
    with pytest.raises(AttributeError):
        point.other = 1  # type: ignore[attr-defined]
    assert point.x == 1


def test_slots_and_no_instance_dictionary() -> None:
    assert vars(Point)["__slots__"] == ("x", "y", "tags", "note", "secret")
    assert vars(LabelledBag)["__slots__"] == ("label",)
    assert not hasattr(Point(1), "__dict__")
    bag = Bag("a")
    with pytest.raises(AttributeError):
        bag.unknown = 1  # type: ignore[attr-defined]


def test_default_factories_give_each_instance_its_own_value() -> None:
    first, second = Bag("a"), Bag("b")
    first.items.append(1)
    assert second.items == [] and first.items is not second.items
    given = [4, 5]
    assert Bag("c", given).items is given


def test_post_init_runs_after_the_fields_are_set() -> None:
    assert Bag("a", [1, 2]).size == 2
    assert LabelledBag("a", [1], label="l").size == 1


def test_a_subclass_adds_fields_after_its_base_s() -> None:
    bag = LabelledBag("a", [1], {"s"}, 9, "label")
    assert field_names(LabelledBag) == ("name", "items", "seen", "size", "label")
    assert bag.label == "label" and bag.size == 1  # __post_init__ reset it
    assert isinstance(bag, Bag)
    assert repr(bag) == "LabelledBag(name='a', items=[1], seen={'s'}, size=1, label='label')"


def test_replace_builds_a_new_record_through_init() -> None:
    point = Point(1, 2, note="n")
    moved = replace(point, y=5)
    assert moved == Point(1, 5) and moved.note == "n" and point.y == 2
    assert replace(Bag("a"), items=[1, 2, 3]).size == 3  # __post_init__ ran
    with pytest.raises(TypeError):
        replace(point, z=1)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trips(protocol: int) -> None:
    for record in (Point(1, 2, ("a",), note="n"), LabelledBag("a", [1], {"x"}, label="l"), Empty()):
        back = pickle.loads(pickle.dumps(record, protocol))
        assert back == record and type(back) is type(record)
        assert repr(back) == repr(record)


def test_copy_and_deepcopy() -> None:
    point = Point(1, tags=("a",), note="n")
    assert copy.copy(point) == point and copy.copy(point).note == "n"
    assert copy.deepcopy(point) == point
    bag = Bag("a", [1])
    deep = copy.deepcopy(bag)
    assert deep == bag and deep.items is not bag.items
    shallow = copy.copy(bag)
    assert shallow.items is bag.items


def test_class_definitions_are_checked() -> None:
    with pytest.raises(TypeError, match="without a default"):

        class Misordered(Record):
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(ValueError, match="default_factory"):

        class Shared(Record):
            a: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="frozen and a mutable"):

        class Thawed(Point):  # type: ignore[misc]
            z: int = 0

    with pytest.raises(ValueError, match="not both"):
        field(default=1, default_factory=int)


def test_a_record_class_s_own_methods_stay() -> None:
    class Named(Record, frozen=True):
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __hash__(self) -> int:
            return 7

    assert repr(Named("n")) == "<n>" and hash(Named("n")) == 7


def test_the_module_imports_neither_dataclasses_nor_typing() -> None:
    code = (
        "import sys\n"
        "from pytest_entropy.core import plain_record\n"
        "class R(plain_record.Record, frozen=True):\n"
        "    a: int\n"
        "print(R(1) == R(1), sorted({'dataclasses', 'inspect', 'typing'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "[]"]
