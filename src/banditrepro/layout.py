"""Every path the pipeline reads or writes, in one object.

A ``Layout`` is built from a config's ``results_dir`` and ``base_seed`` (and the data folder, shared by
every config because prepared datasets depend on the catalog only). Rules, job bodies, the CLI, figure
drawers, claim tests and the report all take one and never spell a path themselves, so the layout below
is written exactly once:

    data/raw/<source>                                   verified raw files
    data/prepared/<dataset>.json                        derived instances
    data/status/<dataset>.json                          probe verdict of an optional (network) dataset
    <results>/cells/seed<base_seed>/<dataset>/T<h>/<algo>/<code>/runs<a>-<b>.npz
                                                        runs a..b of a cell (+ .json sidecar); <code>: the
                                                        digest of the code it runs (workflow/plan.py)
    <results>/batches/<batch>.json                      receipt of a batch of shards (workflow/batches.py)
    <results>/logs/shards-computed.log                  one line per shard computed (workflow/shard_claims.py)
    <results>/summaries/<dataset>/T<h>/<algo>.npz       one cell's runs summarised
    <results>/figures/<paper>/<figure>.{png,pdf}
    <results>/tables/<paper>/<figure>.{csv,md,tex}, <results>/tables/runtime.csv
    <results>/claims.csv, report.md, reproduction.md, software.json (the run's software stack)
    <results>/leaderboards/<paper>.{csv,md,png,pdf}     only with challengers (banditrepro/leaderboard.py)
    logs/ (results/) or logs/<name>/ (results/<name>)   job logs

Paths are relative (to the project root, where Snakemake runs) unless the user configured absolute ones,
so nothing recorded depends on where the checkout lives. Cells sit under their base seed, so two seeds
never share a cell file; everything after the cells is per ``results_dir``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_BASE_SEED = 20240601  # the one place the default root seed is written (schema default mirrors it)
DEFAULT_RESULTS_DIR = "results"
DEFAULT_DATA_DIR = "data"


@dataclass(frozen=True)
class Layout:
    results_dir: str = DEFAULT_RESULTS_DIR
    base_seed: int = DEFAULT_BASE_SEED
    data_dir: str = DEFAULT_DATA_DIR

    def __post_init__(self):
        object.__setattr__(self, "results_dir", str(self.results_dir).rstrip("/") or ".")
        object.__setattr__(self, "data_dir", str(self.data_dir).rstrip("/") or ".")

    @classmethod
    def from_config(cls, config: dict) -> Layout:
        return cls(config.get("results_dir", DEFAULT_RESULTS_DIR), int(config.get("base_seed", DEFAULT_BASE_SEED)))

    # --- data (shared by every config) -------------------------------------------------------------------
    @property
    def raw(self) -> str:
        return f"{self.data_dir}/raw"

    @property
    def prepared(self) -> str:
        return f"{self.data_dir}/prepared"

    @property
    def status(self) -> str:
        return f"{self.data_dir}/status"

    def raw_file(self, source: str) -> str:
        return f"{self.raw}/{source}"

    def prepared_file(self, dataset: str) -> str:
        return f"{self.prepared}/{dataset}.json"

    def status_file(self, dataset: str) -> str:
        return f"{self.status}/{dataset}.json"

    # --- results of this config --------------------------------------------------------------------------
    @property
    def cells(self) -> str:
        return f"{self.results_dir}/cells/seed{self.base_seed}"

    @property
    def summaries(self) -> str:
        return f"{self.results_dir}/summaries"

    @property
    def tables(self) -> str:
        return f"{self.results_dir}/tables"

    @property
    def figures(self) -> str:
        return f"{self.results_dir}/figures"

    @property
    def logs(self) -> str:
        if self.results_dir == DEFAULT_RESULTS_DIR:
            return "logs"
        return f"logs/{self.results_dir.removeprefix(DEFAULT_RESULTS_DIR + '/')}"

    def cell_dir(self, dataset: str, horizon: int, algo: str) -> str:
        return f"{self.cells}/{dataset}/T{horizon}/{algo}"

    def shard(self, dataset: str, horizon: int, algo: str, code: str, first: int, last: int) -> str:
        """Runs first..last of a cell, computed by the code of digest ``code``."""
        return f"{self.cell_dir(dataset, horizon, algo)}/{code}/runs{first}-{last}.npz"

    @property
    def receipts(self) -> str:
        return f"{self.results_dir}/batches"

    def receipt(self, batch: str) -> str:
        """What a finished batch writes last: its shards and the prepared file they came from."""
        return f"{self.receipts}/{batch}.json"

    @property
    def shards_log(self) -> str:
        """One line per shard computed (path, host, pid, SLURM job): proves no shard was computed twice."""
        return f"{self.results_dir}/logs/shards-computed.log"

    def summary(self, dataset: str, horizon: int, algo: str) -> str:
        return f"{self.summaries}/{dataset}/T{horizon}/{algo}.npz"

    def figure_png(self, paper: str, figure: str) -> str:
        return f"{self.figures}/{paper}/{figure}.png"

    def figure_pdf(self, paper: str, figure: str) -> str:
        return f"{self.figures}/{paper}/{figure}.pdf"

    def table(self, paper: str, figure: str, suffix: str = "csv") -> str:
        return f"{self.tables}/{paper}/{figure}.{suffix}"

    def figure_outputs(self, paper: str, figure: str) -> list[str]:
        """PNG, PDF and the table as CSV, Markdown and LaTeX, in that order."""
        return [self.figure_png(paper, figure), self.figure_pdf(paper, figure),
                *(self.table(paper, figure, s) for s in ("csv", "md", "tex"))]

    @property
    def leaderboards(self) -> str:
        return f"{self.results_dir}/leaderboards"

    def leaderboard(self, paper: str, suffix: str = "csv") -> str:
        return f"{self.leaderboards}/{paper}.{suffix}"

    def leaderboard_outputs(self, paper: str) -> list[str]:
        """CSV, Markdown, PNG and PDF, in that order."""
        return [self.leaderboard(paper, s) for s in ("csv", "md", "png", "pdf")]

    @property
    def claims_csv(self) -> str:
        return f"{self.results_dir}/claims.csv"

    @property
    def runtime_csv(self) -> str:
        return f"{self.tables}/runtime.csv"

    @property
    def report_md(self) -> str:
        return f"{self.results_dir}/report.md"

    @property
    def reproduction_md(self) -> str:
        return f"{self.results_dir}/reproduction.md"

    @property
    def software_json(self) -> str:
        """The run's software stack (banditrepro.workflow.software)."""
        return f"{self.results_dir}/software.json"

    def under(self, root: str | Path) -> Layout:
        """The same layout with relative folders resolved against ``root`` (for callers elsewhere)."""
        def res(p: str) -> str:
            return p if Path(p).is_absolute() else str(Path(root) / p)

        return Layout(res(self.results_dir), self.base_seed, res(self.data_dir))
