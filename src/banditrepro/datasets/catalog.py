"""The dataset catalog (``config/datasets.yaml``): raw sources and the derivation of each instance.

Users add datasets without code, in the catalog or under ``datasets:`` of the workflow config: a
preference matrix file (``path:``, text or ``.npy``; optional ``sha256:`` to pin it, ``labels:``) or
Bernoulli means (``means: [...]``). They are validated like ours (square, entries in [0, 1], diagonal
1/2, P + Pᵀ = 1, a Condorcet winner) and the file's sha256 is recorded in the prepared json.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import banditrepro.datasets.derive as derive
from banditrepro import ReproError
from banditrepro.atomic import write_json
from banditrepro.datasets.fetch import checksum_mismatch, fetch
from banditrepro.datasets.prepared import load_prepared  # noqa: F401  (its home before prepared.py)
from banditrepro.instances import BernoulliArms, PreferenceMatrix, UtilityModel

DERIVE_FROM_URL = {"sushi_archive": derive.sushi_archive_to_wins}


@dataclass(frozen=True)
class Catalog:
    sources: dict[str, dict[str, Any]]
    datasets: dict[str, dict[str, Any]]
    declared: frozenset[str] = frozenset()  # names declared in the workflow config, not the catalog
    root: Path = Path(".")  # relative ``path:`` entries are read from here

    def dataset(self, name: str) -> dict[str, Any]:
        if name not in self.datasets:
            raise ReproError(f"unknown dataset {name!r} (known: {', '.join(self.datasets)})")
        return self.datasets[name]

    def source(self, relpath: str) -> dict[str, Any]:
        if relpath not in self.sources:
            raise ReproError(f"unknown raw source {relpath!r}")
        return self.sources[relpath]

    def raw_inputs(self, name: str) -> list[str]:
        """Raw source paths (relative to the raw data folder) that ``name`` is derived from."""
        entry = self.dataset(name)
        if "source" in entry:
            return [entry["source"]]
        return []

    def dataset_inputs(self, name: str) -> list[str]:
        """Other prepared datasets ``name`` needs (a fallback instance, when no matrix file is given)."""
        entry = self.dataset(name)
        fb = entry.get("fallback")
        return [fb] if fb and not entry.get("path") else []

    def user_file(self, name: str) -> Path | None:
        """The matrix file of a ``matrix_file`` dataset (absolute), or None."""
        path = self.dataset(name).get("path")
        return (self.root / path).resolve() if path else None

    def is_optional(self, name: str) -> bool:
        return bool(self.dataset(name).get("optional", False))

    def fetch(self, relpath: str, raw_dir: str | Path, mirrors: list[str], retries: int = 3,
              timeout: float = 60.0, dest: str | Path | None = None) -> str:
        src = self.source(relpath)
        derive_fn = DERIVE_FROM_URL.get(src.get("derive_from_url", ""), None)
        return fetch(relpath, dest or Path(raw_dir) / relpath, url=src.get("url"), sha256=src.get("sha256"),
                     git_blob=src.get("git_blob"), mirrors=list(mirrors), retries=retries, timeout=timeout,
                     derive_from_url=derive_fn)

    def verify_raw(self, name: str, raw_dir: str | Path) -> None:
        """Re-check every raw file of ``name`` against the catalog before deriving from it.

        Downloads are verified once, but a file edited afterwards (even consistently, so that it still
        parses) would silently change the instance and every cell drawn from it.
        """
        for rel in self.raw_inputs(name):
            path = Path(raw_dir) / rel
            src = self.source(rel)
            if not path.is_file():
                raise ReproError(f"{name}: raw file {path} missing; run: banditrepro fetch {rel} "
                                 f"--raw-dir {raw_dir}  (or snakemake {path})")
            problem = checksum_mismatch(path, src.get("sha256"), src.get("git_blob"))
            if problem == "no checksum declared":
                raise ReproError(f"{name}: raw source {rel} has no checksum in the catalog; refusing it")
            if problem:
                raise ReproError(f"checksum mismatch for raw file {path}: {problem} (catalog); "
                                 f"delete it to fetch a verified copy")

    def prepare(self, name: str, raw_dir: str | Path, prepared_dir: str | Path, out: str | Path | None = None,
                inputs: dict[str, str] | None = None) -> dict[str, Any]:
        """Derive instance ``name`` from its raw files, validate it, and write ``out`` (default
        ``<prepared>/<name>.json``); ``inputs``: the prepared file of each dataset it derives from (default
        ``<prepared>/<dataset>.json``)."""
        entry = self.dataset(name)
        raw = Path(raw_dir)
        self.verify_raw(name, raw)
        how = entry["derivation"]
        record: dict[str, Any] = {"name": name, "derivation": how,
                                  "description": entry.get("description", ""),
                                  "reference": entry.get("reference", "")}
        if how == "bernoulli":
            inst = BernoulliArms(entry["means"], labels=tuple(entry.get("labels", ())), name=name)
            record.update(kind="mab", means=inst.means.tolist(), labels=list(inst.labels))
        elif how == "utility_model" and entry.get("per_run"):
            # generative: no matrix here, every run draws its own (cell.run_cell, instances.UtilityModel)
            model = UtilityModel(entry["n"], name=name)
            record.update(kind="duel", generative={"model": "utility_model", "n": model.n_arms})
        else:
            P, labels, extra = self._derive_matrix(name, entry, raw, Path(prepared_dir), inputs or {})
            inst = PreferenceMatrix(P, labels=labels, name=name)
            record.update(kind="duel", matrix=inst.P.tolist(), labels=list(inst.labels),
                          condorcet_winner=inst.condorcet_winner,
                          condorcet_label=inst.labels[inst.condorcet_winner],
                          min_margin=float(inst.gaps[inst.gaps > 0].min()), **extra)
        if "expect_condorcet_label" in entry and record.get("condorcet_label") != entry["expect_condorcet_label"]:
            raise ReproError(f"{name}: Condorcet winner is {record.get('condorcet_label')!r}, "
                             f"expected {entry['expect_condorcet_label']!r}")
        write_json(out or Path(prepared_dir) / f"{name}.json", record)
        return record

    def _derive_matrix(self, name, entry, raw: Path, prepared: Path, inputs: dict):
        how = entry["derivation"]
        if how == "matrix_text":
            P = derive.read_text_matrix(raw / entry["source"], skiprows=entry.get("skiprows", 0))
            return P, entry.get("labels") or [f"ranker {i}" for i in range(len(P))], {}
        if how == "sushi":
            W = np.loadtxt(raw / entry["source"], dtype=np.int64)
            P, ids = derive.sushi_matrix(W, entry["size"])
            names = {int(k): v for k, v in entry.get("item_names", {}).items()}
            return P, [names.get(int(i), f"sushi {i}") for i in ids], {"item_ids": ids.tolist()}
        if how == "election":
            text = (raw / entry["source"]).read_text()
            P, kept, names = derive.election_matrix(text, entry["size"], entry.get("reading", "toc"))
            return P, [names[k] for k in kept], {"candidate_ids": kept, "reading": entry.get("reading", "toc")}
        if how == "ranker_subset":
            full = derive.read_text_matrix(raw / entry["source"])
            idx = derive.ranker_subset(full, entry["size"], entry["seed"], entry.get("winner"))
            return full[np.ix_(idx, idx)], [f"ranker {i}" for i in idx], {"ranker_ids": idx.tolist()}
        if how == "utility_model":
            P, u = derive.utility_model(entry["n"], entry["seed"])
            return P, [f"item {i} (u={x:.3f})" for i, x in enumerate(u)], {"utilities": u.tolist()}
        if how == "matrix_file":
            path = self.user_file(name)
            if path:
                P = derive.read_matrix_file(path, name)
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                pin = entry.get("sha256")
                if pin is not None and str(pin) != digest:  # fails closed, even on a pin YAML read as a number
                    raise ReproError(f"{name}: {path} has sha256 {digest}, the declaration pins {pin}")
                labels = entry.get("labels") or [f"item {i}" for i in range(len(P))]
                return P, labels, {"substitute": False, "matrix_file": str(path), "sha256": digest}
            if not entry.get("fallback"):
                raise ReproError(f"{name}: a matrix_file dataset needs a path (or a fallback dataset)")
            fb = json.loads(Path(inputs.get(entry["fallback"]) or prepared / f"{entry['fallback']}.json").read_text())
            note = entry.get("substitute_label", f"substitute: {entry['fallback']}")
            return np.array(fb["matrix"]), fb["labels"], {"substitute": True, "substitute_label": note,
                                                         "fallback": entry["fallback"]}
        raise ReproError(f"{name}: unknown derivation {how!r}")


def load_catalog(path: str | Path, declared: dict[str, dict] | None = None, root: str | Path = ".",
                 replace: bool = False) -> Catalog:
    """The catalog plus the datasets ``declared`` in the workflow config (names must be new, unless
    ``replace``: then a declaration replaces the catalog's, as for a prepare job handed its entry).

    An entry without ``derivation`` is a ``matrix_file`` if it has ``path``, ``bernoulli`` if it has
    ``means``; relative paths are read from ``root`` (the workflow passes the project root).
    """
    import yaml

    path = Path(path)
    if not path.exists():
        raise ReproError(f"dataset catalog not found: {path}")
    try:  # yaml.safe_load, not banditrepro.yamlfile: this module is in the closure that names every prepared
        # file (importing one more module renames them all); the catalog parses in ~7 ms either way
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, ValueError, yaml.YAMLError) as exc:  # a folder, unreadable, not UTF-8, not YAML
        raise ReproError(f"dataset catalog {path}: cannot read it ({' '.join(str(exc).split())[:200]})") from None
    parts = [doc.get(k, {}) if isinstance(doc, dict) else None for k in ("sources", "datasets")]
    if not all(isinstance(p, dict) and all(isinstance(v, dict) for v in p.values()) for p in parts):
        raise ReproError(f"dataset catalog {path}: expected mappings 'sources' and 'datasets' of entries")
    datasets = dict(parts[1])
    for name, entry in (declared or {}).items():
        if name in datasets and not replace:
            raise ReproError(f"dataset {name!r} is declared in the config and in the catalog {path}")
        datasets[name] = dict(entry)
    for name, entry in datasets.items():
        if "derivation" not in entry:
            kinds = [k for k in ("path", "means") if k in entry]
            if len(kinds) != 1:
                raise ReproError(f"dataset {name!r}: declare either path (a matrix file) or means "
                                 "(Bernoulli arms), or a derivation")
            entry["derivation"] = "matrix_file" if kinds[0] == "path" else "bernoulli"
    return Catalog(sources=parts[0], datasets=datasets,
                   declared=frozenset(declared or ()), root=Path(root))
