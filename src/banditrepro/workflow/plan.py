"""What a config asks the workflow to do, computed once at parse time: ``build_plan(config, root)``.

A ``Plan`` is pure data: the validated config, its ``Layout`` (every path; ``store`` is the view the jobs
read and write), the catalog, the manifest's figures, the runs of every cell, the name of every stored result
(banditrepro/workflow/names.py), the shards holding each cell's runs and the batches computing the shards that
are missing. It reads no file's content but a user's matrix file and an optional dataset's probe (for their
names) and lists the cells' folders; it writes and deletes nothing, so a dry run is read-only.

Shards. A cell's runs are stored in shards, one file holding runs first..last
(``<cell>/<shards key>/runs<first>-<last>.npz``; the key covers everything the runs' bytes depend on but the run
index, so a change of code, data, seed, format or stack makes new files and never rewrites old ones). A cell's
shards hold its runs 0..n-1: the shards that exist, followed from run 0 (one listing of the cell's folder),
then new shards of ``k`` runs (``runs_per_shard``; ``auto`` sizes k from the horizon and the kernel's ns/step,
banditrepro/jobsize.py) up to run n-1. A shard is complete when its file exists (written atomically, last).
Raising ``runs`` appends shards after the existing ones, so only the new runs are computed; a summary reads its
cell's shards and keeps runs 0..n-1 (the last shard may hold more), whatever shards hold them.

Batches. Every missing shard is computed by a batch (banditrepro/workflow/batches.py), one job of rule
``simulate`` named by its wildcard ``{batch}``: ``<dataset>-<digest of its shards' paths>``. Only missing
shards are packed, so a finished shard is never in a batch, adding a challenger or a run packs only the new
shards, and a summary depends on its shards (and, for those missing, the batches computing them), never on how
finished work was packed. In cluster mode a node reads its batch from the spec file the main process wrote
(``Layout.batch_spec``), so it computes what was submitted whatever has finished since.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from banditrepro import ReproError, challengers, claims, jobsize, papers
from banditrepro.datasets.catalog import load_catalog
from banditrepro.deviations import load_deviations
from banditrepro.deviations import validate as validate_deviations
from banditrepro.layout import DEFAULT_RESULTS_DIR, Layout, Names, shard_rel, shard_runs
from banditrepro.manifest import cell_runs, load_manifest
from banditrepro.workflow import batches as batching
from banditrepro.workflow import names
from banditrepro.workflow.cells import algorithm_of, cell_key, dataset_of, kernel_of, split_key  # noqa: F401
from banditrepro.workflow.config import merged_config, shape_config


def layout_of(config: dict, names: Names | None = None) -> Layout:
    """The paths of a shaped config's results: its ``results_dir`` (Layout's default where the config sets none:
    the schema gives it no default, which published.json would record) with the plan's names."""
    return Layout(config.get("results_dir", DEFAULT_RESULTS_DIR), names=names)


def existing_shards(folder) -> dict[int, int]:
    """first run -> last run of every shard file in ``folder`` (the longest where several start alike)."""
    try:
        entries = os.listdir(folder)
    except OSError:  # no folder yet, or unreadable now: the shards count as missing (computing costs CPU only)
        return {}
    out: dict[int, int] = {}
    for name in entries:
        if found := shard_runs(name):
            a, b = found
            out[a] = max(b, out.get(a, b))
    return out


def plan_shards(runs: int, k: int, existing: dict[int, int], first: int = 0) -> list[tuple[int, int]]:
    """Inclusive run ranges holding runs first..runs-1: existing shards followed from run ``first``, then new
    ones of ``k`` runs (the last clipped at ``runs``)."""
    shards, p = [], first
    while p < runs and p in existing:
        shards.append((p, existing[p]))
        p = existing[p] + 1
    return shards + [(a + p, b + p) for a, b in jobsize.chunks(max(0, runs - p), k)]


def shard_size(key: str, runs: int, config: dict) -> int:
    """Runs per new shard of a cell: ``runs_per_shard`` (``auto``: from ``shard_seconds``)."""
    k = config["runs_per_shard"]
    if k == "auto":
        _, horizon, algo = split_key(key)
        k = jobsize.runs_per_job(algo, horizon, runs, config["shard_seconds"])
    return max(1, min(int(k), runs))


@dataclass
class Plan:
    config: dict
    root: Path  # the project (Snakefile's folder); relative config paths resolve against it
    layout: Layout  # published paths; ``store`` is the view every job reads and writes
    catalog: object
    figures: list
    cell_runs: dict[str, int]  # cell key -> runs
    names: Names = field(default_factory=Names)
    cell_shards: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # cell key -> its shards
    missing: set = field(default_factory=set)  # (cell, first, last) of the shards not on disk at parse time
    batches: list = field(default_factory=list)  # batches.Batch: the missing shards, packed
    batch_of: dict = field(default_factory=dict)  # batch name -> Batch
    batch_holding: dict = field(default_factory=dict)  # missing shard -> name of its batch

    @property
    def store(self) -> Layout:
        return self.layout.stored()

    @property
    def cluster(self) -> bool:
        return self.config.get("batch_minutes") is not None

    @property
    def partial(self) -> bool:
        """``first_run`` > 0: this run computes shards only (runs first_run..runs-1), nothing after them."""
        return self.config.get("first_run", 0) > 0

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

    def shard(self, cell: str, first: int, last: int) -> str:
        return self.layout.shard(*split_key(cell), self.names.shards[cell], first, last)

    def shard_id(self, cell: str, first: int, last: int) -> str:
        """A shard's path under the results folder: its name, which names its batch."""
        return shard_rel(cell, self.names.shards[cell], first, last)

    def cell_folder(self, cell: str) -> str:
        return f"{self.layout.cell_dir(*split_key(cell))}/{self.names.shards[cell]}"

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
        """A cell's shards (what its summary reads)."""
        cell = cell_key(dataset, int(horizon), algo)
        return [self.shard(cell, a, b) for a, b in self.cell_shards[cell]]

    def shard_seconds(self, cell: str, first: int, last: int) -> float:
        """Estimated seconds of a shard's runs (jobsize.run_seconds)."""
        _, horizon, algo = split_key(cell)
        return (last - first + 1) * jobsize.run_seconds(algo, horizon)

    def all_shards(self) -> list[tuple[str, int, int]]:
        """Every shard of every cell, by dataset (a batch reads one prepared file), cell, first run."""
        return sorted(((c, a, b) for c, held in self.cell_shards.items() for a, b in held),
                      key=lambda s: (dataset_of(s[0]), s[0], s[1]))

    def missing_shards(self) -> list[tuple[str, int, int]]:
        return [s for s in self.all_shards() if s in self.missing]

    # --- batches ---------------------------------------------------------------------------------------------
    def batch(self, name: str):
        """The batch of that name planned here, or ReproError."""
        try:
            return self.batch_of[name]
        except KeyError:
            raise ReproError(f"batch {name} is not in this plan (its shards exist, or the config changed since "
                             "it was planned): run snakemake again") from None

    def batch_done(self, name: str) -> str:
        return self.layout.batch_done(name)

    def cell_inputs(self, dataset: str, horizon, algo: str) -> list[str]:
        """A summary's inputs: its shards that exist, and for the missing ones the end of the batch computing
        them (Snakemake's link to that job; the summary reads the shards themselves)."""
        cell = cell_key(dataset, int(horizon), algo)
        out = []
        for a, b in self.cell_shards[cell]:
            s = (cell, a, b)
            out.append(self.batch_done(self.batch_holding[s]) if s in self.missing else self.shard(*s))
        return list(dict.fromkeys(out))

    def batch_prepared(self, name: str) -> str:
        return self.layout.prepared_file(batching.dataset_of_batch(name))

    def batch_runtime(self, name: str, attempt: int = 1) -> int:
        """SLURM minutes for a batch's ``attempt``-th try: doubled per retry, capped by partition_minutes. A node
        that no longer plans the batch (its shards finished meanwhile) reads its spec."""
        batch = self.batch_of.get(name) or batching.read_spec(self.layout.batch_spec(name), name, missing_ok=True)
        seconds = batch.seconds if batch else 0.0
        return batching.requested_minutes(seconds, attempt, self.config.get("partition_minutes"))

    def prepared_of_cell(self, cell: str) -> str:
        return self.layout.prepared_file(dataset_of(cell))

    # --- targets ---------------------------------------------------------------------------------------------
    def figure_outputs(self, fig) -> list[str]:
        return self.store.figure_outputs(fig.paper, fig.id)

    def all_figure_outputs(self) -> list[str]:
        return [t for fig in self.figures for t in self.figure_outputs(fig)]

    def first_targets(self, status=None) -> list[str]:
        """What rule ``all`` asks for first: the summaries, so that the simulation starts while a first run's
        probes run; with ``first_run`` set, the ends of the batches computing the missing shards, and nothing
        after them. ``status(dataset) -> (file, available)`` is an optional dataset's probe (a checkpoint, as
        in ``figure_inputs``): its batches are asked for only where it was found."""
        if not self.partial:
            return self.runtime_inputs()
        out = []
        for b in self.batches:
            if self.catalog.is_optional(b.dataset) and status is not None:
                path, available = status(b.dataset)
                out.append(path)
                if not available:
                    continue
            out.append(self.batch_done(b.name))
        return list(dict.fromkeys(out))

    def all_targets(self) -> list[str]:
        """Every store entry a run publishes (rule ``all``), leaderboards aside (leaderboard.targets); none with
        ``first_run`` set."""
        if self.partial:
            return []
        st = self.store
        return [*self.all_figure_outputs(), st.claims_csv, st.runtime_csv, st.report_md, st.reproduction_md,
                st.software_json]

    def optional_datasets(self) -> list[str]:
        """The optional (network) datasets a figure draws: their probes name the figures (names.name_outputs)."""
        return sorted({p.dataset for f in self.figures for p in f.panels if self.catalog.is_optional(p.dataset)})

    def rename_outputs(self) -> None:
        """Name the figures and what reads them again if a probe ran since they were named (a first run)."""
        if names.probes_of(self) != self.names.probes:
            names.name_outputs(self)

    def summary_of(self, dataset: str, horizon, algo: str) -> str:
        return self.layout.summary(dataset, int(horizon), algo)

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

    def fallback_args(self, dataset: str) -> str:
        """The prepared files a dataset derives from (a fallback instance), as the prepare job's options."""
        return " ".join(f"--input {d}={self.layout.prepared_file(d)}" for d in self.catalog.dataset_inputs(dataset))

    def deviations_file(self) -> str:
        return self.root_path("config/deviations.yaml")

    def check_key(self, table: str, name, key: str) -> None:
        """A job asked for under a key that is not this plan's (a path typed by hand, or left from another
        config) would store something under a name that does not cover it: refused, in one line."""
        found = getattr(self.names, table)
        found = found.get(name) if isinstance(found, dict) else found
        if found != key:
            raise ReproError(f"{table} {name} is named {found} in this plan, not {key}: ask for the plan's targets "
                             "(snakemake with no target) instead")


def pack_batches(plan: Plan, config: dict) -> list:
    """The batches of the plan's missing shards. Cluster mode (``batch_minutes`` set): a dataset's shards, any
    algorithms, about ``batch_minutes`` each. Local runs: about ``shard_seconds`` each, of one algorithm,
    taking every parameter set and horizon of its kernel together (one job for a kernel's many small cells)."""
    minutes = config["batch_minutes"]
    todo = plan.missing_shards()
    if minutes is not None:
        return batching.pack(todo, plan.shard_seconds, dataset_of, plan.shard_id, minutes * 60)
    todo = sorted(todo, key=lambda s: (dataset_of(s[0]), kernel_of(s[0]), s[0], s[1]))
    return batching.pack(todo, plan.shard_seconds, dataset_of, plan.shard_id, config["shard_seconds"],
                         algorithm_of=kernel_of)


def raise_cell_runs(cell_runs: dict[str, int], listed: dict | None, max_runs: int | None) -> None:
    """Config ``cell_runs`` (``banditrepro settle``): raise the listed cells' runs in place, never lower them, capped
    by ``max_runs``; absent, nothing changes. A key naming no cell is an error (a typo would extend nothing)."""
    for key, n in (listed or {}).items():
        if key not in cell_runs:
            raise ReproError(f"config error: cell_runs.{key}: no such cell in this config's plan "
                             "(`banditrepro estimate` lists the cells)")
        cell_runs[key] = max(cell_runs[key], min(int(n), max_runs) if max_runs else int(n))


def build_plan(config: dict, root, scan=True, cluster_minutes=None, where=None) -> Plan:
    """Shape ``config`` (in place: workflow/config.py ``shape_config``, with ``cluster_minutes``, the SLURM
    profile's batch size), load the catalog and the manifest, check every claim, name every stored result, plan
    the shards of every cell and the batches computing the missing ones. ``scan``: look at which shards exist
    (see the module docstring). ReproError (one line) on bad input. ``where`` (results folder, data folder):
    read a results folder outside the project, with its prepared files (banditrepro/sharing: verify, merge and
    compare of a bundle); the names are the same wherever the files lie."""
    root = Path(root)
    shape_config(config, root, cluster_minutes)
    plan = Plan(config, root, layout_of(config), None, [], {})
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
    raise_cell_runs(plan.cell_runs, config.get("cell_runs"), config["max_runs"])
    plan.layout = layout_of(config, plan.names)
    if where is not None:
        plan.layout = replace(plan.layout, results_dir=str(where[0]), data_dir=str(where[1]))
    names.name_plan(plan)
    for key, n in plan.cell_runs.items():
        existing = existing_shards(plan.cell_folder(key)) if scan else {}
        plan.cell_shards[key] = plan_shards(n, shard_size(key, n, config), existing, config["first_run"])
        plan.missing.update((key, a, b) for a, b in plan.cell_shards[key] if existing.get(a) != b)
    plan.batches = pack_batches(plan, config)
    plan.batch_of = {b.name: b for b in plan.batches}
    plan.batch_holding = {s: b.name for b in plan.batches for s in b.shards}
    batching.check_limit(plan.batches, config.get("partition_minutes"))
    return plan


def open_project(project_info, configfiles=(), overrides=(), profile=None, scan=True) -> Plan:
    """The plan Snakemake would build for ``snakemake [--workflow-profile profile] [--configfile f ...] [--config
    k=v ...]`` in the project, its config merged by Snakemake's own code (``merged_config``) and shaped once (by
    ``build_plan``): how every command opens the project. The working directory becomes the project's, since the
    plan's paths are relative to it, as in the workflow. ``UnreadableConfig`` for a config Snakemake cannot read."""
    if project_info.root is None:
        raise ReproError(f"no project folder here ({project_info.hint()})")
    root = project_info.root
    files = [Path(f).resolve() for f in configfiles]
    config, minutes = merged_config(root, files, overrides, profile and Path(profile).resolve())
    os.chdir(root)
    return build_plan(config, root, scan=scan, cluster_minutes=minutes)
