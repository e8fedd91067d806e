"""A lean `dataclass` for crashlens's own record types: the subset of dataclasses that crashlens uses.

dataclasses.dataclass builds half a dozen methods per class with exec and, with slots=True, builds
the class twice: about 1.3 ms a class, and a scan imports 27 of them (a third of its import time).
This version builds one method with exec (__init__) and shares the rest, for about an eighth of that (27 classes: 4 ms instead of 31).
It supports what crashlens uses: fields with defaults and `field(default=..., default_factory=...)`,
frozen classes (hashable, compared by their fields unless eq=False), `__post_init__`, and `replace`. `slots` is
accepted and ignored: instances keep a __dict__.

Type checkers see dataclasses itself (the TYPE_CHECKING branch), so they check the real semantics.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from dataclasses import dataclass, field, replace
    from typing import Any
else:
    _MISSING = object()

    class _Field:
        __slots__ = ("default", "factory")

        def __init__(self, default: Any, factory: Any) -> None:
            self.default = default
            self.factory = factory

    def field(*, default: Any = _MISSING, default_factory: Any = _MISSING) -> Any:
        return _Field(default, default_factory)

    class FrozenInstanceError(AttributeError):
        pass

    def _frozen_setattr(self: Any, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def _frozen_delattr(self: Any, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _repr(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__struct_fields__)
        return f"{type(self).__qualname__}({inner})"

    def _eq(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__struct_fields__)

    def _hash(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in self.__struct_fields__))

    def _build(cls: type, frozen: bool, eq: bool) -> type:
        names: list[str] = []
        defaults: dict[str, _Field] = {}
        for base in reversed(cls.__mro__[1:]):
            for n in getattr(base, "__struct_fields__", ()):
                if n not in names:
                    names.append(n)
                if n in getattr(base, "__struct_defaults__", {}):
                    defaults[n] = base.__struct_defaults__[n]
        for n, ann in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 - own fields only
            if isinstance(ann, str) and ann.startswith(("ClassVar", "typing.ClassVar")):
                continue
            if n not in names:
                names.append(n)
            value = cls.__dict__.get(n, _MISSING)
            if isinstance(value, _Field):
                defaults[n] = value
                if value.default is _MISSING:
                    delattr(cls, n)
                else:
                    setattr(cls, n, value.default)
            elif value is not _MISSING:
                defaults[n] = _Field(value, _MISSING)
        args, body, env = ["self"], [], {"_MISSING": _MISSING}
        for n in names:
            d = defaults.get(n)
            if d is None:
                if len(args) > 1 and "=" in args[-1]:
                    raise TypeError(f"{cls.__name__}: non-default field {n!r} follows a default one")
                args.append(n)
            elif d.factory is not _MISSING:
                args.append(f"{n}=_MISSING")
                env[f"_f_{n}"] = d.factory
                body.append(f" if {n} is _MISSING: {n} = _f_{n}()")
            else:
                args.append(f"{n}=_d_{n}")
                env[f"_d_{n}"] = d.default
        store = "self.__dict__" if frozen else None
        for n in names:
            body.append(f" _s['{n}'] = {n}" if store else f" self.{n} = {n}")
        if store:
            body.insert(0, f" _s = {store}")
        if hasattr(cls, "__post_init__"):
            body.append(" self.__post_init__()")
        src = f"def __init__({', '.join(args)}):\n" + ("\n".join(body) or " pass") + "\n"
        exec(src, env)  # noqa: S102 - the source is built from the class's own field names
        init = env["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = init
        cls.__struct_fields__ = tuple(names)
        cls.__struct_defaults__ = defaults
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = _repr
        if eq and "__eq__" not in cls.__dict__:
            cls.__eq__ = _eq
            if "__hash__" not in cls.__dict__:
                cls.__hash__ = _hash if frozen else None
        if frozen:
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_delattr
        return cls

    def dataclass(cls: Any = None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True) -> Any:
        if cls is None:
            return lambda c: _build(c, frozen, eq)
        return _build(cls, frozen, eq)

    def replace(obj: Any, /, **changes: Any) -> Any:
        values = {n: getattr(obj, n) for n in obj.__struct_fields__}
        values.update(changes)
        return obj.__class__(**values)


__all__ = ["dataclass", "field", "replace"]
