"""The figure manifest (``config/figures/<paper>.yaml``): every paper figure/table as data.

A figure lists panels (dataset, horizon), algorithms (name, parameters, legend key), the metric and
axes, and the paper's claims with the test that makes each measurable. ``cells`` expands a manifest
into the set of (dataset, horizon, algorithm id) cells; identical cells of several figures coincide.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from banditrepro import ReproError, yamlfile
from banditrepro import algorithms as registry

SCHEMA = Path(__file__).with_name("figures.schema.yaml")


@dataclass(frozen=True)
class AlgoRef:
    key: str  # how claims refer to this line
    name: str
    params: dict[str, Any]
    id: str  # canonical algorithm id (file names)
    label: str
    challenger: int = 0  # 0: a line of the manifest; k > 0: the k-th challenger of the config (challengers.py)


@dataclass(frozen=True)
class Panel:
    dataset: str
    horizon: int
    title: str
    algorithms: tuple[AlgoRef, ...]
    metric: str | None = None  # overrides the figure's metric for this panel


@dataclass(frozen=True)
class Figure:
    paper: str
    id: str
    title: str
    caption: str
    kind: str
    metric: str
    panels: tuple[Panel, ...]
    axes: dict[str, Any]
    claims: tuple[dict[str, Any], ...]
    extra: dict[str, Any] = field(default_factory=dict)
    runs: int | None = None  # runs this figure asks of each of its cells (more where statistics need them)

    @property
    def stem(self) -> str:
        return f"{self.paper}/{self.id}"

    def algorithm(self, key: str) -> AlgoRef:
        for panel in self.panels:
            for ref in panel.algorithms:
                if ref.key == key:
                    return ref
        raise ReproError(f"{self.stem}: claim refers to unknown algorithm key {key!r}")


def _algo_ref(fig: str, entry: dict[str, Any]) -> AlgoRef:
    name = entry["name"]
    params = entry.get("params", {}) or {}
    algo_id = registry.algorithm_id(name, params)  # validates name and parameters
    spec = registry.get(name)
    label = entry.get("label") or spec.label
    return AlgoRef(entry.get("key", algo_id), name, spec.resolve(params), algo_id, label)


def _validate(doc: dict) -> None:
    import jsonschema

    schema = yamlfile.load(SCHEMA.read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.path) or "top level"
        raise ReproError(f"figure manifest: {where}: {err.message}")


def read_manifest(path: str | Path) -> dict:
    """The manifest as one validated mapping paper -> entry (one YAML file, or every *.yaml of a folder)."""
    path = Path(path)
    if not path.exists():
        raise ReproError(f"figure manifest not found: {path}")
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    doc = {}
    for f in files:  # one file per paper; a paper key may appear in one file only
        try:
            part = yamlfile.load(f.read_text(encoding="utf-8")) or {}
        except (OSError, ValueError, yamlfile.Error) as exc:  # unreadable, not UTF-8, not YAML
            raise ReproError(f"figure manifest {f}: cannot read it ({' '.join(str(exc).split())[:200]})") from None
        if not isinstance(part, dict):
            raise ReproError(f"figure manifest {f}: expected a mapping of papers, got {type(part).__name__}")
        for paper in part:
            if paper in doc:
                raise ReproError(f"figure manifest: paper {paper!r} defined twice ({f.name})")
        doc.update(part)
    _validate(doc)
    return doc


def load_manifest(path: str | Path, papers: list[str] | None = None, max_horizon: int | None = None,
                  datasets: set[str] | None = None) -> list[Figure]:
    doc = read_manifest(path)
    figures = []
    for paper, pdoc in doc.items():
        if papers is not None and paper not in papers:
            continue
        for fid, fdoc in pdoc["figures"].items():
            algos = tuple(_algo_ref(fid, a) for a in fdoc.get("algorithms", []))
            panels = []
            for p in fdoc["panels"]:
                if datasets is not None and p["dataset"] not in datasets:
                    raise ReproError(f"figure manifest: {paper}/{fid}: unknown dataset {p['dataset']!r}")
                T = int(p["horizon"])
                if max_horizon:
                    T = min(T, int(max_horizon))
                panel_algos = tuple(_algo_ref(fid, a) for a in p["algorithms"]) if "algorithms" in p else algos
                panels.append(Panel(p["dataset"], T, p.get("title", p["dataset"]), panel_algos, p.get("metric")))
            extra = dict(fdoc.get("options", {}))
            if "layout" in fdoc:
                extra["layout"] = fdoc["layout"]
            figures.append(Figure(paper, fid, fdoc["title"], fdoc.get("caption", ""), fdoc.get("kind", "curves"),
                                  fdoc.get("metric", "regret"), tuple(panels), fdoc.get("axes", {}),
                                  tuple(fdoc.get("claims", [])), extra, fdoc.get("runs")))
    return figures


def cells(figures: list[Figure]) -> list[tuple[str, int, str]]:
    """Unique (dataset, horizon, algorithm id) triples, in first-seen order."""
    seen = {}
    for fig in figures:
        for panel in fig.panels:
            for ref in panel.algorithms:
                seen.setdefault((panel.dataset, panel.horizon, ref.id), None)
    return list(seen)


def cell_runs(figures: list[Figure], runs: int, max_runs: int | None = None) -> dict[tuple[str, int, str], int]:
    """Runs of every cell: the most any figure drawing it asks (``runs: N``), at least ``runs`` (the
    config's default), at most ``max_runs`` (a cap for small test configs). A cell shared by several
    figures is run once, that many times, and every figure reads all of its runs. A challenger's line never
    changes the runs of a manifest line's cell (which would change the papers' summaries): a cell both draw
    keeps the manifest's runs; the challenger's own cells get the most its figures ask."""
    out: dict[tuple[str, int, str], int] = {}
    added: dict[tuple[str, int, str], int] = {}
    for fig in figures:
        want = max(runs, fig.runs or 0)
        for panel in fig.panels:
            for ref in panel.algorithms:
                key = (panel.dataset, panel.horizon, ref.id)
                into = added if ref.challenger else out
                into[key] = max(into.get(key, 0), want)
    for key, n in added.items():
        out.setdefault(key, n)
    if max_runs:
        out = {k: min(n, max_runs) for k, n in out.items()}
    return out
