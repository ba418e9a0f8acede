"""What ``banditrepro verify`` takes from this checkout rather than from its source: the prepared datasets (and a
listing of the source's files, until the shared reader of sources.py gives one).

Every prepared file a recomputed shard reads is this checkout's: ``<project>/data/prepared/<dataset>/<key>.json``
under the name this checkout gives the dataset (names.data_key: its catalog entry, its raw sources' sha256, the
preparation code), or, where that file is missing, prepared here the way the workflow's ``prepare_dataset`` rule
does (``Catalog.prepare``, raw files checked against the catalog's sha256) into verify's temporary folder, from
the project's ``data/raw`` or a local mirror of the config (never the network: verify of a bundle works offline,
and never a file the source ships). A dataset that cannot be prepared here (its raw file is not on this machine:
a licence that withholds it from bundles, an optional network dataset) is *absent*: its cells are not checked.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from banditrepro import ReproError
from banditrepro.filehash import file_sha256
from banditrepro.layout import SIDECAR_SUFFIX, arrays_of, sidecar_of, split_key


def local_data(plan, root, into: Path, datasets) -> tuple[dict, dict]:
    """(dataset -> this checkout's prepared file, dataset -> why it is absent) for ``datasets``, made in ``into``
    (``<into>/prepared/<dataset>/<key>.json``: links to the project's files, or files prepared here)."""
    project = Path(root) / "data"
    found, absent = {}, {}
    for dataset in sorted(datasets):
        try:
            found[dataset] = _prepared_here(plan, dataset, project, into, ())
        except ReproError as exc:
            absent[dataset] = str(exc)
    return found, absent


def _rel(plan, dataset: str) -> Path:
    return Path(plan.layout.prepared_file(dataset)).relative_to(plan.layout.data_dir)


def _prepared_here(plan, dataset: str, project: Path, into: Path, seen: tuple) -> Path:
    rel = _rel(plan, dataset)
    out = into / rel
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    mine = project / rel
    if mine.is_file():  # prepared by this checkout's workflow under this checkout's name
        os.symlink(mine.resolve(), out)
        return out
    if dataset in seen:
        raise ReproError(f"dataset {dataset!r} derives from itself")
    cat = plan.catalog
    inputs = {d: str(_prepared_here(plan, d, project, into, (*seen, dataset))) for d in cat.dataset_inputs(dataset)}
    raw = into / "raw"
    for source in cat.raw_inputs(dataset):
        _raw_here(plan, source, project / "raw", raw)
    cat.prepare(dataset, raw, into / "prepared", out=out, inputs=inputs)
    return out


def _raw_here(plan, source: str, project_raw: Path, raw: Path) -> None:
    """A raw file into ``raw``: the project's copy, else a local mirror's (the catalog's sha256 checks either:
    ``Catalog.prepare`` checks it again before deriving). ReproError if this machine has none."""
    from banditrepro.datasets.fetch import fetch

    dest = raw / source
    if dest.is_file():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    entry = plan.catalog.source(source)
    mirrors = [str(project_raw)] + [plan.root_path(m) for m in plan.config.get("data_mirrors", ())
                                    if "://" not in str(m)]
    try:
        fetch(source, dest, url=None, sha256=entry.get("sha256"), git_blob=entry.get("git_blob"),
              mirrors=mirrors, log=lambda *_: None)
    except ReproError as exc:
        raise ReproError(f"its raw file {source} is not on this machine ({exc})") from None


def compare_shipped(src, plan, local: dict, result) -> None:
    """A bundle's prepared files against this checkout's of the same name: a file that differs is a mismatch (the
    shards were drawn from other data than the named sources give); one under a name this checkout gives no
    dataset is not checked. A folder's data are the project's own: nothing shipped."""
    if src.bundle_sha256 is None:
        return
    ours = {str(_rel(plan, d)): d for d in plan.names.data}
    top = Path(src.data) / "prepared"
    for path in sorted(top.rglob("*")) if top.is_dir() else []:
        if not path.is_file():
            continue
        rel = str(path.relative_to(src.data))
        name = f"data/{rel}"
        dataset = ours.get(rel)
        if dataset is None:
            result.skip(name, "not a name this checkout gives a dataset of the config: no shard is recomputed "
                              "from it")
        elif dataset not in local:
            result.skip(name, f"{dataset} cannot be prepared here to compare it with")
        elif Path(local[dataset]).read_bytes() != path.read_bytes():
            result.mismatch(f"{name}: differs from the file this checkout prepares from the named raw sources "
                            "(the shards were recomputed from this checkout's)")
        else:
            result.checked.add(name)


def source_files(src) -> list[str]:
    """Every file of the source, relative to it: a folder's paths under its results folder; a bundle's as its
    members are named, with ``results/`` left off (``data/…``, ``checksums.sha256`` … kept). Links and other
    non-regular entries are listed too (verify reads none of them as data). A local stand-in for the listing of
    the shared reader (sources.py), which is being rewritten: swap it for that one's."""
    if src.bundle_sha256 is None:
        base, strip = Path(src.results), ""
    else:
        base, strip = Path(src.results).parent, "results/"
    out = []
    for folder, dirs, files in os.walk(base):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            rel = Path(folder, name).relative_to(base).as_posix()
            out.append(rel.removeprefix(strip))
    return sorted(out)


def copy_into(path, dest) -> None:
    """A file of the source into the scratch folder (a copy: the scratch is written, the source never)."""
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, dest)


def check_sidecars(c, local: dict, result) -> None:
    """Each shard's sidecar against its name (algorithm, instance, horizon, runs) and, where the shard carries this
    checkout's name, the sha256 of the prepared file it was computed from; its measured seconds and versions
    cannot be checked (one line for them all)."""
    import json

    dataset, horizon, algo = split_key(c.cell)
    sha = file_sha256(local[dataset]) if c.byte else None
    for first, last, path in c.shards:
        side = Path(sidecar_of(str(path)))
        rel = results_rel(side)
        if not side.is_file():
            continue  # a shard without measured times (tolerated by the summary: NaN seconds)
        try:
            rec = json.loads(side.read_text())
            bad = [k for k, want in (("algorithm_id", algo), ("instance", dataset), ("horizon", horizon),
                                     ("runs", list(range(first, last + 1)))) if rec.get(k) != want]
            if sha and rec.get("prepared_sha256") != sha:
                bad.append("prepared_sha256")
        except (OSError, ValueError, AttributeError) as exc:
            bad = [f"unreadable ({exc})"]
        if bad:
            result.mismatch(f"{rel}: {', '.join(bad)} not what the shard's name says")
        else:
            result.checked.add(rel)
            result.skip("cells/**/runs*.json (their measured seconds and versions)",
                        "measured on the source's machine; each sidecar's runs, instance, horizon, algorithm and "
                        "prepared sha256 are checked")


def results_rel(path) -> str:
    """A shard's or summary's path (or its sidecar's) under its results folder (``cells/…``, ``summaries/…``)."""
    parts = Path(path).parts
    for top in ("cells", "summaries"):
        if top in parts:
            return "/".join(parts[parts.index(top):])
    return str(path)


# --- every other file ------------------------------------------------------------------------------------

# (path prefix, why a file under it is not checked), first match wins; anything else: "not a file verify knows"
WHY_NOT = (
    ("logs/", "a job log"), ("batches/", "a cluster batch's spec or end marker"),
    ("cells/", "a shard this checkout does not name for the source's config (another config, key or run range)"),
    ("summaries/", "a summary this checkout does not name for the source's config"),
    ("store/", "a store entry this checkout does not name for the source's config"),
    ("data/status/", "an optional dataset's probe verdict, used as recorded (the probe ran on the source's machine)"),
    ("verification.json", "the record of an earlier verify"), ("received.json", "the record of an earlier merge"),
    ("checksums.sha256", "the bundle's list of sha256: verify checks each member by its content instead"),
    ("ro-crate-metadata.json", "the bundle's description (RO-Crate)"), ("README.md", "the bundle's README"),
    ("workflow/", "the source's workflow file: this checkout's code is what recomputes and re-derives"),
)


def inventory(src, result) -> None:
    """A ``not checked:`` line for every file of the source that was not checked, with why; files of one folder
    left out for one reason share a line when there are more than three."""
    covered = tuple(p for p in result.skipped if p.endswith("/"))  # folders already named, with why
    for path in source_files(src):
        if path in result.checked or path.startswith(covered or ("\0",)):
            continue
        why = next((w for prefix, w in WHY_NOT if path.startswith(prefix) or path == prefix.rstrip("/")),
                   "not a file verify knows")
        if path.startswith("cells/") and path.endswith(SIDECAR_SUFFIX) and arrays_of(path) not in result.checked:
            why = "the sidecar of a shard not checked"
        result.skip(path, why)
    groups: dict = {}
    for path, why in result.skipped.items():
        groups.setdefault((str(Path(path).parent), why), []).append(path)
    for (folder, why), paths in sorted(groups.items()):
        if len(paths) > 3:
            result.note(f"not checked: {folder}/ ({len(paths)} files: {why})")
        else:
            result.lines.extend(f"not checked: {p} ({why})" for p in sorted(paths))

