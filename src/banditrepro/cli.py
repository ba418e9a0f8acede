"""Command line: ``banditrepro <command>`` (also ``python -m banditrepro``).

Bad input exits with status 2 and one line on stderr naming the argument and the bad value; no
traceback, and no output file (outputs are written atomically, after every input has been checked).

Default paths (catalog, data, manifest, results) are those of a project folder: ``--project DIR``, else
the environment variable BANDITREPRO_PROJECT, else the current directory or its nearest parent that holds
config/datasets.yaml. Paths given on the command line are relative to the current directory as usual.

Here: the parser, the project's default paths, the commands that read or plan a results folder (summarize,
runtime-table, figure, claims, report, estimate, clean) and the error handling; the commands on data, cells and
algorithms are cli_data.py's, the sharing commands sharing/commands.py's. Each command imports what it runs
inside its body: numpy, matplotlib and Snakemake cost 0.1-0.8 s of import (python -X importtime), which
``--help`` and the other commands need not pay.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from banditrepro import ReproError, cli_data
from banditrepro.arguments import _HORIZON, _SEED, _integer, _one_line, _output, _Parser, _positive_float
from banditrepro.layout import DEFAULT_BASE_SEED, Layout
from banditrepro.limits import MAX_HORIZON_TEXT
from banditrepro.project import PROJECT_ENV, PROJECT_MARKER, find_project
from banditrepro.sharing import commands

DEFAULT_CATALOG = "config/datasets.yaml"
DEFAULT_PREPARED = "data/prepared"
# option dest -> default path inside the project (filled in after parsing unless the option was given)
PROJECT_DEFAULTS = {"catalog": DEFAULT_CATALOG, "raw_dir": "data/raw", "prepared_dir": DEFAULT_PREPARED,
                    "manifest": "config/figures", "status_dir": "data/status", "results_dir": "results"}
DEFAULT_MIRROR = "../shared/data"  # relative to the project, like data_mirrors of config/config.yaml
PROJECT_HELP = (f"project folder whose config/, data/ and results/ the default paths refer to (default: "
                f"${PROJECT_ENV}, else the current directory or its nearest parent holding {PROJECT_MARKER})")


def _apply_project(args) -> None:
    """Fill the path options the user did not give from the project folder."""
    project = find_project(getattr(args, "project", None))
    args.project_info = project
    for dest, rel in PROJECT_DEFAULTS.items():
        if hasattr(args, dest) and getattr(args, dest) is None:
            setattr(args, dest, project.path(rel))
    if getattr(args, "mirror", "absent") is None:
        args.mirror = [project.path(DEFAULT_MIRROR)]
    if getattr(args, "config", "absent") is None and project.root is not None:
        args.config_default = project.path("config/config.yaml")


def _workflow_plan(args):
    """The plan of a workflow run (``--configfile``/``--set`` given): its figures and names, so a results folder the
    workflow made is read under its names; None for a folder made by hand (flat paths, the manifest options)."""
    if not (getattr(args, "configfile", None) or getattr(args, "set", None)):
        return None
    if getattr(args, "_plan", None) is None:
        from banditrepro.workflow.plan import open_project

        here = os.getcwd()  # the plan is built in the project folder; the output options are relative to here
        try:
            args._plan = open_project(args.project_info, args.configfile or (), args.set or (), scan=False)
        finally:
            os.chdir(here)
    return args._plan


def _figures(args):
    """The manifest's figures, with the challengers joined as the workflow joins the config's (or the plan's)."""
    from banditrepro import challengers, papers
    from banditrepro.manifest import load_manifest

    plan = _workflow_plan(args)
    if plan is not None:
        return plan.figures

    papers.load()  # the papers' figure kinds and claim tests, as build_plan loads them before joining
    figs = load_manifest(args.manifest, papers=args.papers, max_horizon=args.max_horizon)
    return challengers.join(figs, challengers.from_ids(args.challengers), args.manifest, args.papers)


def cmd_summarize(args) -> int:
    from banditrepro.aggregate import write_summary

    write_summary(args.cells, args.out)
    return 0


def cmd_runtime_table(args) -> int:
    from banditrepro.aggregate import write_runtime_table

    write_runtime_table(args.summaries, args.out)
    return 0


def _layout(args):
    """The run's Layout: a workflow run's store (its plan's names, paths under the project), or from --results-dir
    and the data folder that holds --prepared-dir and --status-dir (a folder made by hand)."""
    plan = _workflow_plan(args)
    if plan is not None:
        return plan.store.under(args.project_info.root)
    data = Path(args.prepared_dir).parent
    layout = Layout(args.results_dir, data_dir=str(data))
    if Path(layout.prepared) != Path(args.prepared_dir) or Path(layout.status) != Path(args.status_dir):
        raise ReproError(f"--prepared-dir and --status-dir must be <data>/prepared and <data>/status, got "
                         f"{args.prepared_dir}, {args.status_dir}")
    return layout


def cmd_figure(args) -> int:
    from banditrepro.figures import build_figure

    figs = {f.stem: f for f in _figures(args)}
    if args.stem not in figs:
        raise ReproError(f"unknown figure {args.stem!r} (known: {', '.join(figs)})")
    build_figure(figs[args.stem], _layout(args), args.png, args.pdf, args.table)
    print(f"{args.stem}: wrote {args.png}, {args.pdf}, {args.table}")
    return 0


def cmd_claims(args) -> int:
    from banditrepro.claims import write_claims

    print("\n".join(write_claims(_figures(args), _layout(args), args.out)))
    return 0


def cmd_report(args) -> int:
    from banditrepro.report import build_report

    plan = _workflow_plan(args)
    layout = plan.store.under(args.project_info.root) if plan is not None else Layout(args.results_dir)
    build_report(_figures(args), layout, args.claims, args.runtime, args.out)
    return 0


def cmd_planned(args) -> int:  # estimate, clean: what the plan the workflow builds for a config says
    from banditrepro.workflow import clean, estimate

    opts = (args.project_info, args.configfile or (), args.config or (), args.profile)
    print(clean.run(*opts, remove=args.remove, shards=args.shards) if args.command == "clean" else estimate.run(*opts))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="banditrepro", description=__doc__.splitlines()[0],
                epilog=f"Every command takes --project DIR: {PROJECT_HELP}.")
    sub = p.add_subparsers(dest="command", required=True)

    def data_opts(sp, mirrors=True):
        sp.add_argument("--catalog", help=f"dataset catalog (YAML; default <project>/{DEFAULT_CATALOG})")
        sp.add_argument("--raw-dir", help="raw files (default <project>/data/raw)")
        sp.add_argument("--prepared-dir", help=f"prepared datasets (default <project>/{DEFAULT_PREPARED})")
        if mirrors:
            sp.add_argument("--mirror", action="append", default=None,
                            help=f"mirror folder or URL, tried in order (default <project>/{DEFAULT_MIRROR})")
            sp.add_argument("--retries", type=_integer(1, 100), default=3, help="attempts per URL (1-100)")
            sp.add_argument("--timeout", type=_positive_float(86400), default=60.0, help="seconds per attempt")

    s = sub.add_parser("simulate", help="run one cell (algorithm, instance, horizon, seed) into an .npz")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="algorithm parameter (repeatable)")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="prepared dataset name")
    src.add_argument("--matrix", help="K×K preference matrix file: whitespace-separated text or .npy")
    src.add_argument("--means", help="comma-separated Bernoulli means")
    s.add_argument("--horizon", type=_HORIZON, required=True,
                   help=f"time steps T, 1 <= T <= {MAX_HORIZON_TEXT} (100x the papers' largest, 10^7)")
    s.add_argument("--seed", type=_SEED, default=0, help="run index (the cell's seed key), 0 <= seed < 2^63")
    s.add_argument("--base-seed", type=_SEED, default=DEFAULT_BASE_SEED, help="root seed, 0 <= base seed < 2^63")
    s.add_argument("--out", type=_output(".npz"), required=True,
                   help="the cell file (.npz; wall time and versions go to the .json beside it)")
    s.add_argument("--prepared-dir", help=f"prepared datasets (default <project>/{DEFAULT_PREPARED})")
    s.add_argument("--catalog", help=f"dataset catalog, to tell unknown datasets (default <project>/{DEFAULT_CATALOG})")
    s.set_defaults(func=cli_data.cmd_simulate)

    def config_opt(sp):
        sp.add_argument("--config", help="workflow config adding datasets: (default <project>/config/config.yaml)")

    s = sub.add_parser("datasets", help="list known datasets and whether each is prepared / needs the network")
    data_opts(s)
    config_opt(s)
    s.set_defaults(func=cli_data.cmd_datasets)

    s = sub.add_parser("algorithms", help="list the algorithms, built in and installed plugins")
    s.set_defaults(func=cli_data.cmd_algorithms)

    s = sub.add_parser("fetch", help="obtain one raw file (mirrors first), verify its checksum")
    s.add_argument("source", help="relative path of the raw file, e.g. mslr/MSLR-Nabigational.txt")
    s.add_argument("--dest", type=_output(), help="where to put it (default: <raw-dir>/<source>)")
    data_opts(s)
    s.set_defaults(func=cli_data.cmd_fetch)

    s = sub.add_parser("probe", help="try to obtain an optional dataset's raw files; write a status JSON")
    s.add_argument("dataset")
    s.add_argument("--out", type=_output(".json"), required=True)
    data_opts(s)
    s.set_defaults(func=cli_data.cmd_probe)

    s = sub.add_parser("prepare", help="derive a dataset from its raw files into data/prepared/<name>.json")
    s.add_argument("dataset")
    s.add_argument("--out", type=_output(".json"), help="the prepared file (default: <prepared-dir>/<dataset>.json)")
    s.add_argument("--input", action="append", metavar="DATASET=FILE",
                   help="the prepared file of a dataset this one derives from (default <prepared-dir>/<dataset>.json)")
    s.add_argument("--entry", help="the dataset's declaration as JSON (instead of the catalog's or config's)")
    data_opts(s, mirrors=False)
    config_opt(s)
    s.set_defaults(func=cli_data.cmd_prepare)
    def manifest_opts(sp):
        sp.add_argument("--manifest", help="figure manifest folder (default <project>/config/figures)")
        sp.add_argument("--papers", nargs="+", default=None)
        sp.add_argument("--max-horizon", type=_HORIZON, default=None, help="cap every horizon of the manifest")
        sp.add_argument("--challengers", nargs="+", metavar="ID", help="challengers (NAME or NAME+key=value), as "
                        "the config key challengers: joined to the figures as the workflow joins them")
        sp.add_argument("--status-dir", help="dataset status files (default <project>/data/status)")
        sp.add_argument("--results-dir",
                        help="the run's results folder: summaries/ and tables/ are read there (config results_dir; "
                             "default <project>/results)")
        sp.add_argument("--configfile", action="extend", nargs="+", help="read a workflow run's results under the "
                        "names its config gives them (as snakemake --configfile; the manifest options then follow "
                        "the config)")
        sp.add_argument("--set", nargs="*", metavar="KEY=VALUE", help="as snakemake --config, with --configfile")

    s = sub.add_parser("summarize", help="runs of one cell -> summary (mean, se, 95 %% CI)")
    s.add_argument("cells", nargs="+")
    s.add_argument("--out", type=_output(".npz"), required=True)
    s.set_defaults(func=cmd_summarize)

    s = sub.add_parser("runtime-table", help="kernel wall time per cell from summaries")
    s.add_argument("summaries", nargs="+")
    s.add_argument("--out", type=_output(".csv"), required=True)
    s.set_defaults(func=cmd_runtime_table)

    s = sub.add_parser("figure", help="draw one manifest figure (PAPER/FIGURE) and write its table")
    s.add_argument("stem")
    manifest_opts(s)
    s.add_argument("--prepared-dir", help=f"prepared datasets (default <project>/{DEFAULT_PREPARED})")
    s.add_argument("--png", type=_output(".png"), required=True)
    s.add_argument("--pdf", type=_output(".pdf"), required=True)
    s.add_argument("--table", type=_output(".csv"), required=True, help="the .csv (.md and .tex beside it)")
    s.set_defaults(func=cmd_figure)

    s = sub.add_parser("claims", help="check every claim of the manifest against the figure tables")
    manifest_opts(s)
    s.add_argument("--prepared-dir", help=f"prepared datasets (default <project>/{DEFAULT_PREPARED})")
    s.add_argument("--out", type=_output(".csv"), required=True)
    s.set_defaults(func=cmd_claims)

    for name, text in (("estimate", "batches (SLURM jobs), lengths, CPU-hours, files and bytes of a cluster run"),
                       ("clean", "list (--remove: delete) stored results the config does not name")):
        s = sub.add_parser(name, help=text)
        s.add_argument("--configfile", action="extend", nargs="+", help="as snakemake --configfile")
        s.add_argument("--config", nargs="*", metavar="KEY=VALUE", help="as snakemake --config")
        s.add_argument("--profile", metavar="DIR", help="workflow profile whose config: entries apply")
        s.set_defaults(func=cmd_planned)
    s.add_argument("--remove", action="store_true", help="delete what is listed (nothing else)")
    s.add_argument("--shards", nargs="?", const="", metavar="ALGO", help="the plan's shards (all/ALGO's): recompute")

    s = sub.add_parser("report", help="Markdown report of figures, tables and claims")
    manifest_opts(s)
    s.add_argument("--claims", required=True)
    s.add_argument("--runtime", required=True)
    s.add_argument("--out", type=_output(".md"), required=True)
    s.set_defaults(func=cmd_report)
    commands.add(sub)  # verify, bundle, merge, compare
    for sp in sub.choices.values():
        sp.add_argument("--project", metavar="DIR", help=PROJECT_HELP)
    return p


def main(argv: list[str] | None = None) -> int:
    """Every error a user can cause ends here, as one line on stderr and exit status 2."""
    args = build_parser().parse_args(argv)
    try:
        _apply_project(args)
        return args.func(args)
    except ReproError as exc:
        message = str(exc)
    except OSError as exc:  # a path the user gave: missing, a folder, unreadable, disk full …
        where = f": {exc.filename}" if exc.filename else ""
        message = f"{exc.strerror or exc}{where}"
    except MemoryError:
        message = "out of memory (is the instance or the horizon too large?)"
    except KeyboardInterrupt:
        print("banditrepro: interrupted; no output written for the unfinished step", file=sys.stderr)
        return 130
    print(f"banditrepro: error: {_one_line(message)}", file=sys.stderr)
    return 2
