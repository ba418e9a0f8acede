"""Claim tests by kind: ``@test(kind)`` registers one; ``validate`` checks every manifest claim against them.

A test is ``fn(ctx: banditrepro.claims.context.Context, **args) -> banditrepro.verdicts.Outcome``; the generic
kinds are in ``banditrepro.claims.generic``, a paper's in ``banditrepro.papers.<paper>.claims``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from banditrepro import ReproError
from banditrepro.manifest import Figure

TESTS: dict[str, Callable] = {}
# per kind: parameters naming algorithm keys / algorithm names of the figure, and tolerance parameters
META: dict[str, dict[str, tuple[str, ...]]] = {}
# "challenger": rows banditrepro.challengers adds (the manifest's schema has no such field)
CLAIM_KEYS = {"id", "text", "test", "where", "why_not", "challenger"}


def test(kind: str, *, keys: tuple[str, ...] = (), names: tuple[str, ...] = (),
         tolerance: tuple[str, ...] = ()):
    """Register a claim test. ``keys``/``names``: parameters that name algorithm keys/names of the figure
    (checked by ``validate``); ``tolerance``: parameters that need a ``rationale`` in the manifest."""

    def deco(fn):
        old = TESTS.get(kind)
        if old is not None and (old.__module__, old.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ReproError(f"claim test {kind!r} is registered twice ({old.__module__}, {fn.__module__})")
        TESTS[kind] = fn
        META[kind] = {"keys": tuple(keys), "names": tuple(names), "tolerance": tuple(tolerance)}
        return fn

    return deco


def _claim_args(claim: dict) -> tuple[str, dict]:
    args = dict(claim["test"])
    kind = args.pop("kind")
    args.pop("rationale", None)  # the manifest's reason for a tolerance; shown in the report, not a parameter
    return kind, args


def _check_claim(fig: Figure, claim: dict, kind: str, args: dict) -> str | None:
    """The first problem of one claim, or None."""
    unknown = sorted(set(claim) - CLAIM_KEYS)
    if unknown:
        return f"unknown field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(CLAIM_KEYS))})"
    if kind not in TESTS:
        return f"unknown test kind {kind!r} (known: {', '.join(sorted(TESTS))})"
    sig = inspect.signature(TESTS[kind])
    try:
        sig.bind(None, **args)
    except TypeError as exc:
        params = ", ".join(list(sig.parameters)[1:])
        return f"test {kind}: {exc} (parameters: {params})"
    meta = META.get(kind, {})
    lines = [r for p in fig.panels for r in p.algorithms]
    for param in meta.get("keys", ()):
        vals = args.get(param, [])
        for v in [vals] if isinstance(vals, str) else list(vals):
            if v not in {r.key for r in lines}:
                return f"test {kind}: {param} = {v!r} is not an algorithm key of the figure"
    for param in meta.get("names", ()):
        v = args.get(param, sig.parameters[param].default)
        if isinstance(v, str) and v not in {r.name for r in lines}:
            return f"test {kind}: {param} = {v!r} is not an algorithm of the figure"
    for param in meta.get("tolerance", ()):
        if param in args and not str(claim["test"].get("rationale", "")).strip():
            return f"test {kind}: tolerance {param} = {args[param]!r} needs a one-line `rationale:` in the test"
    spec = args.get("panels")
    if isinstance(spec, dict) or isinstance(spec, list):
        named = spec.get("all_except", []) if isinstance(spec, dict) else spec
        datasets = {p.dataset for p in fig.panels}
        bad = [d for d in named if d not in datasets]
        if bad:
            return f"test {kind}: panels name dataset(s) not in the figure: {', '.join(map(str, bad))}"
    return None


def validate(figures: list[Figure]) -> None:
    """Check every claim's kind, parameters (against its test's signature), algorithm keys/names and
    tolerance rationales at parse time; raise ReproError("<paper>/<figure>: claim <id>: <problem>")."""
    for fig in figures:
        seen = set()
        for claim in fig.claims:
            cid = claim.get("id", "?")
            if cid in seen:
                raise ReproError(f"{fig.stem}: claim {cid}: duplicate claim id")
            seen.add(cid)
            if not isinstance(claim.get("test"), dict) or "kind" not in claim["test"]:
                raise ReproError(f"{fig.stem}: claim {cid}: test must be a mapping with a kind")
            problem = _check_claim(fig, claim, *_claim_args(claim))
            if problem:
                raise ReproError(f"{fig.stem}: claim {cid}: {problem}")
