"""The few :mod:`typing` names a module needs at run time, without importing :mod:`typing`.

Importing :mod:`typing` costs a command about a tenth of a demo ``measure`` (issue 32,
item 2), while the package uses it almost only in annotations, which ``from __future__
import annotations`` never evaluates. The modules on a command's way import typing's names
under ``if TYPE_CHECKING:`` and take from here the handful that run: a type checker (and
ruff, through ``typing-modules``) sees typing's own objects, the interpreter sees these
stand-ins, which behave as the package uses them:

* :func:`cast` returns its value (its kind is best given as a string);
* :func:`overload` returns the function; the last definition is the one that runs;
* :func:`TypeVar` gives a named placeholder, and ``Generic[...]`` and ``Protocol`` (also
  subscripted) are plain bases without behaviour;
* ``class Row(NamedTuple)`` builds the class :func:`collections.namedtuple` builds, with
  the defaults, methods, docstring and annotations of the body, and refuses what
  :class:`typing.NamedTuple` refuses, with its messages;
* ``class Options(TypedDict, total=False)`` makes ``Options(...)`` a plain :class:`dict`.

``AnyStr`` is a :func:`TypeVar` here as there. Nothing else of :mod:`typing` is offered:
a module that needs more at run time imports :mod:`typing` itself.
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False  # mypy reads any name TYPE_CHECKING as true; typing stays unimported
if TYPE_CHECKING:
    from typing import AnyStr as AnyStr
    from typing import Generic as Generic
    from typing import NamedTuple as NamedTuple
    from typing import Protocol as Protocol
    from typing import TypedDict as TypedDict
    from typing import TypeVar as TypeVar
    from typing import cast as cast
    from typing import overload as overload
else:

    def cast(kind, value):
        """The value, unchanged (what :func:`typing.cast` does at run time)."""
        return value

    def overload(function):
        """The function, unchanged: its last definition replaces the overloads."""
        return function

    class _Placeholder:
        """What :func:`TypeVar` returns: a name and nothing more."""

        __slots__ = ("__name__",)

        def __init__(self, name):
            self.__name__ = name

        def __repr__(self):
            return f"~{self.__name__}"

    def TypeVar(name, *constraints, bound=None, covariant=False, contravariant=False):
        """A named placeholder for a type variable; its bounds and variance are for the checker."""
        return _Placeholder(name)

    AnyStr = TypeVar("AnyStr")

    class _Subscriptable:
        """A plain base class that accepts ``Base[...]`` and gives itself back."""

        __slots__ = ()

        def __class_getitem__(cls, parameters):
            return cls

    class Generic(_Subscriptable):
        """``Generic[T]`` as a base: nothing at run time."""

        __slots__ = ()

    class Protocol(_Subscriptable):
        """A protocol as a base: a plain class at run time (no structural ``isinstance``)."""

        __slots__ = ()

    _NAMEDTUPLE_PROHIBITED = frozenset(
        {
            "__new__",
            "__init__",
            "__slots__",
            "__getnewargs__",
            "_fields",
            "_field_defaults",
            "_make",
            "_replace",
            "_asdict",
            "_source",
        }
    )
    _NAMEDTUPLE_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(mcls, name, bases, namespace):
            if not bases:  # NamedTuple itself
                return super().__new__(mcls, name, bases, namespace)
            if bases != (NamedTuple,):
                raise TypeError("can only inherit from a NamedTuple type and Generic")
            annotations = namespace.get("__annotations__", {})
            defaulted = []
            for field_name in annotations:
                if field_name in namespace:
                    defaulted.append(field_name)
                elif defaulted:
                    raise TypeError(
                        f"Non-default namedtuple field {field_name} cannot follow default field"
                        f"{'s' if len(defaulted) > 1 else ''} {', '.join(defaulted)}"
                    )
            built = namedtuple(
                name,
                list(annotations),
                defaults=[namespace[field_name] for field_name in defaulted],
                module=namespace["__module__"],
            )
            built.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key in _NAMEDTUPLE_PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _NAMEDTUPLE_SPECIAL and key not in built._fields:
                    setattr(built, key, value)
            return built

    class NamedTuple(metaclass=_NamedTupleMeta):
        """Base of a class whose annotated body becomes a :func:`collections.namedtuple`."""

    class _TypedDictMeta(type):
        def __new__(mcls, name, bases, namespace, total=True):
            # ``total`` is for the checker; type() itself would pass it to __init_subclass__.
            return super().__new__(mcls, name, bases, namespace)

        def __call__(cls, *args, **kwargs):
            return dict(*args, **kwargs)

    class TypedDict(metaclass=_TypedDictMeta):
        """Base of a dictionary's declared keys: calling the class gives a plain dict."""


__all__ = [
    "AnyStr",
    "Generic",
    "NamedTuple",
    "Protocol",
    "TypeVar",
    "TypedDict",
    "cast",
    "overload",
]
