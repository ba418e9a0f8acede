"""What a config asks the workflow to do, computed once at parse time: ``build_plan(config, root)``.

A ``Plan`` holds the validated config, its ``Layout`` (every path), the catalog, the manifest's figures,
the runs of every cell and the shards and batches that compute them, and answers every input list and
parameter the rules need. No path here is absolute unless the user configured it so: params and inputs
are relative to the working directory (``rel``), so a copied or moved project folder is up to date.

Shards. A cell's runs are stored in shards, one file holding runs first..last
(``<cell>/<code>/runs<first>-<last>.npz``; ``code`` is the digest of the code the cell runs, so editing that
code makes new files rather than rewriting old ones). A cell's shards hold its runs 0..n-1: the shards that
exist, followed from run 0 (one listing of the cell's folder), then new shards of ``k`` runs
(``runs_per_shard``; ``auto`` sizes k from the horizon and the kernel's ns/step, banditrepro/jobsize.py) up
to run n-1. Raising ``runs`` appends shards after the existing ones, so only the new runs are computed and no
file is rewritten. A cell's shard list is the same when planned again after some of its new shards were
written, so a killed run resumes with the same shards and a cluster node plans what the main process
planned. A summary reads its cell's shards and keeps runs 0..n-1 (the last shard may hold more).

Batches. Every shard is computed by a batch (banditrepro/workflow/batches.py), one job of rule ``simulate``
named by its wildcard ``{batch}``; batches depend on the shard lists and the target only (``batch_minutes``,
or ``shard_seconds`` when it is null), not on which shards exist. A batch is named by its shards' paths
under the results folder (``shard_id``: base seed included), so its receipt stands for exactly those files;
receipts are checked against their shards at parse time (``drop_stale_receipts``,
docs/decisions.md#receipts-checked).
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
from banditrepro.workflow import batches as batching
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


def dataset_of(key: str) -> str:
    return key.partition("/")[0]


def kernel_of(key: str) -> str:
    """The algorithm a cell runs, without its parameters (``rucb`` of ``sushi16/T100000/rucb+alpha=0.6``)."""
    return split_key(key)[2].partition("+")[0]


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


def plan_shards(runs: int, k: int, existing: dict[int, int]) -> list[tuple[int, int]]:
    """Inclusive run ranges holding runs 0..runs-1: existing shards followed from run 0, then new ones of
    ``k`` runs (the last clipped at ``runs``)."""
    shards, p = [], 0
    while p < runs and p in existing:
        shards.append((p, existing[p]))
        p = existing[p] + 1
    return shards + [(a + p, b + p) for a, b in jobsize.chunks(runs - p, k)]


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
    layout: Layout
    catalog: object
    figures: list
    cell_runs: dict[str, int]  # cell key -> runs
    codes: dict[str, str] = field(default_factory=dict)  # cell key -> code digest (its shards' folder)
    cell_shards: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # cell key -> its shards
    batches: list = field(default_factory=list)  # batches.Batch: every shard, packed (state-independent)
    batch_of: dict = field(default_factory=dict)  # batch name -> Batch
    cell_batches: dict = field(default_factory=dict)  # cell key -> names of the batches holding its shards

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
        return self.layout.shard(*split_key(cell), self.codes[cell], first, last)

    def shard_relpath(self, cell: str, first: int, last: int) -> str:
        """A shard's path under the cells folder (what receipts and logs list)."""
        return f"{cell}/{self.codes[cell]}/runs{first}-{last}.npz"

    def shard_id(self, cell: str, first: int, last: int) -> str:
        """A shard's path under the results folder, base seed included: what names its batch, so a batch and
        its receipt stand for everything the shards' bytes depend on (docs/decisions.md#batch-identity)."""
        return f"{self.layout.cells[len(self.layout.results_dir) + 1:]}/{self.shard_relpath(cell, first, last)}"

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
        """A cell's shards (what its summary reads)."""
        cell = cell_key(dataset, int(horizon), algo)
        return [self.shard(cell, a, b) for a, b in self.cell_shards[cell]]

    def shard_seconds(self, cell: str, first: int, last: int) -> float:
        """Estimated seconds of a shard's runs (jobsize.run_seconds)."""
        _, horizon, algo = split_key(cell)
        return (last - first + 1) * jobsize.run_seconds(algo, horizon)

    def all_shards(self) -> list[tuple[str, int, int]]:
        """Every shard of every cell in the cluster batches' order: by dataset (a batch reads one prepared file),
        cell, first run (local batches take each dataset's shards algorithm by algorithm: ``pack_batches``)."""
        return sorted(((c, a, b) for c, held in self.cell_shards.items() for a, b in held),
                      key=lambda s: (dataset_of(s[0]), s[0], s[1]))

    # --- batches ---------------------------------------------------------------------------------------------
    def batch(self, name: str):
        """The batch of that name (a job's wildcard), or ReproError: a node planning other batches than the
        main process (a different config or project state) stops here rather than computing something else."""
        try:
            return self.batch_of[name]
        except KeyError:
            raise ReproError(f"batch {name} is not in this plan (config or shards changed since it was "
                             "submitted): run snakemake again") from None

    def receipt(self, name: str) -> str:
        return self.layout.receipt(name)

    def cell_receipts(self, dataset: str, horizon, algo: str) -> list[str]:
        """A summary's inputs: the receipts of the batches holding the cell's shards."""
        return [self.receipt(b) for b in self.cell_batches[cell_key(dataset, int(horizon), algo)]]

    def batch_prepared(self, name: str) -> str:
        return self.layout.prepared_file(self.batch(name).dataset)

    def batch_runtime(self, name: str, attempt: int = 1) -> int:
        """SLURM minutes for a batch's ``attempt``-th try: doubled per retry, capped by partition_minutes."""
        return self.batch(name).minutes(attempt, self.config.get("partition_minutes"))

    def forget_batches_of(self, shards) -> list[str]:
        """Remove the receipts of the batches holding ``shards`` ((cell, first, last), e.g. a shard deleted by
        hand after its batch finished), so the next run computes them again; the receipts removed."""
        wanted = set(shards)
        removed = []
        for b in self.batches:
            if wanted.intersection(b.shards) and os.path.exists(self.receipt(b.name)):
                os.unlink(self.receipt(b.name))
                removed.append(self.receipt(b.name))
        return removed

    def receipt_targets(self) -> list[str]:
        """The receipts of every batch of an always-available dataset (rule ``all``), so a batch whose receipt
        was dropped runs again even when no summary needs to (docs/decisions.md#receipts-checked)."""
        return [self.receipt(b.name) for b in self.batches if not self.catalog.is_optional(b.dataset)]

    def stale_receipts(self) -> list[str]:
        """Receipts that exist but whose batch has a shard missing or incomplete (``cell.shard_complete``)
        for the prepared file's sha256 the receipt records, e.g. a shard deleted by hand; an unreadable
        receipt too. Reads receipts and sidecars only: no data file is hashed."""
        stale = []
        for b in self.batches:
            path = self.receipt(b.name)
            try:
                sha = json.loads(Path(path).read_text())["prepared_sha256"]
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError):
                stale.append(path)
                continue
            if self.incomplete_shards(b, sha):
                stale.append(path)
        return stale

    def incomplete_shards(self, batch, prepared_sha256: str) -> list:
        """The shards of ``batch`` not complete (``cell.shard_complete``) for a prepared file of this sha256."""
        from banditrepro.cell import shard_complete

        return [s for s in batch.shards if not shard_complete(self.shard(*s), prepared_sha256)]

    def drop_stale_receipts(self, say=None) -> list[str]:
        """Remove ``stale_receipts`` (the main process at parse time, docs/decisions.md#receipts-checked): their
        batches run again in this very run. ``say``: a stream told one line per receipt. The receipts removed."""
        stale = self.stale_receipts()
        for path in stale:
            Path(path).unlink(missing_ok=True)
            if say is not None:
                print(f"banditrepro: batch {Path(path).stem} has a shard missing or incomplete: it runs again",
                      file=say)
        return stale

    def prepared_of_cell(self, cell: str) -> str:
        return self.layout.prepared_file(dataset_of(cell))

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


def code_folder(algo: str) -> str:
    """The folder of an algorithm id's shards below its cell: the first ``CODE_CHARS`` of its code digest."""
    return digests.cell_code(algo)[:CODE_CHARS]


def pack_batches(plan: Plan, config: dict) -> list:
    """The plan's batches. Cluster mode (``batch_minutes`` set): a dataset's shards, any algorithms, about
    ``batch_minutes`` each. Local runs: about ``shard_seconds`` each, of one algorithm, taking every parameter
    set and horizon of its kernel together (one job for a kernel's many small cells, not one per cell)."""
    minutes = config["batch_minutes"]
    if minutes is not None:
        return batching.pack(plan.all_shards(), plan.shard_seconds, dataset_of, plan.shard_id, minutes * 60)
    shards = sorted(plan.all_shards(), key=lambda s: (dataset_of(s[0]), kernel_of(s[0]), s[0], s[1]))
    return batching.pack(shards, plan.shard_seconds, dataset_of, plan.shard_id, config["shard_seconds"],
                         algorithm_of=kernel_of)


def build_plan(config: dict, root, scan=True) -> Plan:
    """Validate ``config`` (in place, defaults filled in), load the catalog and the manifest, check every
    claim, plan the shards of every cell and the batches computing them. ``scan``: look at which shards
    exist (see the module docstring). ReproError (one line) on bad input."""
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
        plan.codes[key] = code_folder(split_key(key)[2])
        existing = existing_shards(plan.cell_folder(key)) if scan else {}
        plan.cell_shards[key] = plan_shards(n, shard_size(key, n, config), existing)
    plan.batches = pack_batches(plan, config)
    plan.batch_of = {b.name: b for b in plan.batches}
    for b in plan.batches:
        for cell in dict.fromkeys(c for c, _, _ in b.shards):
            plan.cell_batches.setdefault(cell, []).append(b.name)
    batching.check_limit(plan.batches, config.get("partition_minutes"))
    return plan
