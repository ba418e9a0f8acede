"""The algorithm registry: name -> module holding ``SPECS`` (imported lazily, so a cell compiles/loads
only the kernel it runs), then algorithms of other packages (entry points, ``banditrepro.plugins``:
the contract), looked up only for names that are not built in."""

from __future__ import annotations

import importlib
from typing import Any

from banditrepro import ReproError
from banditrepro.algorithms.base import AlgorithmSpec, Param, Privacy
from banditrepro.algorithms.builtin import MODULES

__all__ = ["AlgorithmSpec", "Param", "Privacy", "MODULES", "get", "names", "algorithm_id", "parse_algorithm_id"]



def names(plugins: bool = False) -> list[str]:
    """Built-in names; with ``plugins``, then the installed plugins' (scans the entry points)."""
    if not plugins:
        return list(MODULES)
    from banditrepro import plugins as ext

    return [*MODULES, *sorted(ext.entry_points())]


def get(name: str) -> AlgorithmSpec:
    if name not in MODULES:
        from banditrepro import plugins as ext

        spec = ext.load(name)
        if spec is None:
            known = ", ".join(names(plugins=True))
            raise ReproError(f"unknown algorithm {name!r} (known: {known}; others install as plugins)")
        return spec
    try:
        module = importlib.import_module(f"banditrepro.algorithms.{MODULES[name]}")
    except ModuleNotFoundError as exc:
        raise ReproError(f"algorithm {name!r} is registered but not implemented yet ({exc.name})") from None
    return module.SPECS[name]


def _fmt(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def algorithm_id(name: str, params: dict[str, Any] | None = None) -> str:
    """Canonical, file-name-safe id: name plus the non-default parameters, sorted.

    >>> algorithm_id("c2b-kl", {"B_offset": 6})
    'c2b-kl+B_offset=6'
    >>> algorithm_id("rucb", {"alpha": 0.51})
    'rucb'
    """
    spec = get(name)
    resolved = spec.resolve(params)
    extra = [f"{k}={_fmt(v)}" for k, v in sorted(resolved.items()) if v != spec.defaults[k]]
    return "+".join([name, *extra])


def parse_algorithm_id(algo_id: str) -> tuple[str, dict[str, Any]]:
    """Inverse of ``algorithm_id`` (values are coerced by the spec)."""
    name, *parts = algo_id.split("+")
    given = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep:
            raise ReproError(f"bad algorithm id {algo_id!r}: expected key=value after '+'")
        given[key] = value
    return name, get(name).resolve(given)
