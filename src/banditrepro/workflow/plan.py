"""What a config asks the workflow to do, computed once at parse time: ``build_plan(config, root)``.

A ``Plan`` holds the validated config, its ``Layout`` (every path), the catalog, the manifest's figures,
the runs of every cell and the grouping of those runs into jobs, and answers every input list and
parameter the rules need. No path here is absolute unless the user configured it so: params and inputs
are relative to the working directory (``rel``), so a copied or moved project folder is up to date.

Grouping runs into jobs. A cell's runs are grouped into jobs of ``k`` runs
(``cells_per_job``; ``auto`` sizes k from the horizon and the kernel's ns/step, banditrepro/jobsize.py),
one workflow rule per run range. Run files that already exist, as a contiguous prefix run0..run{p-1}, are
grouped on their own and the new runs after them in new ranges, so raising a figure's ``runs:`` adds jobs
for the new runs only: Snakemake would otherwise rerun (and rewrite) every file of a range that mixes
finished and missing runs. A grouping change never reruns a finished range: the rule names and the
``runs`` param (derived from the outputs) are not recorded as rerun triggers.
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
from banditrepro.workflow import digests
from banditrepro.workflow.config import check_config

SCHEMA = "workflow/schemas/config.schema.yaml"
CHUNK_RULE = re.compile(r"simulate_runs_(\d+)_(\d+)$")


def cell_key(dataset: str, horizon: int, algo: str) -> str:
    return f"{dataset}/T{horizon}/{algo}"


def split_key(key: str) -> tuple[str, int, str]:
    dataset, horizon, algo = key.split("/")
    return dataset, int(horizon[1:]), algo


def one_of(keys) -> str:
    """Wildcard constraint matching exactly these cell keys (keeps the chunk rules unambiguous)."""
    return "(?:" + "|".join(re.escape(k) for k in sorted(keys)) + ")" if keys else "(?!)"


def chunk_name(first: int, last: int) -> str:
    """Name of the rule computing runs first..last of its cells (``CHUNK_RULE`` reads it back)."""
    return f"simulate_runs_{first}_{last}"


def plan_chunks(runs: int, k: int, done: int = 0) -> list[tuple[int, int]]:
    """Inclusive run ranges of ``runs`` runs, ``k`` per job: the ``done`` runs whose files exist first, on
    their own, then the rest (so no range mixes finished and new runs)."""
    done = max(0, min(done, runs))
    new = [(a + done, b + done) for a, b in jobsize.chunks(runs - done, k)]
    return jobsize.chunks(done, k) + new


def existing_prefix(folder, runs: int) -> int:
    """How many of run0.npz, run1.npz, ... exist in ``folder`` without a gap (at most ``runs``)."""
    try:
        names = set(os.listdir(folder))
    except OSError:
        return 0
    p = 0
    while p < runs and f"run{p}.npz" in names:
        p += 1
    return p


def target_chunks(argv) -> dict[str, tuple[int, int]]:
    """The chunk jobs a cluster node was started for (``--target-jobs simulate_runs_a_b:cell=...``): cell
    key -> run range. A node parses the workflow again, when more or fewer run files exist than when the
    main process planned, so it takes the ranges the main process chose from its command line."""
    out: dict[str, tuple[int, int]] = {}
    args = list(argv)
    if "--target-jobs" not in args:
        return out
    for spec in args[args.index("--target-jobs") + 1 :]:
        if spec.startswith("-"):
            break
        rule, _, wildcards = spec.partition(":")
        m = CHUNK_RULE.match(rule)
        # Snakemake writes rule:key=value,... and quotes a value that holds a comma
        cell = re.search(r'(?:^|,)cell=("[^"]*"|[^,]*)', wildcards)
        if m and cell:
            out[cell.group(1).strip('"')] = (int(m.group(1)), int(m.group(2)))
    return out


@dataclass
class Plan:
    config: dict
    root: Path  # the project (Snakefile's folder); relative config paths resolve against it
    layout: Layout
    catalog: object
    figures: list
    cell_runs: dict[str, int]  # cell key -> runs
    single: list[str] = field(default_factory=list)  # cells computed one run per job (rule `simulate`)
    chunked: dict[tuple[int, int], list[str]] = field(default_factory=dict)  # run range -> cells

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

    def cell_pattern(self, run="{run}") -> str:
        """A cell's run file with the cell as one wildcard, ``{cell}`` = <dataset>/T<horizon>/<algo>
        (Layout.cell with the three parts joined), so a rule can be restricted to a list of cells."""
        return f"{self.layout.cells}/{{cell}}/run{run}.npz"

    def log(self, *parts: str) -> str:
        """A job log of this config: <logs>/<parts...>.log (logs/ or logs/<name>/, see Layout.logs)."""
        return "/".join([self.layout.logs, *parts]) + ".log"

    @staticmethod
    def data_log(kind: str, name: str) -> str:
        """A data job's log: logs/<kind>/<name>.log, shared by every config like data/ itself."""
        return f"logs/{kind}/{name}.log"

    @staticmethod
    def cell_minutes(cell: str, runs: int = 1) -> int:
        """SLURM runtime of a job computing ``runs`` runs of a cell (generous: ~5 min + 1 per 2e5 steps)."""
        return 5 + runs * split_key(cell)[1] // 200_000

    @property
    def figure_by_stem(self) -> dict:
        return {f.stem: f for f in self.figures}

    def figure(self, paper: str, figure: str):
        return self.figure_by_stem[f"{paper}/{figure}"]

    def runs_of(self, dataset: str, horizon, algo: str) -> int:
        return self.cell_runs[cell_key(dataset, int(horizon), algo)]

    def cell_files(self, dataset: str, horizon, algo: str) -> list[str]:
        """Every run file of a cell (what its summary reads)."""
        return [self.layout.cell(dataset, horizon, algo, r) for r in range(self.runs_of(dataset, horizon, algo))]

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
    def cell_code(self, cell: str) -> str:
        return digests.cell_code(split_key(cell)[2])

    def figure_digest(self, paper: str, figure: str) -> str:
        return digests.figure_digest(self.figure(paper, figure))

    def claims_digest(self) -> str:
        return digests.claims_digest(self.figures)

    def deviations_file(self) -> str:
        return self.root_path("config/deviations.yaml")


def group_runs(cell_runs: dict[str, int], config: dict, done=lambda key, runs: 0, fixed=None):
    """(single, chunked): cells computed one run per job, and run range -> cells computed in jobs of
    exactly that range. ``done(key, runs)`` is the prefix of a cell's runs whose files exist; ``fixed``
    (cell -> range) forces a cell's range (a cluster node's target job)."""
    single, chunked = [], {}
    for key, n in cell_runs.items():
        if fixed and key in fixed:
            chunked.setdefault(fixed[key], []).append(key)
            continue
        k = config["cells_per_job"]
        if k == "auto":
            _, horizon, algo = split_key(key)
            k = jobsize.runs_per_job(algo, horizon, n, config["job_seconds"])
        k = min(int(k), n)
        if k == 1:
            single.append(key)
            continue
        for chunk in plan_chunks(n, k, done(key, n)):
            chunked.setdefault(chunk, []).append(key)
    return single, chunked


def build_plan(config: dict, root, argv=(), scan=True) -> Plan:
    """Validate ``config`` (in place, defaults filled in), load the catalog and the manifest, check every
    claim, plan the runs of every cell. ``scan``: look at which run files exist (see the module docstring);
    ``argv``: a cluster node's command line (its target jobs). ReproError (one line) on bad input."""
    from banditrepro import claims, papers
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
        claims.validate(plan.figures)  # every claim's test kind and parameters, now rather than in the job
        # every deviation's measured effect names figures and lines that exist
        validate_deviations(load_deviations(plan.deviations_file()), plan.figures)
    except ReproError as exc:
        raise ReproError(f"configuration error: {exc}") from None
    # cells of optional datasets (network only) are planned too: figures ask for them only when available
    runs = cell_runs(plan.figures, config["runs"], config["max_runs"])
    plan.cell_runs = {cell_key(*c): n for c, n in runs.items()}

    def done(key, n):
        # relative to the working directory, where Snakemake runs and writes the cells
        return existing_prefix(plan.layout.cell_dir(*split_key(key)), n) if scan else 0

    plan.single, plan.chunked = group_runs(plan.cell_runs, config, done, target_chunks(argv))
    return plan
