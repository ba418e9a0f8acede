# Helpers shared by the rules. Parse time only reads the config, the catalog and the manifest.
#
# Paths: every output of a config lives under its `results_dir` (default results/), cells under
# <results_dir>/cells/seed<base_seed>/, logs under logs/ (logs/<name>/ for results/<name>), so two configs
# never write the same file. No params or inputs hold the checkout's absolute location: a copied or moved
# project folder is up to date where it lands. Figure, claims and cell jobs carry digests of exactly the
# manifest entries and package sources they draw from (params), so an edit reruns just what it affects.
import functools
import hashlib
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(workflow.basedir)
SRC = ROOT / "src"
# Parse time and in-process jobs import the package from this checkout even if it is not installed;
# shell jobs run `python -m banditrepro` from the installed package (README, envs/banditrepro.yaml).
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

from banditrepro import ReproError  # noqa: E402


def _fail(message):
    """A configuration error: one line on stderr, no traceback, non-zero exit (also for `snakemake -n`)."""
    sys.exit(f"banditrepro: {message}")


def _apply_defaults(schema, doc):
    for key, sub in schema.get("properties", {}).items():
        if key not in doc and "default" in sub:
            doc[key] = json.loads(json.dumps(sub["default"]))
        if isinstance(doc.get(key), dict) and sub.get("type") == "object":
            _apply_defaults(sub, doc[key])


def check_config(cfg, schema_path):
    """Validate the config against its JSON schema and fill in defaults; the first error as one line
    naming the key and the bad value (snakemake.utils.validate prints the whole schema around it).
    """
    import jsonschema
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(cfg))
    if errors:
        err = min(
            errors, key=lambda e: (len(e.absolute_path), str(list(e.absolute_path)))
        )
        where = ".".join(str(p) for p in err.absolute_path)
        if err.validator == "additionalProperties":
            known = sorted(err.schema.get("properties", {}))
            extra = sorted(set(err.instance) - set(known))
            prefix = f"{where}." if where else ""
            _fail(
                f"config error: unknown key {prefix}{extra[0]} (known: {', '.join(known)})"
            )
        # a schema `title` says in words what a pattern or a combination of types requires
        reason = err.schema.get("title") or err.message.replace("\n", " ")
        if err.validator == "oneOf":
            reason = "expected " + " or ".join(
                (
                    f"an integer >= {s['minimum']}"
                    if s.get("type") == "integer"
                    else repr(s.get("const"))
                )
                for s in err.schema["oneOf"]
            )
        _fail(f"config error: {where} = {json.dumps(err.instance)}: {reason}")
    _apply_defaults(schema, cfg)


check_config(config, ROOT / "workflow/schemas/config.schema.yaml")

from banditrepro import claims as claims_module  # noqa: E402
from banditrepro import papers  # noqa: E402
from banditrepro import jobsize  # noqa: E402
from banditrepro.datasets.catalog import load_catalog  # noqa: E402
from banditrepro.layout import Layout  # noqa: E402
from banditrepro.manifest import cell_runs, load_manifest  # noqa: E402


def _root_path(p):
    return str(p) if "://" in str(p) or Path(p).is_absolute() else str(ROOT / p)


def rel(p):
    """A project path as shell rules see it: relative to the working directory (where Snakemake runs,
    normally the project root), so params never carry the checkout's absolute location. URLs and
    absolute paths the user configured stay as they are."""
    if "://" in str(p) or Path(p).is_absolute():
        return str(p)
    return os.path.relpath(ROOT / p)


try:
    CATALOG = load_catalog(_root_path(config["catalog"]), config["datasets"], ROOT)
    FIGURES = load_manifest(
        _root_path(config["manifest"]),
        papers=config["papers"],
        max_horizon=config["max_horizon"],
        datasets=set(CATALOG.datasets),
    )
    # every claim's test kind and parameters, now rather than when the claims job runs
    papers.load()  # the papers' figure kinds and claim tests
    claims_module.validate(FIGURES)
except ReproError as exc:
    _fail(f"configuration error: {exc}")

MIRRORS = [rel(m) for m in config["data_mirrors"]]
FIGURE_BY_STEM = {f.stem: f for f in FIGURES}

RAW = "data/raw"
PREPARED = "data/prepared"
STATUS = "data/status"
RESULTS = config["results_dir"].rstrip("/")
CELLS = f"{RESULTS}/cells/seed{config['base_seed']}"
SUMMARIES = f"{RESULTS}/summaries"
TABLES = f"{RESULTS}/tables"
LOGS = "logs" if RESULTS == "results" else f"logs/{RESULTS.removeprefix('results/')}"
LAYOUT = Layout.from_config(config)  # what figure, claims and report jobs are handed


wildcard_constraints:
    dataset=r"[a-z0-9][a-z0-9-]*",
    horizon=r"\d+",
    algo=r"[a-z0-9][^/]*",
    run=r"\d+",
    paper=r"[a-z0-9-]+",
    figure=r"[a-z0-9-]+",


# --- runs per cell and their grouping into jobs -------------------------------------------------------


def cell_key(dataset, horizon, algo):
    return f"{dataset}/T{horizon}/{algo}"


def split_key(key):
    dataset, horizon, algo = key.split("/")
    return dataset, int(horizon[1:]), algo


# cells of optional datasets (network only) are still planned: their figures ask for them only when the
# probe says the dataset is available
CELL_RUNS = {
    cell_key(*c): n
    for c, n in cell_runs(FIGURES, config["runs"], config["max_runs"]).items()
}


def runs_of(dataset, horizon, algo):
    return CELL_RUNS[cell_key(dataset, horizon, algo)]


def _runs_per_job(key):
    k = config["cells_per_job"]
    n = CELL_RUNS[key]
    if k == "auto":
        _, horizon, algo = split_key(key)
        return jobsize.runs_per_job(algo, horizon, n, config["job_seconds"])
    return min(int(k), n)


# run range -> cells computed in jobs of exactly that range; cells with one run per job use `simulate`
CHUNKED, SINGLE = {}, []
for _key in CELL_RUNS:
    _k = _runs_per_job(_key)
    if _k == 1:
        SINGLE.append(_key)
        continue
    for _chunk in jobsize.chunks(CELL_RUNS[_key], _k):
        CHUNKED.setdefault(_chunk, []).append(_key)


def one_of(keys):
    """Wildcard constraint matching exactly these cell keys (keeps the chunk rules unambiguous)."""
    return (
        "(?:" + "|".join(re.escape(k) for k in sorted(keys)) + ")" if keys else "(?!)"
    )


# --- digests: what each job draws from, so edits rerun exactly the jobs they affect --------------------


def digest(obj):
    return hashlib.sha256(
        json.dumps(obj, sort_keys=True, default=str).encode()
    ).hexdigest()[:16]


def source_digest(*names):
    """Hash of package sources (paths relative to src/banditrepro), e.g. the kernel module of a cell."""
    h = hashlib.sha256()
    for name in sorted(set(names)):
        path = SRC / "banditrepro" / name
        h.update(name.encode())
        h.update(path.read_bytes() if path.exists() else b"")
    return h.hexdigest()[:16]


def file_digest(path):
    """Hash of a project file's bytes (relative to the project root), for params."""
    p = Path(_root_path(path))
    return hashlib.sha256(p.read_bytes()).hexdigest()[:16] if p.exists() else "absent"


def _module_file(obj):
    mod = sys.modules.get(getattr(obj, "__module__", ""), None)
    path = Path(getattr(mod, "__file__", "") or "")
    try:
        return path.relative_to(SRC / "banditrepro").as_posix()
    except (
        ValueError
    ):  # defined outside this package (a plugin): the caller hashes its file's bytes
        return None


# what a cell's bytes depend on besides its own kernel module
CELL_CORE = [
    "cell.py",
    "recorder.py",
    "regret.py",
    "grid.py",
    "seeds.py",
    "instances.py",
    "algorithms/base.py",
    "algorithms/ties.py",
    "algorithms/rng.py",
]
_cell_code = {}


def cell_code(algo):
    """Digest of the sources one cell runs: its algorithm's module plus the shared cell machinery."""
    name = algo.split("+")[0]
    if name not in _cell_code:
        from banditrepro import algorithms as registry

        run = registry.get(name).run
        own = _module_file(run)
        extra = []
        if own is None:  # a plugin's kernel: hash its file's bytes directly
            f = getattr(sys.modules.get(run.__module__), "__file__", None)
            extra = [hashlib.sha256(Path(f).read_bytes()).hexdigest()[:16]] if f else []
        _cell_code[name] = digest(
            [source_digest(*CELL_CORE, *([own] if own else [])), extra]
        )
    return _cell_code[name]


SUMMARY_CODE = source_digest("aggregate.py")
def _package_files(*folders):
    """Every module under these package folders (relative to src/banditrepro)."""
    return [
        p.relative_to(SRC / "banditrepro").as_posix()
        for f in folders
        for p in sorted((SRC / "banditrepro" / f).rglob("*.py"))
    ]


FIGURE_CORE = [
    *_package_files("figures"),
    "plotting.py",
    "aggregate.py",
    "layout.py",
    "verdicts.py",
    "papers/dp_ts_ucb/privacy.py",
]
CLAIMS_CODE = source_digest(
    "aggregate.py",
    "layout.py",
    "verdicts.py",
    *_package_files("figures", "claims", "papers"),
)


def _figure_spec(fig):
    """The manifest entry a figure draws from: everything but its claims (claims have their own job)."""
    from dataclasses import asdict

    d = asdict(fig)
    d.pop("claims")
    return d


def _figure_code(fig):
    from banditrepro.figures import drawer

    own = _module_file(drawer(fig.kind))
    return source_digest(*FIGURE_CORE, *([own] if own else []))


FIGURE_DIGEST = {f.stem: digest([_figure_spec(f), _figure_code(f)]) for f in FIGURES}
CLAIMS_DIGEST = digest(
    [[f.stem, list(f.claims)] for f in FIGURES if f.claims] + [CLAIMS_CODE]
)


def dataset_spec(dataset):
    """The catalog entry of a dataset and of its raw sources (what the preparation derives from)."""
    return digest(
        [CATALOG.dataset(dataset)]
        + [CATALOG.source(s) for s in CATALOG.raw_inputs(dataset)]
    )


# --- datasets declared in the config ---------------------------------------------------------------


def declared_file(dataset):
    """A matrix-file dataset's file as jobs see it (relative to the working directory, so a moved project
    stays up to date; a path the user gave as absolute stays absolute), or None."""
    path = CATALOG.dataset(dataset).get("path")
    return rel(path) if path else None


def entry_arg(dataset):
    """A matrix-file or config-declared dataset's declaration for the prepare job."""
    import shlex

    if dataset not in CATALOG.declared and CATALOG.user_file(dataset) is None:
        return ""
    entry = dict(CATALOG.dataset(dataset))
    if entry.get("path"):
        entry["path"] = declared_file(dataset)
    return f"--entry {shlex.quote(json.dumps(entry))}"


# --- paths ---------------------------------------------------------------------------------------------


def mirror_args():
    return " ".join(f"--mirror {m}" for m in MIRRORS)


def summary_path(dataset, horizon, algo):
    return f"{SUMMARIES}/{dataset}/T{horizon}/{algo}.npz"


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
    base = f"{RESULTS}/figures/{fig.paper}/{fig.id}"
    table = f"{TABLES}/{fig.paper}/{fig.id}"
    return [f"{base}.png", f"{base}.pdf", f"{table}.csv", f"{table}.md", f"{table}.tex"]


def all_targets():
    targets = [t for fig in FIGURES for t in figure_outputs(fig)]
    targets += [
        f"{RESULTS}/claims.csv",
        f"{TABLES}/runtime.csv",
        f"{RESULTS}/report.md",
    ]
    return targets


def figure_caption(wildcards):
    fig = FIGURE_BY_STEM[f"{wildcards.paper}/{wildcards.figure}"]
    algos = {a.id: a.label for p in fig.panels for a in p.algorithms}
    panels = "; ".join(f"{p.title}: {p.dataset}, T = {p.horizon:,}" for p in fig.panels)
    runs = sorted(
        {runs_of(p.dataset, p.horizon, a.id) for p in fig.panels for a in p.algorithms}
    )
    runs_text = (
        f"{runs[0]}"
        if len(runs) == 1
        else f"{runs[0]}–{runs[-1]}" if runs else f"{config['runs']}"
    )
    return (
        f"{fig.title}. {fig.caption} Configuration: {runs_text} runs per line, base seed "
        f"{config['base_seed']}; panels: {panels}; algorithms (id → legend): "
        + ", ".join(f"{k} → {v}" for k, v in algos.items())
        + "."
    )


# --- bodies of the in-process jobs ---------------------------------------------------------------------


def _logged(body):
    """A job body that returns its log text and takes ``log`` as its last argument: the log gets that text,
    then the CPU seconds the body took on its thread (what the job cost besides Snakemake's own
    bookkeeping; benchmarks/bench_pipeline.py sums them)."""

    @functools.wraps(body)
    def job(*args):
        cpu0 = time.thread_time()
        text = body(*args)
        Path(args[-1][0]).write_text(
            f"{text.rstrip()}\nbody CPU seconds: {time.thread_time() - cpu0:.4f}\n"
        )

    return job


@_logged
def simulate_job(wildcards, input, output, params, log):
    """Body of the in-process cell jobs of simulate.smk: one run, or a range of runs, of one cell."""
    from banditrepro.cell import simulate_to_file

    dataset, horizon, algo = split_key(wildcards.cell)
    if "runs" in params.keys():
        jobs = zip(params.runs, output.cells)
    else:
        jobs = [(int(wildcards.run), output.cell)]
    lines = []
    for run, cell in jobs:
        result = simulate_to_file(algo, input[0], horizon, run, params.base_seed, cell)
        lines.append(result.describe())
    return "\n".join(lines) + "\n"


@_logged
def summarize_job(input, output, log):
    from banditrepro.aggregate import write_summary

    write_summary(list(input), output[0])
    return f"{len(input)} runs summarized\n"


# Figures share matplotlib's global font and text caches: draw one at a time (cells keep the other cores).
_DRAW_LOCK = threading.Lock()


@_logged
def figure_job(wildcards, output, log):
    """Body of the in-process figure job: one manifest figure, its table (CSV, Markdown, LaTeX)."""
    from banditrepro.figures import build_figure

    stem = f"{wildcards.paper}/{wildcards.figure}"
    with _DRAW_LOCK:
        build_figure(FIGURE_BY_STEM[stem], LAYOUT, output.png, output.pdf, output.table)
    return f"{stem}: wrote {output.png}, {output.pdf}, {output.table}\n"


@_logged
def claims_job(output, log):
    from banditrepro.claims import write_claims

    lines = write_claims(FIGURES, LAYOUT, output[0])
    return "\n".join(lines) + "\n"


@_logged
def runtime_table_job(input, output, log):
    from banditrepro.aggregate import write_runtime_table

    write_runtime_table(list(input), output[0])
    return f"{len(input)} summaries\n"


@_logged
def report_job(input, output, log):
    from banditrepro.report import build_report

    build_report(FIGURES, LAYOUT, input.claims, input.runtime, output[0])
    return f"wrote {output[0]}\n"


include: "progress.smk"
include: "scheduling.smk"
