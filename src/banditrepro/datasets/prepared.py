"""Reading a prepared instance file: the one piece of the dataset code a simulation job runs (the catalog,
download and derivation code make the file; the cell digest leaves them out, docs/decisions.md#code-digests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from banditrepro import ReproError
from banditrepro.instances import BernoulliArms, PreferenceMatrix, UtilityModel


def load_prepared(path: str | Path):
    """A prepared instance (``data/prepared/<name>.json``) as a validated PreferenceMatrix/BernoulliArms."""
    path = Path(path)
    if not path.exists():
        raise ReproError(f"prepared dataset not found: {path} (run the workflow's prepare rule first)")
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
        if rec.get("generative"):
            return UtilityModel(rec["generative"]["n"], name=rec["name"])
        if rec["kind"] == "mab":
            return BernoulliArms(rec["means"], labels=tuple(rec["labels"]), name=rec["name"])
        return PreferenceMatrix(np.array(rec["matrix"], dtype=np.float64), labels=tuple(rec["labels"]),
                                name=rec["name"])
    except (ValueError, KeyError, TypeError) as exc:  # JSON/Unicode errors are ValueErrors
        raise ReproError(f"prepared dataset {path} is unreadable ({type(exc).__name__}: {exc}); "
                         f"delete it and prepare it again") from None
