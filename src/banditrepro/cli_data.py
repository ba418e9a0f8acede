"""The commands on what a run draws on (``banditrepro`` simulate, datasets, fetch, probe, prepare, algorithms):
one cell, the datasets (raw files, prepared instances, the config's declarations) and the algorithms. Their
parser and the error handling are cli.py's.

Each command imports what it runs inside its body: numpy, the catalog and the kernels cost 0.1-0.3 s of import
each (python -X importtime), which ``--help`` and the other commands need not pay.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from banditrepro import ReproError

_DATASET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a file stem, never a path


def _need_catalog(args) -> None:
    if not Path(args.catalog).is_file():
        raise ReproError(f"dataset catalog not found: {args.catalog} ({args.project_info.hint()})")


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

    try:
        if args.matrix is not None and Path(args.matrix).suffix == ".npy":
            from banditrepro.datasets.derive import read_matrix_file
            from banditrepro.instances import PreferenceMatrix

            return PreferenceMatrix(read_matrix_file(Path(args.matrix), args.matrix), name=Path(args.matrix).stem)
        if args.matrix is not None:
            return load_matrix_text(args.matrix)
        if args.means is not None:
            try:
                means = [float(x) for x in args.means.split(",")]
            except ValueError:
                raise ReproError(f"expects comma-separated numbers, got {args.means!r}") from None
            return BernoulliArms(means, name="means")
    except ReproError as exc:
        raise ReproError(f"--{'matrix' if args.matrix is not None else 'means'}: {exc}") from None
    return _prepared_dataset(args.dataset, args.prepared_dir, args.catalog, args.project_info.hint())


def _prepared_dataset(name: str, prepared_dir: str, catalog: str, hint: str = ""):
    """The prepared instance ``name``; "unknown dataset" if the catalog does not declare it."""
    from banditrepro.datasets.catalog import load_catalog, load_prepared

    known = load_catalog(catalog).datasets if Path(catalog).is_file() else None
    path = Path(prepared_dir) / f"{name}.json"
    if not _DATASET_NAME.fullmatch(name) or (known is not None and name not in known and not path.is_file()):
        listed = f" (known: {', '.join(known)})" if known else ""
        raise ReproError(f"--dataset: unknown dataset {name!r}{listed}")
    if not path.is_file() and known is None:
        raise ReproError(f"--dataset: unknown dataset {name!r}: {path} does not exist and there is no catalog "
                         f"at {catalog} to prepare it from (--catalog)" + (f"; {hint}" if hint else ""))
    if not path.is_file():
        raise ReproError(f"--dataset: dataset {name!r} is not prepared ({path} missing); "
                         f"run: snakemake {path}  or  banditrepro prepare {name}")
    return load_prepared(path)


def cmd_simulate(args) -> int:
    from banditrepro.algorithms import parse_algorithm_id
    from banditrepro.cell import run_cell, write_cell

    # NAME or a canonical id NAME+key=value+…; unknown names and keys fail before any data is read
    name, params = parse_algorithm_id(args.algorithm)
    params.update(_params(args.param))
    sidecar = Path(args.out).with_suffix(".json")
    if sidecar.is_dir():
        raise ReproError(f"--out: the cell's sidecar {str(sidecar)!r} is an existing folder")
    instance = _instance(args)
    result = run_cell(name, params, instance, args.horizon, args.seed, args.base_seed)
    write_cell(result, args.out, sidecar)
    print(result.describe())
    return 0


def _catalog(args):
    """The catalog plus the datasets declared under ``datasets:`` of the workflow config (if it exists)
    and, for one dataset, a declaration passed as JSON (``--entry``, what the workflow's prepare job gets)."""
    from banditrepro.datasets.catalog import load_catalog
    from banditrepro.workflow.config import declared_datasets

    _need_catalog(args)
    if getattr(args, "entry", None):
        try:
            return load_catalog(args.catalog, {args.dataset: json.loads(args.entry)}, replace=True)
        except json.JSONDecodeError as exc:
            raise ReproError(f"--entry is not JSON: {exc}") from None
    declared = {}
    config = Path(args.config) if args.config else Path(getattr(args, "config_default", "config/config.yaml"))
    if args.config and not config.is_file():
        raise ReproError(f"config file not found: {config}")
    if config.is_file():
        declared = declared_datasets(config, args.project_info.root)
    return load_catalog(args.catalog, declared)


def _table(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns as wide as their widest cell (the last column unpadded)."""
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header) - 1)]
    return "\n".join(" ".join([*(f"{str(c):{w}}" for c, w in zip(r, widths)), str(r[-1])]).rstrip()
                     for r in [header, *rows])


def cmd_datasets(args) -> int:
    cat = _catalog(args)
    mirrors = [m for m in args.mirror if m.startswith(("http", "file:")) or Path(m).is_dir()]
    rows = []
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
        user_file = cat.user_file(name)
        if user_file:
            status.append(("file " if user_file.is_file() else "missing file ") + str(entry["path"]))
        raw = ", ".join(status) or ("derived from " + entry["fallback"] if "fallback" in entry else "none needed")
        if name in cat.declared:
            raw += " (config)"
        rows.append([name, "yes" if prepared else "no", raw, entry.get("description", "")])
    print(_table(["dataset", "prepared", "raw data", "description"], rows))
    return 0


def cmd_fetch(args) -> int:
    from banditrepro.datasets.catalog import load_catalog

    _need_catalog(args)
    cat = load_catalog(args.catalog)
    where = cat.fetch(args.source, args.raw_dir, args.mirror, retries=args.retries, timeout=args.timeout,
                      dest=args.dest)
    print(f"{args.source}: verified, from {where}")
    return 0


def cmd_probe(args) -> int:
    """Try to obtain every raw file of an optional dataset; record the outcome instead of failing."""
    from banditrepro.atomic import write_json
    from banditrepro.datasets.catalog import load_catalog

    _need_catalog(args)
    cat = load_catalog(args.catalog)
    status = {"dataset": args.dataset, "available": True, "reason": ""}
    for rel in cat.raw_inputs(args.dataset):
        if (Path(args.raw_dir) / rel).exists():
            continue
        try:
            cat.fetch(rel, args.raw_dir, args.mirror, retries=args.retries, timeout=args.timeout)
        except ReproError as exc:
            # in figures and tables a mirror folder is named as such, not by its path (checkouts' tables differed)
            reason = str(exc)
            for mirror in args.mirror or ():
                if "://" not in str(mirror):
                    reason = reason.replace(f"{mirror}: ", "local mirror: ")
            status.update(available=False, reason=f"requires network access: {reason}")
            break
    write_json(args.out, status)
    print(f"{args.dataset}: {'available' if status['available'] else status['reason']}")
    return 0


def cmd_prepare(args) -> int:
    cat = _catalog(args)
    inputs = dict(pair.partition("=")[::2] for pair in args.input or ())
    rec = cat.prepare(args.dataset, args.raw_dir, args.prepared_dir, out=args.out, inputs=inputs)
    cw = rec.get("condorcet_label")
    print(f"{args.dataset}: prepared" + (f", Condorcet winner {cw}" if cw else ""))
    return 0


def cmd_algorithms(args) -> int:
    from banditrepro import algorithms, plugins

    rows = []
    for name in algorithms.names(plugins=True):
        spec = algorithms.get(name)
        origin = "built in" if name in algorithms.MODULES else "plugin " + plugins.origin(plugins.entry_points()[name])
        rows.append([name, spec.problem, origin, spec.label])
    print(_table(["algorithm", "problem", "origin", "label"], rows))
    return 0
