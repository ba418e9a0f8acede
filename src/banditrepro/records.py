"""Which results a record of a verify or a merge is about, so that a report shows it only beside those results.

``verification.json`` (banditrepro verify --record) and ``received.json`` (banditrepro merge) live in a results
folder, which holds the store entries of every config run there. A record therefore names the store entries it
describes (``describes``), and the report of a config shows it, and is named by it, only when they are this
config's (``applies``): a verify --record, then a run with another ``base_seed``, shows no verification of the
old numbers. A record without that field (written before it existed) describes nothing and is never shown.

What is described, from a plan's ``Names`` (layout.Names; every key is computed at parse time):

    summaries   a digest of every summary name: the runs (cells, their code, data, seeds, stack) a merge
                brought and a verify recomputed
    claims      the claims' name (every figure's and summary's name, the drawing stack): what verify re-derived;
                a merge leaves it out, since a first run's probes may rename the figures after the merge

A low module: only the standard library, so the layout, names.py, report.py and sharing/ may all use it.
"""

from __future__ import annotations

import hashlib
import json

FIELD = "describes"


def _summaries_digest(names) -> str:
    text = json.dumps(sorted(names.summary.values()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def describes(names, claims: bool = True) -> dict:
    """What a record written for the plan whose ``Names`` these are describes (``claims`` False: a merge)."""
    out = {"summaries": _summaries_digest(names)}
    if claims:
        out["claims"] = names.claims
    return out


def applies(record, names) -> bool:
    """Whether ``record`` (a verification record, or one source of received.json) describes the store entries
    of ``names``: every part it names equal, its summaries named at least. No names (a folder made by hand):
    nothing can be told, nothing applies."""
    if names is None or not isinstance(record, dict):
        return False
    said = record.get(FIELD)
    if not isinstance(said, dict) or "summaries" not in said:
        return False
    mine = describes(names)
    return all(k in mine and mine[k] == v for k, v in said.items())


def _json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def shown(layout) -> tuple[dict | None, list[dict]]:
    """The verification record and the merged sources of ``layout``'s folder that describe its names' store
    entries: what its report shows, and what names the report (workflow/names.py)."""
    check = _json(layout.verification_json)
    received = _json(layout.received_json)
    sources = received.get("sources") if isinstance(received, dict) else None
    merged = [s for s in sources if applies(s, layout.names)] if isinstance(sources, list) else []
    return (check if applies(check, layout.names) else None), merged
