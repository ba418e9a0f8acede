"""Every path the pipeline reads or writes, in one object.

A ``Layout`` is built from a config's ``results_dir`` (and the data folder, shared by every config) and, for
everything stored by name, the plan's ``Names`` (banditrepro/workflow/names.py: the key of each stored
result). Rules, job bodies, the CLI, figure drawers, claim tests and the report all take
one and never spell a path themselves, so the layout below is written exactly once:

    data/raw/<source>                                   verified raw files
    data/prepared/<dataset>/<data key>.json             derived instances, named by what they derive from
    data/status/<dataset>.json                          probe verdict of an optional (network) dataset
    <results>/cells/<dataset>/T<h>/<algo>/<shards key>/runs<a>-<b>.npz
                                                        runs a..b of a cell (+ .json sidecar); the key covers
                                                        code, data, horizon, base seed, format and stack
    <results>/summaries/<dataset>/T<h>/<algo>/<summary key>.npz   runs 0..n-1 of a cell summarised
    <results>/store/<kind>/.../<key>/                   figures, tables, claims, leaderboards, report, run-time
                                                        table and software stack, each named by what it reads
    <results>/batches/<batch>.json                      cluster mode: the shards a batch computes (its name
                                                        is their digest); <batch>.done its end (temporary)
    <results>/figures/<paper>/<figure>.{png,pdf}        published copies of the store's entries (the fixed
    <results>/tables/<paper>/<figure>.{csv,md,tex}      paths a reader opens), brought up to date by the
    <results>/tables/runtime.csv, leaderboards/…        last step of every run (workflow/publish.py);
    <results>/claims.csv, report.md, reproduction.md,   <results>/published.json lists them with the key
    software.json                                       each was made from
    logs/ (results/) or logs/<name>/ (results/<name>)   job logs

``layout.stored()`` is the same layout whose published paths are the store's entries: what every job reads
and writes. Paths are relative (to the project root, where Snakemake runs) unless the user configured
absolute ones, so nothing recorded depends on where the checkout lives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from banditrepro import ReproError

DEFAULT_BASE_SEED = 20240601  # the one place the default root seed is written (schema default mirrors it)
DEFAULT_RESULTS_DIR = "results"
DEFAULT_DATA_DIR = "data"
KEY_CHARS = 16  # of every stored result's key (names.key): 64 bits; a folder holds thousands of names, not billions

# The names below are spelled here and nowhere else, each beside its parser: a cell, a shard's and a summary's
# file, a key. Everything that writes, lists or receives them (the plan, batches, clean, bundle, the reader of
# received folders, merge, verify) builds and reads them through these.
KEY = re.compile(rf"[0-9a-f]{{{KEY_CHARS}}}")
HORIZON = re.compile(r"T([1-9]\d*)")  # a cell's horizon as its name spells it
SHARD_SUFFIX = ".npz"  # a shard's and a summary's arrays
SIDECAR_SUFFIX = ".json"  # beside each: what was measured (wall time, versions), never a number it holds
SHARD_STEM = re.compile(r"runs(\d+)-(\d+)")  # a shard's name without its suffix
SHARD_FILE = re.compile(SHARD_STEM.pattern + re.escape(SHARD_SUFFIX))


def cell_key(dataset: str, horizon: int, algo: str) -> str:
    """A cell: ``<dataset>/T<horizon>/<algorithm id>``, its folder under cells/ and summaries/."""
    return f"{dataset}/T{horizon}/{algo}"


def parse_cell(text) -> tuple[str, int, str] | None:
    """(dataset, horizon, algorithm id) of a cell key; None for anything else (a received name is not trusted)."""
    parts = text.split("/") if isinstance(text, str) else []
    if len(parts) != 3 or not (m := HORIZON.fullmatch(parts[1])):
        return None
    return parts[0], int(m.group(1)), parts[2]


def split_key(key: str) -> tuple[str, int, str]:
    """(dataset, horizon, algorithm id) of a cell key this checkout made (``parse_cell``, which must succeed)."""
    found = parse_cell(key)
    if found is None:
        raise ValueError(f"not a cell key: {key!r}")
    return found


def shard_file(first: int, last: int) -> str:
    """The file of a cell's runs first..last (``shard_runs`` reads it back)."""
    return f"runs{first}-{last}{SHARD_SUFFIX}"


# The store's kinds (<results>/store/<kind>/…) and the files of one entry of each: a figure's and a leaderboard's
# are named after the figure or the paper, one per suffix (the order of ``figure_outputs`` and
# ``leaderboard_outputs``), the others' are fixed. Layout spells their paths; clean (workflow/clean.py) tells
# the files the workflow writes in the store by this table.
FIGURE_SUFFIXES = ("png", "pdf", "csv", "md", "tex")
LEADERBOARD_SUFFIXES = ("csv", "md", "png", "pdf")
SINGLE_FILES = {"claims": ("claims.csv",), "runtime": ("runtime.csv",), "report": ("report.md", "reproduction.md"),
                "software": ("software.json",)}


def shard_runs(name: str) -> tuple[int, int] | None:
    """(first, last) of a shard file name (``shard_file``); None for any other name (or last < first)."""
    m = SHARD_FILE.fullmatch(name)
    if m is None or int(m.group(2)) < int(m.group(1)):
        return None
    return int(m.group(1)), int(m.group(2))


def shards_rel(cell: str, key: str) -> str:
    """The folder of a cell's shards named ``key``, under its results folder: ``cells/<cell>/<key>``."""
    return f"cells/{cell}/{key}"


def shard_rel(cell: str, key: str, first: int, last: int) -> str:
    """A shard's path under its results folder: ``cells/<cell>/<key>/runs<first>-<last>.npz``."""
    return f"{shards_rel(cell, key)}/{shard_file(first, last)}"


def parse_shard_rel(rel: str) -> tuple[str, str, int, int] | None:
    """(cell, key, first, last) of a path ``shard_rel`` spells; None for any other path."""
    parts = rel.split("/")
    if len(parts) != 6 or parts[0] != "cells" or not KEY.fullmatch(parts[4]):
        return None
    runs, cell = shard_runs(parts[5]), "/".join(parts[1:4])
    if runs is None or parse_cell(cell) is None:
        return None
    return cell, parts[4], *runs


def summary_rel(cell: str, key: str) -> str:
    """A summary's path under its results folder: ``summaries/<cell>/<key>.npz``."""
    return f"summaries/{cell}/{key}{SHARD_SUFFIX}"


def sidecar_of(path: str) -> str:
    """The sidecar of a shard's or summary's file (``….npz`` -> ``….json``)."""
    return path.removesuffix(SHARD_SUFFIX) + SIDECAR_SUFFIX


def arrays_of(path: str) -> str:
    """The file a sidecar sits beside (``….json`` -> ``….npz``)."""
    return path.removesuffix(SIDECAR_SUFFIX) + SHARD_SUFFIX


@dataclass
class Names:
    """The key of every stored result of a plan (banditrepro/workflow/names.py computes them)."""

    data: dict = field(default_factory=dict)  # dataset -> data key
    shards: dict = field(default_factory=dict)  # cell key -> its shards' key (names.shards_key)
    parts: dict = field(default_factory=dict)  # cell key -> what its shards' key covers (names.cell_parts)
    summary: dict = field(default_factory=dict)  # (dataset, horizon, algo) -> summary key
    figure: dict = field(default_factory=dict)  # (paper, figure) -> key
    leaderboard: dict = field(default_factory=dict)  # paper -> key
    claims: str = ""
    runtime: str = ""
    report: str = ""
    software: str = ""
    probes: dict = field(default_factory=dict)  # optional dataset -> the probe state the figures' names saw


def _missing(what: str, name) -> ReproError:
    return ReproError(f"no {what} {name!r} in this plan (a path stored by name needs the plan that names it)")


@dataclass(frozen=True)
class Layout:
    results_dir: str = DEFAULT_RESULTS_DIR
    data_dir: str = DEFAULT_DATA_DIR
    names: Names | None = field(default=None, compare=False, repr=False)  # None: a folder made by hand (flat)
    store: bool = False  # published paths are the store's entries (what jobs read and write)

    def __post_init__(self):
        object.__setattr__(self, "results_dir", str(self.results_dir).rstrip("/") or ".")
        object.__setattr__(self, "data_dir", str(self.data_dir).rstrip("/") or ".")

    def stored(self) -> Layout:
        """This layout with every published path replaced by its store entry."""
        return replace(self, store=True)

    def _key(self, table: str, name):
        if self.names is None:
            return None  # a folder made by hand (CLI, tests): the flat layout, no names
        try:
            found = getattr(self.names, table)
            return found[name] if isinstance(found, dict) else found or None
        except (AttributeError, KeyError):
            raise _missing(table, name) from None

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
        """A dataset's instance, named by what it derives from (names.data_key)."""
        key = self._key("data", dataset)
        return self.prepared_pattern().format(dataset=dataset, key=key) if key else f"{self.prepared}/{dataset}.json"

    def status_file(self, dataset: str) -> str:
        return f"{self.status}/{dataset}.json"

    # --- results of this config --------------------------------------------------------------------------
    @property
    def cells(self) -> str:
        return f"{self.results_dir}/cells"

    @property
    def summaries(self) -> str:
        return f"{self.results_dir}/summaries"

    @property
    def store_dir(self) -> str:
        return f"{self.results_dir}/store"

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
        return f"{self.cells}/{cell_key(dataset, horizon, algo)}"

    def shard(self, dataset: str, horizon: int, algo: str, key: str, first: int, last: int) -> str:
        """Runs first..last of a cell whose other inputs have the name ``key`` (names.shards_key)."""
        return f"{self.results_dir}/{shard_rel(cell_key(dataset, horizon, algo), key, first, last)}"

    @property
    def batches(self) -> str:
        return f"{self.results_dir}/batches"

    def batch_spec(self, batch: str) -> str:
        """Cluster mode: the shards a batch computes (written by the main process; its name is their digest)."""
        return f"{self.batches}/{batch}.json"

    def batch_done(self, batch: str) -> str:
        """What a finished batch writes last (temporary: the summaries' link to it, removed once they ran)."""
        return f"{self.batches}/{batch}.done"

    @property
    def shards_log(self) -> str:
        """One line per shard computed (path, host, pid, SLURM job): what each job did, for the fault tests."""
        return f"{self.results_dir}/logs/shards-computed.log"

    def summary(self, dataset: str, horizon: int, algo: str) -> str:
        key = self._key("summary", (dataset, int(horizon), algo))
        if key is None:
            return f"{self.summaries}/{cell_key(dataset, horizon, algo)}{SHARD_SUFFIX}"
        return f"{self.results_dir}/{summary_rel(cell_key(dataset, horizon, algo), key)}"

    # --- outputs published at fixed paths (their store entries under ``stored()``) -------------------------
    def _entry(self, pattern: str, key_table: str, name, **fields) -> str:
        """A store entry: its rule's output pattern (below) filled in with its key."""
        key = self._key(key_table, name)
        if key is None:
            raise _missing(key_table, name)
        return pattern.format(key=key, **fields)

    def figure_png(self, paper: str, figure: str) -> str:
        if self.store:
            return self._entry(self.figure_pattern("png"), "figure", (paper, figure), paper=paper, figure=figure)
        return f"{self.figures}/{paper}/{figure}.png"

    def figure_pdf(self, paper: str, figure: str) -> str:
        if self.store:
            return self._entry(self.figure_pattern("pdf"), "figure", (paper, figure), paper=paper, figure=figure)
        return f"{self.figures}/{paper}/{figure}.pdf"

    def table(self, paper: str, figure: str, suffix: str = "csv") -> str:
        if self.store:
            return self._entry(self.figure_pattern(suffix), "figure", (paper, figure), paper=paper, figure=figure)
        return f"{self.tables}/{paper}/{figure}.{suffix}"

    def figure_outputs(self, paper: str, figure: str) -> list[str]:
        """PNG, PDF and the table as CSV, Markdown and LaTeX (``FIGURE_SUFFIXES``)."""
        return [self.figure_png(paper, figure), self.figure_pdf(paper, figure),
                *(self.table(paper, figure, s) for s in FIGURE_SUFFIXES[2:])]

    @property
    def leaderboards(self) -> str:
        return f"{self.results_dir}/leaderboards"

    def leaderboard(self, paper: str, suffix: str = "csv") -> str:
        if self.store:
            return self._entry(self.leaderboard_pattern(suffix), "leaderboard", paper, paper=paper)
        return f"{self.leaderboards}/{paper}.{suffix}"

    def leaderboard_outputs(self, paper: str) -> list[str]:
        """CSV, Markdown, PNG and PDF (``LEADERBOARD_SUFFIXES``)."""
        return [self.leaderboard(paper, s) for s in LEADERBOARD_SUFFIXES]

    def _single(self, kind: str, name: str, fixed: str) -> str:
        return self._entry(self.single_pattern(kind, name), kind, None) if self.store else fixed

    @property
    def claims_csv(self) -> str:
        return self._single("claims", "claims.csv", f"{self.results_dir}/claims.csv")

    @property
    def runtime_csv(self) -> str:
        return self._single("runtime", "runtime.csv", f"{self.tables}/runtime.csv")

    @property
    def report_md(self) -> str:
        return self._single("report", "report.md", f"{self.results_dir}/report.md")

    @property
    def reproduction_md(self) -> str:
        return self._single("report", "reproduction.md", f"{self.results_dir}/reproduction.md")

    @property
    def software_json(self) -> str:
        """The run's software stack (banditrepro.workflow.software)."""
        return self._single("software", "software.json", f"{self.results_dir}/software.json")

    @property
    def published_json(self) -> str:
        """What the last publication put at the fixed paths, with the key of each (workflow/publish.py)."""
        return f"{self.results_dir}/published.json"

    @property
    def verification_json(self) -> str:
        """What ``banditrepro verify --record`` checked (banditrepro/sharing/verify.py); the report shows it."""
        return f"{self.results_dir}/verification.json"

    @property
    def received_json(self) -> str:
        """The sources ``banditrepro merge`` pooled into this folder, with each bundle's sha256; the report
        shows them."""
        return f"{self.results_dir}/received.json"

    # --- the rules' output patterns (Snakemake wildcards in braces) ------------------------------------------
    def summary_pattern(self) -> str:
        return f"{self.results_dir}/{summary_rel(cell_key('{dataset}', '{horizon}', '{algo}'), '{key}')}"

    def prepared_pattern(self) -> str:
        return f"{self.prepared}/{{dataset}}/{{key}}.json"

    def figure_pattern(self, suffix: str) -> str:
        return f"{self.store_dir}/figures/{{paper}}/{{figure}}/{{key}}/{{figure}}.{suffix}"

    def leaderboard_pattern(self, suffix: str) -> str:
        return f"{self.store_dir}/leaderboards/{{paper}}/{{key}}/{{paper}}.{suffix}"

    def single_pattern(self, kind: str, name: str) -> str:
        """claims/claims.csv, runtime/runtime.csv, report/report.md, report/reproduction.md, software/…"""
        return f"{self.store_dir}/{kind}/{{key}}/{name}"

    def under(self, root: str | Path) -> Layout:
        """The same layout with relative folders resolved against ``root`` (for callers elsewhere)."""
        def res(p: str) -> str:
            return p if Path(p).is_absolute() else str(Path(root) / p)

        return replace(self, results_dir=res(self.results_dir), data_dir=res(self.data_dir))
