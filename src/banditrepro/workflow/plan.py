"""What a config asks the workflow to do, computed once at parse time: ``build_plan(config, root)``.

A ``Plan`` holds the validated config, its ``Layout`` (every path), the catalog, the manifest's figures,
the runs of every cell and the shards and bins that compute them, and answers every input list and
parameter the rules need. No path here is absolute unless the user configured it so: params and inputs
are relative to the working directory (``rel``), so a copied or moved project folder is up to date.

Shards. A cell's runs are stored in shards, one file per job holding runs first..last
(``<cell>/<code>/runs<first>-<last>.npz``; ``code`` is the digest of the code the cell runs, so editing that
code makes new files rather than rewriting old ones). A cell's *chain* is the shards holding its runs
0..n-1: the shards that exist, followed from run 0 (one listing of the cell's folder), then new shards of
``k`` runs (``cells_per_job``; ``auto`` sizes k from the horizon and the kernel's ns/step,
banditrepro/jobsize.py) up to run n-1. Raising ``runs`` appends shards after the existing ones, so only
the new runs are computed and no file is rewritten. A chain is the same when planned again after some of
its new shards were written, so a killed run resumes with the same shards and a cluster node plans what
the main process planned. A summary reads its chain and keeps runs 0..n-1 (the last shard may hold more).

Bins. Under a cluster executor the missing shards are packed into bins of about ``job_minutes`` of
estimated work (banditrepro/workflow/bins.py), one rule per bin writing the same shard files.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from banditrepro import ReproError, jobsize
from banditrepro.layout import Layout
from banditrepro.workflow import bins as binning
from banditrepro.workflow import digests
from banditrepro.workflow.config import check_config

SCHEMA = "workflow/schemas/config.schema.yaml"
SHARD_NAME = re.compile(r"runs(\d+)-(\d+)\.npz$")
CODE_CHARS = 12  # of a cell's code digest in its folder name: 48 bits, no collision among a project's edits


def cell_key(dataset: str, horizon: int, algo: str) -> str:
    return f"{dataset}/T{horizon}/{algo}"


def split_key(key: str) -> tuple[str, int, str]:
    dataset, horizon, algo = key.split("/")
    return dataset, int(horizon[1:]), algo


def existing_shards(folder) -> dict[int, int]:
    """first run -> last run of every shard file in ``folder`` (the longest where several start alike)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    out: dict[int, int] = {}
    for name in names:
        m = SHARD_NAME.fullmatch(name)
        if m and int(m.group(2)) >= int(m.group(1)):
            a, b = int(m.group(1)), int(m.group(2))
            out[a] = max(b, out.get(a, b))
    return out


def plan_chain(runs: int, k: int, existing: dict[int, int]) -> list[tuple[int, int]]:
    """Inclusive run ranges holding runs 0..runs-1: existing shards followed from run 0, then new ones of
    ``k`` runs (the last clipped at ``runs``)."""
    chain, p = [], 0
    while p < runs and p in existing:
        chain.append((p, existing[p]))
        p = existing[p] + 1
    return chain + [(a + p, b + p) for a, b in jobsize.chunks(runs - p, k)]


def shard_size(key: str, runs: int, config: dict) -> int:
    """Runs per new shard of a cell: ``cells_per_job`` (``auto``: from ``job_seconds``)."""
    k = config["cells_per_job"]
    if k == "auto":
        _, horizon, algo = split_key(key)
        k = jobsize.runs_per_job(algo, horizon, runs, config["job_seconds"])
    return max(1, min(int(k), runs))


@dataclass(frozen=True)
class SimulateRule:
    """What one shard-writing rule declares (``Plan.simulate_rules``)."""

    name: str
    input: object
    output: object
    log: str
    constraints: dict
    runtime: object  # minutes, or a function of the wildcards
    mem_mb: int


@dataclass
class Plan:
    config: dict
    root: Path  # the project (Snakefile's folder); relative config paths resolve against it
    layout: Layout
    catalog: object
    figures: list
    cell_runs: dict[str, int]  # cell key -> runs
    codes: dict[str, str] = field(default_factory=dict)  # cell key -> code digest (its shards' folder)
    chains: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # cell key -> its shards
    missing: set = field(default_factory=set)  # (cell, first, last) of the shards not written yet
    bins: list = field(default_factory=list)  # bins.Bin: the missing shards packed for a cluster

    # --- paths ---------------------------------------------------------------------------------------------
    def root_path(self, p) -> str:
        """A config path as this process opens it (relative ones against the project root)."""
        return str(p) if "://" in str(p) or Path(p).is_absolute() else str(self.root / p)

    def rel(self, p) -> str:
        """A project path as jobs see it: relative to the working directory (where Snakemake runs, normally
        the project root), so params never carry the checkout's absolute location. URLs and absolute paths
        the user configured stay as they are."""
        if "://" in str(p) or Path(p).is_absolute():
            return str(p)
        return os.path.relpath(self.root / p)

    def shard_pattern(self) -> str:
        """A shard with its cell as one wildcard, ``{cell}`` = <dataset>/T<horizon>/<algo>."""
        return f"{self.layout.cells}/{{cell}}/{{code}}/runs{{first}}-{{last}}.npz"

    def shard(self, cell: str, first: int, last: int) -> str:
        return self.layout.shard(*split_key(cell), self.codes[cell], first, last)

    def parse_shard(self, path: str) -> tuple[str, int, int]:
        """(cell, first, last) of a shard path (``shard``'s inverse)."""
        rest = str(path)[len(self.layout.cells) + 1:]
        cell, _code, name = rest.rsplit("/", 2)
        m = SHARD_NAME.fullmatch(name)
        if not m:
            raise ReproError(f"not a shard path: {path}")
        return cell, int(m.group(1)), int(m.group(2))

    def cell_folder(self, cell: str) -> str:
        return f"{self.layout.cell_dir(*split_key(cell))}/{self.codes[cell]}"

    def log(self, *parts: str) -> str:
        """A job log of this config: <logs>/<parts...>.log (logs/ or logs/<name>/, see Layout.logs)."""
        return "/".join([self.layout.logs, *parts]) + ".log"

    @staticmethod
    def data_log(kind: str, name: str) -> str:
        """A data job's log: logs/<kind>/<name>.log, shared by every config like data/ itself."""
        return f"logs/{kind}/{name}.log"

    @property
    def figure_by_stem(self) -> dict:
        return {f.stem: f for f in self.figures}

    def figure(self, paper: str, figure: str):
        return self.figure_by_stem[f"{paper}/{figure}"]

    def runs_of(self, dataset: str, horizon, algo: str) -> int:
        return self.cell_runs[cell_key(dataset, int(horizon), algo)]

    def cell_files(self, dataset: str, horizon, algo: str) -> list[str]:
        """The shards of a cell's chain (what its summary reads)."""
        cell = cell_key(dataset, int(horizon), algo)
        return [self.shard(cell, a, b) for a, b in self.chains[cell]]

    def shard_seconds(self, cell: str, first: int, last: int) -> float:
        """Estimated seconds of a shard's runs (jobsize.run_seconds)."""
        _, horizon, algo = split_key(cell)
        return (last - first + 1) * jobsize.run_seconds(algo, horizon)

    def shard_minutes(self, cell: str, first: int, last: int) -> int:
        """SLURM runtime of a job computing one shard: the bins' margin (bins.requested_minutes)."""
        return binning.requested_minutes(self.shard_seconds(cell, first, last))

    def all_shards(self) -> list[tuple[str, int, int]]:
        """Every shard of every chain in the bins' order: by dataset (a bin reads one prepared file), cell,
        first run. Indices into this list name the bins, and do not change as shards get written."""
        return sorted(((c, a, b) for c, chain in self.chains.items() for a, b in chain),
                      key=lambda s: (split_key(s[0])[0], s[0], s[1]))

    def simulate_rules(self, prepared_of) -> list[SimulateRule]:
        """The rules writing shards (workflow/rules/simulate.smk): `simulate` (one shard, wildcards; input
        ``prepared_of(wildcards)``), then one per bin."""
        out = [SimulateRule("simulate", prepared_of, self.shard_pattern(),
                            self.log("cells", "{cell}", "{code}", "runs{first}-{last}"),
                            {"cell": r"[^/]+/T\d+/[^/]+", "code": r"[0-9a-f]+", "first": r"\d+", "last": r"\d+"},
                            lambda wc: self.shard_minutes(wc.cell, int(wc.first), int(wc.last)), 300)]
        for b in self.bins:
            if b.shards:
                out.append(SimulateRule(b.name, self.prepared_of_cell(b.shards[0][0]),
                                        [self.shard(*s) for s in b.shards], self.log("bins", b.name), {},
                                        b.minutes, 1000))
        return out

    def prepared_of_cell(self, cell: str) -> str:
        return self.layout.prepared_file(split_key(cell)[0])

    def figure_outputs(self, fig) -> list[str]:
        return self.layout.figure_outputs(fig.paper, fig.id)

    def all_figure_outputs(self) -> list[str]:
        return [t for fig in self.figures for t in self.figure_outputs(fig)]

    def all_targets(self) -> list[str]:
        lay = self.layout
        return [*self.all_figure_outputs(), lay.claims_csv, lay.runtime_csv, lay.report_md]

    def runtime_inputs(self) -> list[str]:
        """Summaries of every cell of an always-available dataset (the run-time table's rows)."""
        return sorted({self.layout.summary(p.dataset, p.horizon, a.id) for f in self.figures for p in f.panels
                       for a in p.algorithms if not self.catalog.is_optional(p.dataset)})

    def figure_inputs(self, paper: str, figure: str, status) -> list[str]:
        """Summaries and prepared instances a figure draws; ``status(dataset) -> (file, available)`` is the
        probe of an optional dataset (a checkpoint): its panels need only the status file when unavailable."""
        files = []
        for panel in self.figure(paper, figure).panels:
            if self.catalog.is_optional(panel.dataset):
                path, available = status(panel.dataset)
                files.append(path)
                if not available:
                    continue
            files.extend(self.layout.summary(panel.dataset, panel.horizon, a.id) for a in panel.algorithms)
            files.append(self.layout.prepared_file(panel.dataset))
        return sorted(set(files))

    def figure_caption(self, paper: str, figure: str) -> str:
        fig = self.figure(paper, figure)
        algos = {a.id: a.label for p in fig.panels for a in p.algorithms}
        panels = "; ".join(f"{p.title}: {p.dataset}, T = {p.horizon:,}" for p in fig.panels)
        runs = sorted({self.runs_of(p.dataset, p.horizon, a.id) for p in fig.panels for a in p.algorithms})
        if not runs:
            runs_text = f"{self.config['runs']}"
        else:
            runs_text = f"{runs[0]}" if len(runs) == 1 else f"{runs[0]}–{runs[-1]}"
        return (f"{fig.title}. {fig.caption} Configuration: {runs_text} runs per line, base seed "
                f"{self.config['base_seed']}; panels: {panels}; algorithms (id → legend): "
                + ", ".join(f"{k} → {v}" for k, v in algos.items()) + ".")

    # --- data jobs -----------------------------------------------------------------------------------------
    def mirror_args(self) -> str:
        return " ".join(f"--mirror {self.rel(m)}" for m in self.config["data_mirrors"])

    def declared_file(self, dataset: str) -> str | None:
        """A matrix-file dataset's file as jobs see it (``rel``), or None."""
        path = self.catalog.dataset(dataset).get("path")
        return self.rel(path) if path else None

    def entry_arg(self, dataset: str) -> str:
        """A matrix-file or config-declared dataset's declaration for the prepare job."""
        if dataset not in self.catalog.declared and self.catalog.user_file(dataset) is None:
            return ""
        entry = dict(self.catalog.dataset(dataset))
        if entry.get("path"):
            entry["path"] = self.declared_file(dataset)
        return f"--entry {shlex.quote(json.dumps(entry))}"

    def source_spec(self, source: str) -> str:
        return digests.digest(self.catalog.sources.get(source))

    def dataset_spec(self, dataset: str) -> str:
        """The catalog entry of a dataset and of its raw sources (what the preparation derives from)."""
        cat = self.catalog
        return digests.digest([cat.dataset(dataset)] + [cat.source(s) for s in cat.raw_inputs(dataset)])

    # --- digests of what each job draws from ---------------------------------------------------------------
    def figure_digest(self, paper: str, figure: str) -> str:
        return digests.figure_digest(self.figure(paper, figure))

    def claims_digest(self) -> str:
        return digests.claims_digest(self.figures)

    def deviations_file(self) -> str:
        return self.root_path("config/deviations.yaml")


def build_plan(config: dict, root, argv=(), scan=True, binned=False) -> Plan:
    """Validate ``config`` (in place, defaults filled in), load the catalog and the manifest, check every
    claim, plan the shards of every cell. ``scan``: look at which shards exist (see the module docstring);
    ``binned``: pack the missing shards into bins (a cluster executor); ``argv``: a cluster node's command
    line (the bins it runs). ReproError (one line) on bad input."""
    from banditrepro import challengers, claims, papers
    from banditrepro.datasets.catalog import load_catalog
    from banditrepro.deviations import load_deviations
    from banditrepro.deviations import validate as validate_deviations
    from banditrepro.manifest import cell_runs, load_manifest

    root = Path(root)
    check_config(config, root / SCHEMA)
    plan = Plan(config, root, Layout.from_config(config), None, [], {})
    try:
        plan.catalog = load_catalog(plan.root_path(config["catalog"]), config["datasets"], root)
        plan.figures = load_manifest(plan.root_path(config["manifest"]), papers=config["papers"],
                                     max_horizon=config["max_horizon"], datasets=set(plan.catalog.datasets))
        papers.load()  # the papers' figure kinds and claim tests (built in and entry points)
        # the config's challengers join the figures they fit (none: the figures are the manifest's)
        plan.figures = challengers.join(plan.figures, config["challengers"], plan.root_path(config["manifest"]),
                                        config["papers"])
        claims.validate(plan.figures)  # every claim's test kind and parameters, now rather than in the job
        # every deviation's measured effect names figures and lines that exist
        validate_deviations(load_deviations(plan.deviations_file()), plan.figures)
    except ReproError as exc:
        raise ReproError(f"configuration error: {exc}") from None
    # cells of optional datasets (network only) are planned too: figures ask for them only when available
    runs = cell_runs(plan.figures, config["runs"], config["max_runs"])
    plan.cell_runs = {cell_key(*c): n for c, n in runs.items()}

    for key, n in plan.cell_runs.items():
        plan.codes[key] = digests.cell_code(split_key(key)[2])[:CODE_CHARS]
        existing = existing_shards(plan.cell_folder(key)) if scan else {}
        plan.chains[key] = plan_chain(n, shard_size(key, n, config), existing)
        plan.missing.update((key, a, b) for a, b in plan.chains[key] if existing.get(a) != b)
    if binned:
        ranges = binning.ranges_from_argv(argv)  # a node: the bins the main process chose
        plan.bins = binning.pack(plan.all_shards(), plan.missing, plan.shard_seconds,
                                 lambda cell: split_key(cell)[0], config["job_minutes"] * 60, ranges)
        binning.check_limit(plan.bins, config.get("partition_minutes"))
    return plan
