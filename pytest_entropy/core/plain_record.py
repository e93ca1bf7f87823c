"""Records: slotted classes that behave like ``@dataclass(slots=True)`` at a fraction of the cost.

A dataclass compiles five or six methods when its module is imported, builds its class
twice (``slots=True``) and asks :mod:`inspect` for a signature, which imports ``inspect``,
``ast``, ``dis`` and ``tokenize`` with it: about 8 M instructions a class, more than half of
a demo ``measure`` before this module (issue 32, item 2). A :class:`Record` subclass is one
class, built once; its generic equality, hash, repr and pickling read the class's field
table, and only its ``__init__`` is generated, once the class has built
:data:`COMPILE_AFTER` instances through a generic binding of the same arguments (records
that are built a few times, only unpickled or never built cost no compilation).

    class Point(Record, frozen=True):
        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list, compare=False)

What a class gets, as from ``@dataclass(slots=True)`` (``frozen=True`` adding the frozen
behaviour): ``__slots__`` from the annotations of its body (``ClassVar`` skipped; the
modules use ``from __future__ import annotations``, so the annotations are strings), the
fields of record base classes first; an ``__init__`` with the same positional-or-keyword
parameters and defaults (which ``inspect.signature`` shows once it is generated), calling
``__post_init__`` when the class has one; ``==`` between instances of the same class over
the compared fields in order (else ``NotImplemented``);
a hash over them when frozen, none when mutable; ``Name(field=value, ...)`` as the repr;
assignment and deletion refused with :class:`FrozenRecordError` (an ``AttributeError``)
when frozen; pickling and :mod:`copy` that restore the fields without calling
``__init__``. :func:`replace` and :func:`field_names` stand for ``dataclasses.replace``
and ``dataclasses.fields``. Nothing here imports :mod:`typing` at run time; type checkers
see the metaclass through ``typing.dataclass_transform`` and check the constructors.
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # mypy reads any name TYPE_CHECKING as true; no typing import here
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, TypeVar, dataclass_transform

    RecordT = TypeVar("RecordT", bound="Record")
else:

    def dataclass_transform(**_options: object) -> Callable[[type], type]:
        return lambda cls: cls


__all__ = ["FrozenRecordError", "Record", "field", "field_names", "replace"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


class _Factory:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


MISSING: Any = _Missing()
_FACTORY: Any = _Factory()  # the default a factory's parameter shows (as dataclasses')


class FrozenRecordError(AttributeError):
    """An assignment to (or deletion of) a field of a frozen record."""


class Field:
    """One field of a record class: its name and annotation, default or default factory,
    and whether the repr shows it and equality (and the hash) compares it."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr", "type")

    def __init__(
        self,
        name: str,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        repr: bool = True,
        compare: bool = True,
    ) -> None:
        self.name = name
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare
        self.type: object = None

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] = MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field's default or default factory and whether it is shown and compared, as
    ``dataclasses.field``: ``tags: list[str] = field(default_factory=list)``."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("a field has a default or a default factory, not both")
    return Field("", default, default_factory, repr, compare)


def _values_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function from a record to the tuple of these fields' values (a tuple however many)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda record: (one(record),)
    return lambda record: ()


def _is_class_variable(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return isinstance(text, str) and text.partition("[")[0] in ("ClassVar", "typing.ClassVar")


@dataclass_transform(field_specifiers=(field,))
class RecordMeta(type):
    """Builds a record class from its body's annotations (see the module's docstring)."""

    __record_fields__: tuple[Field, ...]
    __record_frozen__: bool

    def __new__(
        mcls,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, Any],
        *,
        frozen: bool = False,
    ) -> RecordMeta:
        fields: dict[str, Field] = {}
        for base in reversed(bases):
            if not isinstance(base, RecordMeta) or not base.__record_fields__:
                continue
            if base.__record_frozen__ != frozen:
                raise TypeError(f"{name}: a frozen and a mutable record cannot inherit each other")
            fields.update((spec.name, spec) for spec in base.__record_fields__)
        inherited = set(fields)
        for field_name, annotation in _annotations(name, namespace).items():
            if _is_class_variable(annotation):
                continue
            given = namespace.pop(field_name, MISSING)
            spec = given if isinstance(given, Field) else Field(field_name, given)
            spec.name, spec.type = field_name, annotation
            default = spec.default
            if default is not MISSING and type(default).__hash__ is None:
                raise ValueError(f"{name}.{field_name}: a mutable default needs default_factory")
            fields[field_name] = spec
        specs = tuple(fields.values())
        _check_order(name, specs)
        namespace["__slots__"] = tuple(spec.name for spec in specs if spec.name not in inherited)
        namespace["__record_fields__"] = specs
        namespace["__record_frozen__"] = frozen
        names = tuple(spec.name for spec in specs)
        namespace["__match_args__"] = namespace["_record_names"] = names
        namespace["_record_values"] = staticmethod(_values_getter(names))
        compared = tuple(spec.name for spec in specs if spec.compare)
        namespace["_record_key"] = staticmethod(_values_getter(compared))
        namespace["_record_shown"] = tuple(spec.name for spec in specs if spec.repr)
        if frozen:
            namespace.setdefault("__setattr__", _refuse_assignment)
            namespace.setdefault("__delattr__", _refuse_deletion)
        elif "__hash__" not in namespace:
            namespace["__hash__"] = None  # mutable and compared by value: unhashable
        cls = super().__new__(mcls, name, bases, namespace)
        if "__init__" not in namespace:
            cls.__init__ = _deferred_init(cls)  # type: ignore[misc]
        return cls


def _annotations(name: str, namespace: dict[str, Any]) -> dict[str, Any]:
    annotations: dict[str, Any] | None = namespace.get("__annotations__")
    if annotations is None and any(key.startswith("__annotate") for key in namespace):
        # Python 3.14 evaluates the annotations of such a module lazily.
        raise TypeError(f"{name}: a record's module uses from __future__ import annotations")
    return annotations or {}


def _check_order(name: str, specs: tuple[Field, ...]) -> None:
    defaulted = ""
    for spec in specs:
        if spec.default is not MISSING or spec.default_factory is not MISSING:
            defaulted = spec.name
        elif defaulted:
            raise TypeError(f"{name}: field {spec.name!r} without a default follows {defaulted!r}")


def _refuse_assignment(self: Record, name: str, value: object) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")


def _refuse_deletion(self: Record, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")


# Instances a class builds through the generic binding before its own __init__ is
# compiled. Compiling one costs what 75 to 95 generic bindings cost over the generated
# __init__ (0.1 to 0.5 ms against 2 to 6 us an instance, for 4 to 38 fields: ValueObservation,
# EntropyConfig, ScanDiagnostics), so a class built a few times never pays for it and one
# built per line or per value soon runs at the generated speed (docs/decisions.md).
COMPILE_AFTER = 64


def _deferred_init(cls: RecordMeta) -> Callable[..., None]:
    """The class's ``__init__`` until it is generated: it binds the arguments generically
    (the same calls accepted, the same defaults) for the first :data:`COMPILE_AFTER`
    instances, then generates the class's own ``__init__`` and steps aside for it."""
    built = 0

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal built
        built += 1
        if built > COMPILE_AFTER:
            _generated_init(cls)(self, *args, **kwargs)
        else:
            _bind(cls, self, args, kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _bind(cls: RecordMeta, record: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """What the generated ``__init__`` does, for any record class, with its errors."""
    specs = cls.__record_fields__
    if len(args) > len(specs):
        least = 1 + sum(s.default is MISSING and s.default_factory is MISSING for s in specs)
        takes = f"from {least} to {len(specs) + 1}" if least <= len(specs) else f"{least}"
        raise TypeError(
            f"{cls.__qualname__}.__init__() takes {takes} positional"
            f" argument{'' if takes == '1' else 's'}"
            f" but {len(args) + 1} were given"
        )
    set_field = object.__setattr__ if cls.__record_frozen__ else setattr
    for index, spec in enumerate(specs):
        name = spec.name
        if index < len(args):
            if name in kwargs:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got multiple values for argument {name!r}"
                )
            value = args[index]
        elif name in kwargs:
            value = kwargs.pop(name)
        elif spec.default_factory is not MISSING:
            value = spec.default_factory()
        elif spec.default is not MISSING:
            value = spec.default
        else:
            raise TypeError(
                f"{cls.__qualname__}.__init__() missing 1 required positional argument: {name!r}"
            )
        set_field(record, name, value)
    if kwargs:
        raise TypeError(
            f"{cls.__qualname__}.__init__() got an unexpected keyword argument"
            f" {next(iter(kwargs))!r}"
        )
    if hasattr(cls, "__post_init__"):
        record.__post_init__()


def _generated_init(cls: RecordMeta) -> Callable[..., None]:
    """Compile and install ``cls.__init__``: the fields as parameters, in order, with their
    defaults (a factory's field defaults to a marker the body replaces with a new value)."""
    namespace: dict[str, Any] = {"__record_factory__": _FACTORY}
    parameters, body = ["self"], []
    frozen = cls.__record_frozen__
    if frozen:
        namespace["__record_set__"] = object.__setattr__
    for spec in cls.__record_fields__:
        name, value = spec.name, spec.name
        if spec.default_factory is not MISSING:
            namespace[f"__record_factory_{name}__"] = spec.default_factory
            parameters.append(f"{name}=__record_factory__")
            value = f"__record_factory_{name}__() if {name} is __record_factory__ else {name}"
        elif spec.default is not MISSING:
            namespace[f"__record_default_{name}__"] = spec.default
            parameters.append(f"{name}=__record_default_{name}__")
        else:
            parameters.append(name)
        body.append(
            f"    __record_set__(self, {name!r}, {value})\n"
            if frozen
            else f"    self.{name} = {value}\n"
        )
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()\n")
    source = f"def __init__({', '.join(parameters)}):\n{''.join(body) or '    pass'}\n"
    exec(source, namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {spec.name: spec.type for spec in cls.__record_fields__}
    init.__annotations__["return"] = None
    cls.__init__ = init  # type: ignore[misc]
    return init


class Record(metaclass=RecordMeta):
    """The base of record classes: ``class Name(Record)``, ``class Name(Record, frozen=True)``."""

    if TYPE_CHECKING:  # set on each class by the metaclass (no annotations: no fields)
        _record_names: ClassVar[tuple[str, ...]]

        @staticmethod
        def _record_values(record: Any) -> tuple[Any, ...]: ...

        @staticmethod
        def _record_key(record: Any) -> tuple[Any, ...]: ...

        _record_shown: ClassVar[tuple[str, ...]]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._record_key(self) == self._record_key(other))

    def __hash__(self) -> int:
        return hash(self._record_key(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._record_shown)
        return f"{type(self).__qualname__}({shown})"

    def __getstate__(self) -> tuple[Any, ...]:
        return self._record_values(self)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        set_field = object.__setattr__
        for spec, value in zip(type(self).__record_fields__, state, strict=True):
            set_field(self, spec.name, value)


def field_names(record: Record | type[Record]) -> tuple[str, ...]:
    """The names of a record's (or record class's) fields, in order."""
    return record._record_names


def replace(record: RecordT, /, **changes: Any) -> RecordT:
    """A new record of the same class with ``changes`` and the other fields' values (its
    ``__init__``, and so ``__post_init__``, runs), as ``dataclasses.replace``."""
    for name in record._record_names:
        if name not in changes:
            changes[name] = getattr(record, name)
    return type(record)(**changes)
