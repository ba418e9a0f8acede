"""Challengers: the config key ``challengers`` puts algorithms of one's own (built in or plugins) into every
figure of the selected papers where they fit, with claim rows and a leaderboard (docs/decisions.md#challengers).

Each paper's manifest declares its *arenas* (``challengers:`` beside ``figures:``): the figures a challenger may
join, the key of the paper's algorithm there, the baselines among which the strongest is chosen, whether only
private algorithms fit (``privacy: true``) and which algorithms are built for the figure's metric
(``built_for``; a weak-regret figure draws any other challenger too, with a caption saying so). A challenger
joins an arena whose paper algorithm solves the same problem (duel or mab; a private arena also needs the
spec's ``privacy``). ``join`` returns the figures with, in each arena, one more line per challenger on every
panel (``AlgoRef.challenger`` = its position in the config, which picks its colour), a caption sentence, the
arena in ``extra["arena"]`` and two claim rows per challenger: against the paper's algorithm and against the
strongest baseline (``banditrepro.claims.challenger``). Without challengers the figures come back unchanged,
so a run without them is exactly a run of the papers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from banditrepro import ReproError
from banditrepro import algorithms as registry
from banditrepro.manifest import AlgoRef, Figure, read_manifest

KEY_PREFIX = "challenger-"  # line keys and claim ids of challengers start with it
CLAIM_KIND = "challenger"


@dataclasses.dataclass(frozen=True)
class Challenger:
    name: str
    params: dict[str, Any]  # resolved (defaults filled in)
    id: str  # canonical algorithm id (its cells)
    index: int  # 1-based position in the config

    @property
    def key(self) -> str:
        return KEY_PREFIX + self.id

    @property
    def spec(self):
        return registry.get(self.name)

    @property
    def label(self) -> str:
        given = [f"{k}={v}" for k, v in sorted(self.params.items()) if v != self.spec.defaults[k]]
        return self.spec.label + (f", {', '.join(given)}" if given else "") + " (challenger)"


def parse(value) -> list[Challenger]:
    """The config's ``challengers``: a list of names, or a mapping name -> parameters (or null). Unknown
    names and parameters the spec does not declare stop here with one line naming the challenger."""
    if not value:
        return []
    items = [(n, {}) for n in value] if isinstance(value, list) else [(n, p or {}) for n, p in value.items()]
    out = []
    for k, (name, params) in enumerate(items, start=1):
        if not isinstance(params, dict):
            raise ReproError(f"challenger {name!r}: parameters must be a mapping name -> value, got {params!r}")
        try:
            spec = registry.get(name)
            algo_id = registry.algorithm_id(name, params)
        except ReproError as exc:
            raise ReproError(f"challenger {name!r}: {exc}") from None
        out.append(Challenger(name, spec.resolve(params), algo_id, k))
    ids = [c.id for c in out]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ReproError(f"challenger {twice[0]!r} is listed twice")
    return out


def from_ids(ids) -> dict:
    """Challengers given as algorithm ids (``NAME`` or ``NAME+key=value``, the CLI's ``--challengers``) in the
    config's form, a mapping name -> parameters in the given order; None or empty: none."""
    out: dict[str, dict] = {}
    for algo_id in ids or ():
        try:
            name, params = registry.parse_algorithm_id(algo_id)
        except ReproError as exc:
            raise ReproError(f"--challengers: {exc}") from None
        if name in out:
            raise ReproError(f"--challengers: {name!r} is listed twice")
        out[name] = params
    return out


def arenas(manifest_path, papers) -> dict[str, dict[str, dict]]:
    """paper -> figure id -> its arena entry (the manifest's ``challengers:`` sections)."""
    doc = read_manifest(manifest_path)
    return {p: dict(doc[p].get("challengers") or {}) for p in doc if papers is None or p in papers}


def is_weak(fig: Figure) -> bool:
    from banditrepro.figures.panels import panel_metrics

    return any(m.startswith("weak") for m in panel_metrics(fig))


def fits(ch: Challenger, fig: Figure, arena: dict) -> bool:
    """Same problem as the paper's algorithm of the arena; a private arena takes only private algorithms."""
    paper_ref = fig.algorithm(arena["paper_algorithm"])
    if ch.spec.problem != registry.get(paper_ref.name).problem:
        return False
    return ch.spec.privacy is not None or not arena.get("privacy", False)


def _check_arena(fig: Figure, arena: dict) -> None:
    keys = {r.key for p in fig.panels for r in p.algorithms}
    for key in [arena["paper_algorithm"], *arena["baselines"]]:
        if key not in keys:
            raise ReproError(f"{fig.stem}: challengers: {key!r} is not an algorithm key of the figure")


def caption_note(fig: Figure, arena: dict, joined: list[Challenger]) -> str:
    labels = ", ".join(c.label for c in joined)
    text = (f" Challengers (not in the paper; config key `challengers`): {labels}, each in its own colour and "
            "labelled “challenger”.")
    if is_weak(fig):
        other = [c.label for c in joined if c.name not in arena.get("built_for", [])]
        if other:
            text += (f" {', '.join(other)} {'was' if len(other) == 1 else 'were'} not built for weak regret: "
                     "shown on a metric it was not built for.")
    return text


def _claims(fig: Figure, arena: dict, ch: Challenger) -> list[dict]:
    paper = fig.algorithm(arena["paper_algorithm"]).label
    base = ", ".join(fig.algorithm(k).label for k in arena["baselines"])
    where = "challenger row (not a claim of the paper): config key `challengers`, docs/decisions.md#challengers"
    return [
        {"id": f"{ch.key}-vs-paper-{fig.id}", "where": where, "challenger": ch.name,
         "text": f"Challenger {ch.label} has lower final regret than {paper}, the paper's algorithm, on every "
                 f"panel of {fig.id}",
         "test": {"kind": CLAIM_KIND, "challenger": ch.key, "opponent": arena["paper_algorithm"]}},
        {"id": f"{ch.key}-vs-strongest-{fig.id}", "where": where, "challenger": ch.name,
         "text": f"Challenger {ch.label} has lower final regret than the strongest baseline of {fig.id} "
                 f"(chosen from the data among {base}) on every panel",
         "test": {"kind": CLAIM_KIND, "challenger": ch.key, "baselines": list(arena["baselines"]),
                  "paper_algorithm": arena["paper_algorithm"]}},
    ]


def join(figures: list[Figure], value, manifest_path, papers=None) -> list[Figure]:
    """``figures`` with the config's challengers added to every arena they fit (see the module docstring);
    ReproError naming the challenger if it fits no figure of the selected papers."""
    chs = parse(value)
    if not chs:
        return figures
    where = arenas(manifest_path, papers)
    by_stem = {f.stem: f for f in figures}
    for paper, entries in where.items():
        for fid in entries:
            if f"{paper}/{fid}" not in by_stem:
                raise ReproError(f"figure manifest: {paper}: challengers: no figure {fid!r}")
    joined_any = {c.id: False for c in chs}
    out = []
    for fig in figures:
        arena = where.get(fig.paper, {}).get(fig.id)
        if arena is not None:
            _check_arena(fig, arena)
        joined = [c for c in chs if arena is not None and fits(c, fig, arena)]
        if not joined:
            out.append(fig)
            continue
        refs = tuple(AlgoRef(c.key, c.name, c.params, c.id, c.label, c.index) for c in joined)
        panels = tuple(dataclasses.replace(p, algorithms=p.algorithms + refs) for p in fig.panels)
        claims = tuple(fig.claims) + tuple(row for c in joined for row in _claims(fig, arena, c))
        extra = {**fig.extra, "arena": {k: arena[k] for k in sorted(arena)}}
        out.append(dataclasses.replace(fig, panels=panels, caption=fig.caption + caption_note(fig, arena, joined),
                                       claims=claims, extra=extra))
        for c in joined:
            joined_any[c.id] = True
    for c in chs:
        if not joined_any[c.id]:
            names = ", ".join(sorted(where)) or "none"
            private = "private" if c.spec.privacy is not None else "not private"
            raise ReproError(f"challenger {c.id!r} ({c.spec.problem}, {private}) fits no figure of the selected "
                             f"papers ({names}): no figure there draws a {c.spec.problem} algorithm it may join")
    return out


# --- what the claims, the leaderboard and the report ask of expanded figures -------------------------------


def arena_of(fig: Figure) -> dict | None:
    return fig.extra.get("arena")


def challenger_refs(fig: Figure) -> list[AlgoRef]:
    """The challengers' lines of a figure (one per challenger; the first panel's)."""
    return [r for r in fig.panels[0].algorithms if r.challenger] if fig.panels else []


def arena_figures(figures: list[Figure], paper: str | None = None) -> list[Figure]:
    """Figures a challenger joined (of one paper, or all)."""
    return [f for f in figures if arena_of(f) and challenger_refs(f) and (paper is None or f.paper == paper)]


def papers_with_challengers(figures: list[Figure]) -> list[str]:
    return list(dict.fromkeys(f.paper for f in arena_figures(figures)))


def is_challenger_claim(claim: dict) -> bool:
    return "challenger" in claim


def remove_stale_leaderboards(figures: list[Figure], layout, ours) -> list[str]:
    """Remove the leaderboards of papers no challenger joins now (a challenger removed from the config): a
    fresh run has none, so none may stay behind (docs/decisions.md#batch-identity). Only files a leaderboard
    writes (Layout.leaderboard_outputs) whose bytes ``ours(path)`` says publishing wrote (a user's file of the
    same name stays); the paths removed."""
    from pathlib import Path

    keep = {Path(f).name for p in papers_with_challengers(figures) for f in layout.leaderboard_outputs(p)}
    folder = Path(layout.leaderboards)
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    stale = [str(folder / n) for n in names
             if n.endswith((".csv", ".md", ".png", ".pdf")) and n not in keep and ours(str(folder / n))]
    for path in stale:
        Path(path).unlink(missing_ok=True)
    return stale
