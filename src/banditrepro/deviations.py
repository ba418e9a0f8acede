"""``config/deviations.yaml``: every place where the reproduction departs from a paper's text.

Each entry is {id, paper, what, ours, effect?}. ``effect`` names two lines of the figure manifest,
{figure: <paper>/<figure-id>, ours: <algorithm key>, variant: <algorithm key>, variant_figure?}, whose
ratio of mean final regrets the reproduction report prints. ``validate`` checks those names against the
manifest when the workflow parses, so a renamed figure or line fails at once instead of printing
"not measured" in the report.
"""

from __future__ import annotations

from pathlib import Path

from banditrepro import ReproError, yamlfile

REQUIRED = ("id", "paper", "what", "ours")
EFFECT_REQUIRED = ("figure", "ours", "variant")


def load_deviations(path) -> list[dict]:
    """The list under ``deviations``; one-line ReproError for a missing file or a missing field."""
    path = Path(path)
    if not path.exists():
        raise ReproError(f"deviations file not found: {path}")
    doc = yamlfile.load(path.read_text()) or {}
    items = doc.get("deviations", [])
    for k, d in enumerate(items):
        missing = [f for f in REQUIRED if not d.get(f)]
        if missing:
            raise ReproError(f"{path.name}: deviation {d.get('id', k)}: missing {', '.join(missing)}")
        eff = d.get("effect")
        if eff is not None and not all(eff.get(f) for f in EFFECT_REQUIRED):
            raise ReproError(f"{path.name}: deviation {d['id']}: effect needs figure, ours and variant")
    return items


def validate(deviations: list[dict], figures) -> None:
    """Raise ReproError (one line) if an ``effect`` names a figure, or a line (algorithm key) of a figure,
    that the manifest does not have. Effects of papers that are not loaded (``papers:`` of the config
    leaves them out) are skipped: their figures are not built, and the report says "not measured"."""
    by_stem = {f.stem: f for f in figures}
    loaded = {f.paper for f in figures}
    for d in deviations:
        eff = d.get("effect")
        if not eff:
            continue
        for fig_key, line_key in (("figure", "ours"), ("variant_figure" if eff.get("variant_figure") else "figure",
                                                       "variant")):
            stem = str(eff[fig_key])
            if stem.split("/", 1)[0] not in loaded:
                continue
            fig = by_stem.get(stem)
            if fig is None:
                known = ", ".join(sorted(s for s in by_stem if s.startswith(stem.split("/", 1)[0] + "/")))
                raise ReproError(f"deviation {d['id']}: effect {fig_key} {stem!r} is not a figure of the manifest "
                                 f"(known: {known})")
            keys = list(dict.fromkeys(r.key for p in fig.panels for r in p.algorithms))
            if eff[line_key] not in keys:
                raise ReproError(f"deviation {d['id']}: effect {line_key} {eff[line_key]!r} is not a line of "
                                 f"{stem} (keys: {', '.join(keys)})")
