"""Field checks shared by scenario files (:mod:`bacepipe.model`) and sweep configs
(:mod:`bacepipe.sweep.config`).

Each check returns the value in its Python type or raises an
:class:`~bacepipe.errors.InputError` whose one-line message names the field it was given:
``regions[2].gpus: must be >= 0, got -1``. A field's rule is a check with its bounds bound,
``functools.partial(number, minimum=0.0, strict=True)``, called as ``rule(value, name)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from bacepipe.errors import InputError


def number(value, name: str, *, minimum: float | None = None, strict: bool = False,
           maximum: float | None = None, integer: bool = False) -> float | int:
    """A finite number (an int when ``integer``) in [minimum, maximum] ((minimum, …] when
    ``strict``). Messages quote an integer field's value as given and a real field's as a float
    (``got -1``, ``got -1.0``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(name, f"must be {'an integer' if integer else 'a number'}, got {value!r}")
    if not math.isfinite(value):
        raise InputError(name, f"must be finite, got {value!r}")
    if integer and value != int(value):
        raise InputError(name, f"must be an integer, got {value!r}")
    shown = repr(value if integer else float(value))
    if minimum is not None and strict and not value > minimum:
        raise InputError(name, f"must be > {minimum:g}, got {shown}")
    if minimum is not None and not strict and not value >= minimum:
        raise InputError(name, f"must be >= {minimum:g}, got {shown}")
    if maximum is not None and value > maximum:
        raise InputError(name, f"must be <= {maximum:g}, got {shown}")
    return int(value) if integer else float(value)


def text(value, name: str) -> str:
    """A string that is not blank."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(name, f"must be a non-empty string, got {value!r}")
    return value


def choice(value, name: str, options: Sequence[str]) -> str:
    """One of ``options``."""
    if value not in options:
        raise InputError(name, f"must be one of {', '.join(options)}, got {value!r}")
    return value


def flag(value, name: str) -> bool:
    """A boolean (no 0/1 or "yes")."""
    if not isinstance(value, bool):
        raise InputError(name, f"must be true or false, got {value!r}")
    return value


def mapping(value, name: str, allowed: Sequence[str]) -> Mapping:
    """A mapping whose keys are all in ``allowed`` (an unknown key is named ``name.key``)."""
    if not isinstance(value, Mapping):
        raise InputError(name, f"must be a mapping, got {type(value).__name__}")
    for key in value:
        if key not in allowed:
            raise InputError(f"{name}.{key}" if name else str(key),
                             f"unknown key (allowed: {', '.join(allowed)})")
    return value


def required(data: Mapping, key: str, name: str):
    """``data[key]``; missing or null is an error naming ``name.key``."""
    if key not in data or data[key] is None:
        raise InputError(f"{name}.{key}", "missing")
    return data[key]


def sequence(value, name: str) -> list:
    """A list or tuple (a string is not a list of its characters)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(name, f"must be a list, got {type(value).__name__}")
    return list(value)
