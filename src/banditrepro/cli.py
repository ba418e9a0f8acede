"""Command line: ``banditrepro <command>`` (also ``python -m banditrepro``).

Bad input exits with status 2 and one line on stderr naming the problem; no traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from banditrepro import ReproError

DEFAULT_CATALOG = "config/datasets.yaml"
DEFAULT_PREPARED = "data/prepared"


def _params(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ReproError(f"--param expects key=value, got {pair!r}")
        out[key] = value
    return out


def _instance(args):
    from banditrepro.instances import BernoulliArms, load_matrix_text

    if args.matrix:
        return load_matrix_text(args.matrix)
    if args.means:
        try:
            means = [float(x) for x in args.means.split(",")]
        except ValueError:
            raise ReproError(f"--means expects comma-separated numbers, got {args.means!r}") from None
        return BernoulliArms(means, name="means")
    from banditrepro.datasets.catalog import load_prepared

    path = Path(args.prepared_dir) / f"{args.dataset}.json"
    if not path.exists():
        raise ReproError(f"dataset {args.dataset!r} is not prepared ({path} missing); "
                         f"run: snakemake {path}  or  banditrepro prepare {args.dataset}")
    return load_prepared(path)


def cmd_simulate(args) -> int:
    from banditrepro.algorithms import get
    from banditrepro.cell import run_cell, write_cell

    get(args.algorithm)  # unknown name fails before any data is read
    if args.horizon <= 0:
        raise ReproError(f"--horizon must be a positive integer, got {args.horizon}")
    instance = _instance(args)
    result = run_cell(args.algorithm, _params(args.param), instance, args.horizon, args.seed, args.base_seed)
    write_cell(result, args.out)
    finals = ", ".join(f"{k}={v[-1]:.6g}" for k, v in result.curves.items())
    print(f"{result.algorithm_id} on {instance.name}, T={args.horizon}, run {args.seed}: {finals} "
          f"({result.wall_seconds:.3f} s)")
    return 0


def cmd_datasets(args) -> int:
    from banditrepro.datasets.catalog import load_catalog

    cat = load_catalog(args.catalog)
    mirrors = [m for m in args.mirror if m.startswith(("http", "file:")) or Path(m).is_dir()]
    print(f"{'dataset':16} {'prepared':9} {'raw data':30} description")
    for name, entry in cat.datasets.items():
        prepared = (Path(args.prepared_dir) / f"{name}.json").exists()
        status = []
        for rel in cat.raw_inputs(name):
            if (Path(args.raw_dir) / rel).exists():
                status.append("downloaded")
            elif any(Path(m, rel).is_file() for m in mirrors if not m.startswith(("http", "file:"))):
                status.append("in mirror")
            else:
                status.append("needs network")
        raw = ", ".join(status) or ("derived from " + entry["fallback"] if "fallback" in entry else "none needed")
        print(f"{name:16} {'yes' if prepared else 'no':9} {raw:30} {entry.get('description', '')}")
    return 0


def cmd_fetch(args) -> int:
    from banditrepro.datasets.catalog import load_catalog

    cat = load_catalog(args.catalog)
    where = cat.fetch(args.source, args.raw_dir, args.mirror, retries=args.retries, timeout=args.timeout)
    print(f"{args.source}: verified, from {where}")
    return 0


def cmd_probe(args) -> int:
    """Try to obtain every raw file of an optional dataset; record the outcome instead of failing."""
    from banditrepro.atomic import write_json
    from banditrepro.datasets.catalog import load_catalog

    cat = load_catalog(args.catalog)
    status = {"dataset": args.dataset, "available": True, "reason": ""}
    for rel in cat.raw_inputs(args.dataset):
        if (Path(args.raw_dir) / rel).exists():
            continue
        try:
            cat.fetch(rel, args.raw_dir, args.mirror, retries=args.retries, timeout=args.timeout)
        except ReproError as exc:
            status.update(available=False, reason=f"requires network access: {exc}")
            break
    write_json(args.out, status)
    print(f"{args.dataset}: {'available' if status['available'] else status['reason']}")
    return 0


def cmd_prepare(args) -> int:
    from banditrepro.datasets.catalog import load_catalog

    cat = load_catalog(args.catalog)
    rec = cat.prepare(args.dataset, args.raw_dir, args.prepared_dir)
    cw = rec.get("condorcet_label")
    print(f"{args.dataset}: prepared" + (f", Condorcet winner {cw}" if cw else ""))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="banditrepro", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def data_opts(sp, mirrors=True):
        sp.add_argument("--catalog", default=DEFAULT_CATALOG, help="dataset catalog (YAML)")
        sp.add_argument("--raw-dir", default="data/raw")
        sp.add_argument("--prepared-dir", default=DEFAULT_PREPARED)
        if mirrors:
            sp.add_argument("--mirror", action="append", default=None,
                            help="mirror folder or URL, tried in order (default ../shared/data)")
            sp.add_argument("--retries", type=int, default=3)
            sp.add_argument("--timeout", type=float, default=60.0)

    s = sub.add_parser("simulate", help="run one cell (algorithm, instance, horizon, seed) into an .npz")
    s.add_argument("--algorithm", required=True)
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="algorithm parameter (repeatable)")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help="prepared dataset name")
    src.add_argument("--matrix", help="whitespace-separated K×K preference matrix file")
    src.add_argument("--means", help="comma-separated Bernoulli means")
    s.add_argument("--horizon", type=int, required=True)
    s.add_argument("--seed", type=int, default=0, help="run index (the cell's seed key)")
    s.add_argument("--base-seed", type=int, default=20240601)
    s.add_argument("--out", required=True)
    s.add_argument("--prepared-dir", default=DEFAULT_PREPARED)
    s.set_defaults(func=cmd_simulate)

    s = sub.add_parser("datasets", help="list known datasets and whether each is prepared / needs the network")
    data_opts(s)
    s.set_defaults(func=cmd_datasets)

    s = sub.add_parser("fetch", help="obtain one raw file (mirrors first), verify its checksum")
    s.add_argument("source", help="relative path of the raw file, e.g. mslr/MSLR-Nabigational.txt")
    data_opts(s)
    s.set_defaults(func=cmd_fetch)

    s = sub.add_parser("probe", help="try to obtain an optional dataset's raw files; write a status JSON")
    s.add_argument("dataset")
    s.add_argument("--out", required=True)
    data_opts(s)
    s.set_defaults(func=cmd_probe)

    s = sub.add_parser("prepare", help="derive a dataset from its raw files into data/prepared/<name>.json")
    s.add_argument("dataset")
    data_opts(s, mirrors=False)
    s.set_defaults(func=cmd_prepare)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "mirror", "absent") is None:
        args.mirror = ["../shared/data"]
    try:
        return args.func(args)
    except ReproError as exc:
        print(f"banditrepro: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, PermissionError) as exc:
        print(f"banditrepro: error: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 2
