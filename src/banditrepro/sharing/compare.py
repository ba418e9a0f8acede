"""``banditrepro compare A B``: what two runs conclude differently, and why their figures may differ.

1. Claims: every claim (paper, figure, claim id) whose verdict in A's published ``claims.csv`` is not its
   verdict in B's, one line each, with both deciding intervals (``ci_low``/``ci_high``: the interval of the
   part that decides the row, banditrepro/claims/__init__.py) and how that interval moved (shift of its
   midpoint, change of its width, in the claim's own units: a ratio's, a share's …). A claim that only one
   side checks is listed too: its verdict cannot be said to agree.
2. Figures: for every figure of either run, the cells it draws whose published.json records differ (runs,
   code, data, seed, stack, format: the parts of a cell's name, workflow/names.py ``cell_parts``), and the
   cells only one side records. This is the *why* of a moved verdict: more runs narrow an interval, another
   seed or stack draws other random streams, other code or data measure something else.

Which cells a figure draws is read from the plan this checkout builds for each side's recorded config
(``Source.plan``, ``scan=False``: nothing is listed on disk), not from published.json, which records cells and
figure keys but not which figure draws which cell. A side whose plan cannot be built here (no recorded config,
a config this checkout rejects) is compared under the other side's figures, with a note saying so.

Exit status: 0 when every claim has the same verdict on both sides (figures may differ: another seed drawing
the same conclusions is a reproduction), 1 when some verdict differs or a claim is on one side only, 2 on bad
input (one line). Nothing is written and nothing is downloaded: a bundle is unpacked into a temporary folder
(banditrepro/sharing/sources.py).
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from banditrepro import ReproError
from banditrepro.sharing.sources import BadSource

CLAIMS_CSV = "claims.csv"  # the published claims table, <results>/claims.csv (workflow/publish.py)
NEEDED = ("paper", "claim_id", "verdict", "ci_low", "ci_high")  # the columns compare reads (claims.COLUMNS)
# a cell record's parts in the order they are reported, with the word the summary counts them under; any other
# part a newer published.json records is compared too, under its own name (the list need not keep up)
PARTS = {"runs": "runs", "code": "code", "data": "data", "base_seed": "seed", "stack": "stack",
         "format": "format", "algorithm": "algorithm", "horizon": "horizon"}
DERIVED = ("key", "summary")  # names made of the parts: reported only when no part explains their change
ONE_SIDE = "on one side"  # the kind of a cell only one side records
NAMED_CELLS = 3  # a group of at most this many differing cells is named, a larger one counted


def _rank(kind: str) -> int:
    """Differences are reported in one order (the parts', then the names', any other, a cell on one side),
    so that two comparisons read alike whichever cell happened to come first."""
    order = [*PARTS.values(), *DERIVED]
    return order.index(kind) if kind in order else len(order) + (kind == ONE_SIDE)


def add_arguments(p) -> None:
    p.add_argument("a", metavar="A", help="a results folder or a bundle (.tar.gz)")
    p.add_argument("b", metavar="B", help="another results folder or bundle, compared with A")


def run(args) -> int:
    root = args.project_info.root
    if root is None:
        raise ReproError(f"no project folder here ({args.project_info.hint()})")
    result = compare(args.a, args.b, root)
    for line in result.lines:
        print(line)
    print(result.summary())
    return 0 if result.same_verdicts else 1


# --- the claims ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    paper: str
    figure: str
    claim_id: str
    verdict: str
    low: float  # the deciding interval (NaN for a claim not run)
    high: float

    @property
    def name(self) -> str:
        where = f"{self.paper}/{self.figure}" if self.figure else self.paper
        return f"{self.claim_id} ({where})"

    def interval(self) -> str:
        """As the report writes it (``[low, high]`` to 4 significant digits), or "no interval"."""
        from banditrepro.claims.parts import fmt

        if math.isnan(self.low) and math.isnan(self.high):
            return "no interval"
        return f"[{fmt(self.low)}, {fmt(self.high)}]"


def _number(text: str) -> float:
    # pandas writes NaN as an empty field (a claim not run has no interval)
    try:
        return float(text) if text.strip() else math.nan
    except ValueError:
        return math.nan


def read_claims(src) -> dict[tuple, Claim]:
    """(paper, figure, claim id) -> Claim of a source's published claims.csv, in the file's order. BadSource if
    it is missing or lacks a column compare reads. Keyed with the figure as well: a claim id need only be
    unique within its figure, and a repeated key (a challenger's row, say) is kept apart by its occurrence."""
    path = Path(src.results) / CLAIMS_CSV
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadSource(f"{src.given}: no {CLAIMS_CSV} (a run publishes it when it finishes: run snakemake "
                        "on it first)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadSource(f"{src.given}: {CLAIMS_CSV} cannot be read ({exc})") from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in NEEDED if c not in (reader.fieldnames or ())]
    if missing:
        raise BadSource(f"{src.given}: {CLAIMS_CSV} is not a claims table (no column {', '.join(missing)})")
    out = {}
    for row in reader:
        c = Claim(row["paper"], row.get("figure") or "", row["claim_id"], row["verdict"], _number(row["ci_low"]),
                  _number(row["ci_high"]))
        key, n = (c.paper, c.figure, c.claim_id), 1
        while key in out:
            n += 1
            key = (c.paper, c.figure, f"{c.claim_id}#{n}")
        out[key] = c
    return out


def _signed(x: float) -> str:
    return f"{x:+.4g}"


def moved(a: Claim, b: Claim) -> str:
    """How the deciding interval moved from A to B: its midpoint's shift and its width's change."""
    if any(math.isnan(x) for x in (a.low, a.high, b.low, b.high)):
        return "no interval on one side to compare"
    shift = (b.low + b.high) / 2 - (a.low + a.high) / 2
    return f"midpoint {_signed(shift)}, width {_signed((b.high - b.low) - (a.high - a.low))}"


def verdict_line(a: Claim, b: Claim) -> str:
    return (f"claim {a.name}: {a.verdict} → {b.verdict}; interval {a.interval()} → {b.interval()} "
            f"({moved(a, b)})")


def one_side_line(c: Claim, side: str) -> str:
    return f"claim {c.name}: in {side} only ({c.verdict}, interval {c.interval()})"


# --- the cells and figures ----------------------------------------------------------------------------------


def _value(v) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def cell_differences(a: dict, b: dict) -> list[tuple[str, str]]:
    """(kind, text) for each part in which two cell records (published.json "cells") differ: ``("runs", "runs
    20 → 100")``, ``("stack", "stack numpy 2.4.6 → 2.5.0")`` … The key and summary name are made of the parts
    (and of the summary's code), so they are named only when no part tells why they changed."""
    out = []
    parts = [*PARTS, *sorted((set(a) | set(b)) - set(PARTS) - set(DERIVED))]
    for part in parts:
        if part not in a and part not in b:
            continue
        word = PARTS.get(part, part)
        if part not in a or part not in b:
            out.append((word, f"{word} recorded in {'B' if part not in a else 'A'} only"))
        elif a[part] != b[part]:
            x, y = a[part], b[part]
            if isinstance(x, dict) and isinstance(y, dict):  # the stack: name only the packages that differ
                changed = ", ".join(f"{k} {x.get(k, '-')} → {y.get(k, '-')}" for k in sorted(set(x) | set(y))
                                    if x.get(k) != y.get(k))
                out.append((word, f"{word} {changed}"))
            else:
                out.append((word, f"{word} {_value(x)} → {_value(y)}"))
    if not out:
        for part in DERIVED:  # equal parts, other names: what the names are made of changed (the summary's code)
            if a.get(part) != b.get(part):
                out.append((part, f"{part} {a.get(part)} → {b.get(part)}"))
                break
    return out


@dataclass
class FigureDifference:
    """The differing cells of one figure (or of the cells no figure draws, ``stem`` None)."""

    stem: str | None
    cells: int  # the cells it draws that either side records
    groups: dict = field(default_factory=dict)  # text -> (kind, [cells])
    only: str | None = None  # "A" / "B": the figure is planned on that side only

    @property
    def differing(self) -> int:
        return len({c for _, cells in self.groups.values() for c in cells})

    @property
    def kinds(self) -> list[str]:
        kinds = sorted({kind for kind, _ in self.groups.values()}, key=_rank)
        return kinds + ([f"planned in {self.only} only"] if self.only else [])

    def line(self) -> str:
        what = f"figure {self.stem}" if self.stem else "cells no figure draws"
        head = f"{what}: planned in {self.only} only; " if self.only else f"{what}: "
        parts = []
        for text, (_, cells) in sorted(self.groups.items(), key=lambda g: _rank(g[1][0])):  # stable: by cell
            named = f": {', '.join(cells)}" if len(cells) <= NAMED_CELLS else ""
            parts.append(f"{text} ({len(cells)} cell{'s' if len(cells) != 1 else ''}{named})")
        if not parts:  # planned on one side only, drawing no cell or cells both sides record alike
            return f"{head}it draws no cell" if not self.cells else f"{head}its {self.cells} cells are the same"
        return f"{head}{self.differing} of {self.cells} cells differ: " + "; ".join(parts)


def figure_difference(stem, drawn, cells_a: dict, cells_b: dict, only=None) -> FigureDifference | None:
    """What differs among the cells ``drawn`` by one figure, or None if nothing does. A drawn cell neither side
    records (an optional dataset's, planned by neither) is not counted; a cell of A and one of B that draw the
    same line of the same panel at another horizon are compared as one (``paired``)."""
    out = FigureDifference(stem, 0, only=only)
    only_a = [c for c in drawn if c in cells_a and c not in cells_b]
    only_b = [c for c in drawn if c in cells_b and c not in cells_a]
    pairs = paired(only_a, only_b)
    for cell in drawn:
        a, b = cells_a.get(cell), cells_b.get(cell)
        if (a is None and b is None) or cell in pairs.values():
            continue
        out.cells += 1
        if cell in pairs:
            found = cell_differences(a, cells_b[pairs[cell]])
        elif a is None or b is None:
            found = [(ONE_SIDE, f"in {'A' if b is None else 'B'} only")]
        else:
            found = cell_differences(a, b)
        for kind, text in found:
            out.groups.setdefault(text, (kind, []))[1].append(cell)
    return out if out.groups or only else None


def paired(only_a: list[str], only_b: list[str]) -> dict[str, str]:
    """A's one-sided cell -> B's, where both draw one dataset and algorithm at other horizons (a config that caps
    the horizons, ``max_horizon``, names the same line's cell otherwise): compared as one, the line then says
    "horizon 100000 → 500" rather than listing two cells on one side each. Only where each side has exactly
    one such cell: a figure drawing a line at several horizons is left as it is, not guessed at."""
    from banditrepro.layout import parse_cell

    def by_line(cells):
        out: dict[tuple, list] = {}
        for c in cells:
            if parts := parse_cell(c):
                out.setdefault((parts[0], parts[2]), []).append(c)
        return out

    la, lb = by_line(only_a), by_line(only_b)
    return {cells[0]: lb[k][0] for k, cells in la.items() if len(cells) == 1 and len(lb.get(k, ())) == 1}


def drawn_cells(fig) -> list[str]:
    """The cells a figure's panels draw, in panel and line order (layout.cell_key names them)."""
    from banditrepro.layout import cell_key

    cells = [cell_key(p.dataset, p.horizon, a.id) for p in fig.panels for a in p.algorithms]
    return list(dict.fromkeys(cells))


def planned_figures(src, root, notes: list[str], cache: dict) -> dict | None:
    """stem -> the cells it draws, of the plan this checkout builds for the source's recorded config; None
    (and a note) if it cannot be built here. Plans of the same config are built once: the figures depend on
    the config and this checkout's manifest only, not on the folder the plan reads."""
    try:
        config = src.config
        key = json.dumps(config, sort_keys=True, default=str)
        if key not in cache:
            cache[key] = {fig.stem: drawn_cells(fig) for fig in src.plan(root, scan=False).figures}
        return cache[key]
    except ReproError as exc:
        notes.append(f"note: {src.given}: its figures cannot be planned here ({exc})")
        return None


# --- both sides ---------------------------------------------------------------------------------------------


@dataclass
class Result:
    lines: list = field(default_factory=list)
    changed: int = 0  # claims on both sides with another verdict
    both: int = 0  # claims on both sides
    only_a: int = 0
    only_b: int = 0
    figures: list = field(default_factory=list)  # FigureDifference of each differing figure
    figures_total: int | None = None  # None: the figures could not be compared

    @property
    def same_verdicts(self) -> bool:
        return not (self.changed or self.only_a or self.only_b)

    def summary(self) -> str:
        claims = f"{self.changed} of {self.both} claims changed verdict"
        claims += "".join(f", {n} in {side} only" for n, side in ((self.only_a, "A"), (self.only_b, "B")) if n)
        if self.figures_total is None:
            return f"compare: {claims}; figures not compared"
        real = [f for f in self.figures if f.stem]
        kinds: dict[str, int] = {}
        for f in real:
            for kind in f.kinds:
                kinds[kind] = kinds.get(kind, 0) + 1
        why = ", ".join(f"{k}: {kinds[k]}" for k in sorted(kinds, key=_rank))
        why = f" ({why})" if why else ""
        return f"compare: {claims}; {len(real)} of {self.figures_total} figures differ in their cells{why}"


def compare(a, b, root, data_dir=None) -> Result:
    """Compare sources ``a`` and ``b`` (paths of results folders or bundles) under the checkout at ``root``.
    Both are opened and their claims tables read before anything is reported, so bad input is one error."""
    from banditrepro.sharing.sources import open_source

    data = Path(data_dir) if data_dir is not None else Path(root) / "data"
    with contextlib.ExitStack() as stack:
        sa = stack.enter_context(open_source(a, data_dir=data))
        sb = stack.enter_context(open_source(b, data_dir=data))
        claims_a, claims_b = read_claims(sa), read_claims(sb)
        result = Result(lines=[f"A: {_described(sa)}", f"B: {_described(sb)}"])
        _compare_claims(claims_a, claims_b, result)
        _compare_figures(sa, sb, root, result)
    return result


def _described(src) -> str:
    return f"{src.given} (bundle sha256 {src.bundle_sha256})" if src.bundle_sha256 else src.given


def _compare_claims(claims_a: dict, claims_b: dict, result: Result) -> None:
    for key, ca in claims_a.items():
        cb = claims_b.get(key)
        if cb is None:
            result.only_a += 1
            result.lines.append(one_side_line(ca, "A"))
            continue
        result.both += 1
        if ca.verdict != cb.verdict:
            result.changed += 1
            result.lines.append(verdict_line(ca, cb))
    for key, cb in claims_b.items():
        if key not in claims_a:
            result.only_b += 1
            result.lines.append(one_side_line(cb, "B"))


def _compare_figures(sa, sb, root, result: Result) -> None:
    cells_a, cells_b = sa.cells, sb.cells
    for src, cells in ((sa, cells_a), (sb, cells_b)):
        if not cells:  # no record to compare with: every cell would read "in one only", which says nothing
            result.lines.append(f"note: {src.given} records no cells (published.json missing or written by "
                                "an older version): figures not compared")
            return
    notes: list[str] = []
    cache: dict = {}
    figs_a, figs_b = planned_figures(sa, root, notes, cache), planned_figures(sb, root, notes, cache)
    result.lines += notes
    # a side that cannot be planned is read under the other side's figures (both None: no figure at all)
    figs_a = figs_a if figs_a is not None else (figs_b or {})
    figs_b = figs_b if figs_b is not None else figs_a
    stems = list(dict.fromkeys([*figs_a, *figs_b]))
    result.figures_total = len(stems)
    drawn: set[str] = set()
    for stem in stems:
        cells = list(dict.fromkeys([*figs_a.get(stem, ()), *figs_b.get(stem, ())]))
        drawn.update(cells)
        only = "A" if stem not in figs_b else "B" if stem not in figs_a else None
        found = figure_difference(stem, cells, cells_a, cells_b, only)
        if found is not None:
            result.figures.append(found)
    rest = [c for c in dict.fromkeys([*cells_a, *cells_b]) if c not in drawn]
    found = figure_difference(None, rest, cells_a, cells_b)
    if found is not None:
        result.figures.append(found)
    result.lines += [f.line() for f in result.figures]
