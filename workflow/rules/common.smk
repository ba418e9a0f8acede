# Helpers shared by the rules. Parse time only reads the config, the catalog and the manifest.
import json
import sys
import threading
from pathlib import Path

from snakemake.utils import validate

validate(config, schema="../schemas/config.schema.yaml")

ROOT = Path(workflow.basedir)
SRC = ROOT / "src"
# Parse time and in-process jobs import the package from this checkout even if it is not installed;
# shell jobs run `python -m banditrepro` from the installed package (README, envs/banditrepro.yaml).
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

from banditrepro import ReproError  # noqa: E402
from banditrepro.datasets.catalog import load_catalog  # noqa: E402
from banditrepro.manifest import load_manifest  # noqa: E402


def _root_path(p):
    return str(p) if "://" in str(p) or Path(p).is_absolute() else str(ROOT / p)


try:
    CATALOG = load_catalog(_root_path(config["catalog"]), config["datasets"], ROOT)
    FIGURES = load_manifest(
        _root_path(config["manifest"]),
        papers=config["papers"],
        max_horizon=config["max_horizon"],
        datasets=set(CATALOG.datasets),
    )
except ReproError as exc:
    raise WorkflowError(f"configuration error: {exc}")

MIRRORS = [_root_path(m) for m in config["data_mirrors"]]
RUNS = list(range(config["runs"]))
FIGURE_BY_STEM = {f.stem: f for f in FIGURES}

RAW = "data/raw"
PREPARED = "data/prepared"
STATUS = "data/status"
CELLS = "results/cells"


wildcard_constraints:
    dataset=r"[a-z0-9][a-z0-9-]*",
    horizon=r"\d+",
    algo=r"[a-z0-9][^/]*",
    run=r"\d+",
    paper=r"[a-z0-9-]+",
    figure=r"[a-z0-9-]+",


def entry_arg(dataset):
    """A matrix-file or config-declared dataset's declaration for the prepare job (paths absolute)."""
    import shlex

    if dataset not in CATALOG.declared and CATALOG.user_file(dataset) is None:
        return ""
    return f"--entry {shlex.quote(json.dumps(CATALOG.resolved_entry(dataset)))}"


def mirror_args():
    return " ".join(f"--mirror {m}" for m in MIRRORS)


def summary_path(dataset, horizon, algo):
    return f"results/summaries/{dataset}/T{horizon}/{algo}.npz"


def cell_path(dataset, horizon, algo, run):
    return f"{CELLS}/{dataset}/T{horizon}/{algo}/run{run}.npz"


def dataset_status(dataset):
    """For optional datasets: the probe's verdict (evaluated after the checkpoint ran)."""
    path = checkpoints.probe_dataset.get(dataset=dataset).output[0]
    return path, json.loads(Path(path).read_text())["available"]


def figure_inputs(wildcards):
    fig = FIGURE_BY_STEM[f"{wildcards.paper}/{wildcards.figure}"]
    files = []
    for panel in fig.panels:
        if CATALOG.is_optional(panel.dataset):
            status, available = dataset_status(panel.dataset)
            files.append(status)
            if not available:
                continue
        files.extend(
            summary_path(panel.dataset, panel.horizon, a.id) for a in panel.algorithms
        )
        files.append(f"{PREPARED}/{panel.dataset}.json")
    return sorted(set(files))


def figure_outputs(fig):
    base = f"results/figures/{fig.paper}/{fig.id}"
    table = f"results/tables/{fig.paper}/{fig.id}"
    return [f"{base}.png", f"{base}.pdf", f"{table}.csv", f"{table}.md", f"{table}.tex"]


def all_targets():
    targets = [t for fig in FIGURES for t in figure_outputs(fig)]
    targets += ["results/claims.csv", "results/tables/runtime.csv", "results/report.md"]
    return targets


def figure_caption(wildcards):
    fig = FIGURE_BY_STEM[f"{wildcards.paper}/{wildcards.figure}"]
    algos = {a.id: a.label for p in fig.panels for a in p.algorithms}
    panels = "; ".join(f"{p.title}: {p.dataset}, T = {p.horizon:,}" for p in fig.panels)
    return (
        f"{fig.title}. {fig.caption} Configuration: {config['runs']} runs per line, base seed "
        f"{config['base_seed']}; panels: {panels}; algorithms (id → legend): "
        + ", ".join(f"{k} → {v}" for k, v in algos.items())
        + "."
    )


def run_chunks():
    """Runs grouped k at a time (config cells_per_job = k), for jobs that compute several cells."""
    k = config["cells_per_job"]
    return [RUNS[i : i + k] for i in range(0, len(RUNS), k)]


def simulate_job(wildcards, input, output, params, log):
    """Body of the in-process cell job(s) of simulate.smk: one run, or a chunk of runs."""
    from banditrepro.cell import simulate_to_file

    if "runs" in params.keys():
        jobs = zip(params.runs, output.cells, output.metas)
    else:
        jobs = [(int(wildcards.run), output.cell, output.meta)]
    lines = []
    for run, cell, meta in jobs:
        result = simulate_to_file(
            wildcards.algo,
            input[0],
            int(wildcards.horizon),
            run,
            params.base_seed,
            cell,
            meta,
        )
        lines.append(result.describe())
    Path(log[0]).write_text("\n".join(lines) + "\n")


def summarize_job(input, output, log):
    from banditrepro.aggregate import write_summary

    write_summary(list(input), output[0])
    Path(log[0]).write_text(f"{len(input)} runs summarized\n")


# Figures share matplotlib's global font and text caches: draw one at a time (cells keep the other cores).
_DRAW_LOCK = threading.Lock()


def figure_job(wildcards, output, log):
    """Body of the in-process figure job: one manifest figure, its table (CSV, Markdown, LaTeX)."""
    from banditrepro.figures import build_figure

    stem = f"{wildcards.paper}/{wildcards.figure}"
    with _DRAW_LOCK:
        build_figure(FIGURE_BY_STEM[stem], output.png, output.pdf, output.table, STATUS, PREPARED)
    Path(log[0]).write_text(f"{stem}: wrote {output.png}, {output.pdf}, {output.table}\n")


def claims_job(output, log):
    from banditrepro.claims import write_claims

    lines = write_claims(FIGURES, output[0], STATUS, PREPARED)
    Path(log[0]).write_text("\n".join(lines) + "\n")


def runtime_table_job(input, output, log):
    from banditrepro.aggregate import write_runtime_table

    write_runtime_table(list(input), output[0])
    Path(log[0]).write_text(f"{len(input)} summaries\n")


def report_job(input, output, log):
    from banditrepro.report import build_report

    build_report(FIGURES, input.claims, input.runtime, output[0])
    Path(log[0]).write_text(f"wrote {output[0]}\n")
