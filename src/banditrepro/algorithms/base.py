"""What every algorithm module exports: an immutable ``AlgorithmSpec`` named ``SPEC``.

A spec holds the parameter schema (types, defaults, bounds), the citation, whether the algorithm is a
reconstruction, and ``run``: a thin Python wrapper that resolves parameters and calls the compiled
kernel. Kernels share one contract:

    kernel(<instance arrays>, T, tab, grid, rng, <params>) -> (out[M, G], n_batches, steps)

``tab``/``grid``/``out`` are those of ``banditrepro.recorder``; ``rng`` is the cell's
``np.random.Generator`` (never a default argument); ``steps`` must equal T.

Facts the pipeline reads from a spec besides the kernel (defaults for a plugin that gives none):

- ``ns_per_step``: kernel nanoseconds per step, the job-size estimate of ``banditrepro.jobsize`` (default
  ``DEFAULT_NS_PER_STEP`` = 200, a slow kernel: jobs then hold fewer runs, never too many);
- ``colour``: the line colour in every figure, a matplotlib colour (default: one of ``PLUGIN_COLOURS``
  chosen by a CRC-32 of the name, so a plugin keeps its colour from run to run);
- ``privacy``: optional ``Privacy`` accounting; an algorithm with one joins the DP-TS-UCB paper's privacy
  tables and its privacy–regret frontier (default None: not private).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from banditrepro import ReproError

_TYPES = {"float": float, "int": int, "bool": bool, "str": str}
DEFAULT_NS_PER_STEP = 200  # an algorithm not measured yet (e.g. a plugin): assume a slow kernel
# tab20 colours no built-in algorithm uses as its own (built-ins are listed in their specs)
PLUGIN_COLOURS = ("#7f7f7f", "#aec7e8", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#5254a3")


@dataclass(frozen=True)
class Privacy:
    """How private an algorithm is at horizon T: ``kind`` "gdp" (η-GDP: ``level`` gives η; its (ε, δ(ε)) curve
    follows from Theorem 2.4 of Dong et al.) or "pure" ((ε, 0)-DP: ``level`` gives ε). ``level(params, T)``
    takes the resolved parameters; ``formula`` states the guarantee for tables, with ``{name}`` fields filled
    from the parameters (``str.format``)."""

    kind: str
    level: Callable[[dict, int], float]
    formula: str

    def __post_init__(self):
        if self.kind not in ("gdp", "pure"):
            raise ReproError(f"privacy kind must be 'gdp' or 'pure', not {self.kind!r}")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "float" | "int" | "bool" | "str"
    default: Any
    doc: str
    low: float | None = None  # inclusive bounds unless *_open
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_none: bool = False  # None = "derive from the horizon" (documented per parameter)
    choices: tuple = ()  # for "str" parameters: the allowed values (empty = any)

    def coerce(self, algorithm: str, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            if self.allow_none:
                return None
            raise ReproError(f"{algorithm}: parameter {self.name} needs a value")
        try:
            if self.kind == "bool" and isinstance(value, str):
                v = {"true": True, "false": False, "1": True, "0": False}[value.lower()]
            elif self.kind == "int" and isinstance(value, float):
                if not value.is_integer():
                    raise ValueError
                v = int(value)
            else:
                v = _TYPES[self.kind](value)
        except (ValueError, KeyError):
            raise ReproError(f"{algorithm}: parameter {self.name}={value!r} is not a {self.kind}") from None
        if self.kind == "int" and not -(2**63) <= v < 2**63:  # kernels take int64
            raise ReproError(f"{algorithm}: parameter {self.name}={value!r} does not fit a 64-bit integer")
        if self.choices and v not in self.choices:
            raise ReproError(f"{algorithm}: parameter {self.name} must be one of {', '.join(self.choices)}, got {v!r}")
        if self.kind in ("float", "int"):
            if self.kind == "float" and not math.isfinite(v):
                raise ReproError(f"{algorithm}: parameter {self.name} must be finite, got {v}")
            if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
                op = ">" if self.low_open else ">="
                raise ReproError(f"{algorithm}: parameter {self.name} must be {op} {self.low:g}, got {v:g}")
            if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
                op = "<" if self.high_open else "<="
                raise ReproError(f"{algorithm}: parameter {self.name} must be {op} {self.high:g}, got {v:g}")
        return v


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    label: str  # legend text; reconstructions carry "(reconstructed)"
    problem: str  # "duel" | "mab"
    citation: str
    run: Callable = field(repr=False)
    params: tuple[Param, ...] = ()
    reconstructed: bool = False
    batched: bool = False
    ns_per_step: float | None = None  # None: DEFAULT_NS_PER_STEP
    colour: str | None = None  # None: a PLUGIN_COLOURS entry picked by the name
    privacy: Privacy | None = None

    @property
    def cost_ns_per_step(self) -> float:
        return float(self.ns_per_step) if self.ns_per_step else float(DEFAULT_NS_PER_STEP)

    @property
    def line_colour(self) -> str:
        if self.colour:
            return self.colour
        return PLUGIN_COLOURS[zlib.crc32(self.name.encode()) % len(PLUGIN_COLOURS)]

    @property
    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """Defaults overlaid with ``given``; unknown keys and bad values raise ``ReproError``."""
        given = dict(given or {})
        by_name = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(by_name))
        if unknown:
            known = ", ".join(by_name) or "none"
            raise ReproError(f"{self.name}: unknown parameter {unknown[0]!r} (known: {known})")
        return {p.name: p.coerce(self.name, given.get(p.name, p.default)) for p in self.params}

    def check_instance(self, instance) -> None:
        if instance.kind != self.problem:
            what = "a preference matrix" if self.problem == "duel" else "Bernoulli arm means"
            raise ReproError(f"{self.name} needs {what}, but {instance.name} is a {instance.kind} instance")
