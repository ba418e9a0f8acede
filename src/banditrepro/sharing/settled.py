"""What ``banditrepro settle`` leaves beside a results folder, across the sharing boundary: ``claims-settled.csv``
and ``settle/`` (state.json, settle.md, sequences.png, sequences.pdf), allow-listed by name for the one reader
(sharing/received.py, sources.py), carried by ``bundle`` and re-derived by ``verify`` (docs/settle.md#sharing).

- *Reader*: only these five names (``settle/cell_runs.yaml``, settle's own scratch, is never read); ``settle/``
  must be a real folder; each file within its limit (``LIMITS``); ``state.json`` a JSON object of settle's
  state version, ``claims-settled.csv`` UTF-8 with settle's header. Anything else: ``BadSource``, one line.
- *Bundle*: carried only whole (claims-settled.csv and state.json together) and only when they settle the runs
  published.json records (the state's last round ran every cell at its published runs): a folder where a
  snakemake run changed the runs after settle is refused, one line, rather than bundled with stale verdicts.
- *Verify*: claims-settled.csv re-derived from the re-derived summaries and tables (``settle_claims``: the
  same tracing, α split and looks as settle) and compared byte for byte; the looks come from the config
  published.json records (settle passes ``runs`` = its first round, ``max_runs`` = its cap), the α split is
  re-derived and must equal the one state.json holds (else claims-settled.csv is named on a "not checked:"
  line with why). state.json, settle.md and the figures are named on "not checked:" lines (a record of rounds
  and CPU; a page rendered from both; images are never re-drawn).

Merge needs nothing here: it pools shards; a settle in the merged folder continues from them (docs/settle.md#sharing).
"""

from __future__ import annotations

import json
import os
import stat

from banditrepro import ReproError
from banditrepro.sharing.refusal import BadSource

CSV = "claims-settled.csv"
FOLDER = "settle"
STATE = f"{FOLDER}/state.json"
REPORT = f"{FOLDER}/settle.md"
FIGURES = (f"{FOLDER}/sequences.png", f"{FOLDER}/sequences.pdf")
FILES = (CSV, STATE, REPORT, *FIGURES)
# bytes: the default config's claims-settled.csv is ~30 KiB, state.json ~60 KiB (rounds × cells), the figure
# ~300 KiB; 1000× room, far below the reader's per-file limit (received.MAX_MEMBER_BYTES)
LIMITS = {CSV: 16 * 2**20, STATE: 16 * 2**20, REPORT: 16 * 2**20, FIGURES[0]: 64 * 2**20, FIGURES[1]: 64 * 2**20}
DESCRIPTIONS = {  # what the bundle's crate says of each (sharing/crate.py)
    CSV: "banditrepro settle's verdicts: every claim decided by a confidence sequence valid at every number of runs",
    STATE: "banditrepro settle's state: its rounds (every cell's runs), CPU, the α split, each claim's decision",
    REPORT: "banditrepro settle's report: how it ran and the settled verdicts",
    FIGURES[0]: "every settled claim's confidence sequences against runs",
    FIGURES[1]: "every settled claim's confidence sequences against runs",
}


def allowed(parts: list[str]) -> bool:
    """Whether ``parts`` (under a results folder) names one of settle's files."""
    return "/".join(parts) in FILES


def bundle_folder(parts: list[str]) -> bool:
    """Whether a bundle's folder member ``parts`` is ``results/settle``."""
    return parts == ["results", FOLDER]


def present(top, given: str) -> list[str]:
    """Settle's files found under the results folder ``top`` (the reader's walk lstat-checks each); BadSource if
    ``settle`` is there but not a real folder (a link would lead the walk elsewhere)."""

    try:
        st = os.lstat(os.path.join(top, FOLDER))
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise BadSource(f"{given}: {FOLDER} is not a folder (a link or a file)")
    return [name for name in FILES if os.path.lexists(os.path.join(top, name))]


def check(src) -> None:
    """The limits and forms of a source's settle files (sources._checked); BadSource, one line, if one is off."""
    from banditrepro.settle_claims import SETTLED_COLUMNS

    for name in (n for n in FILES if n in src.files):
        if src.files[name] > LIMITS[name]:
            raise BadSource(f"{src.given}: {name} is larger than {LIMITS[name]} bytes")
    if STATE in src.files:
        state_of(src)
    if CSV in src.files:
        try:
            head = src.read_bytes(src.results / CSV).decode("utf-8").partition("\n")[0].rstrip("\r")
        except UnicodeDecodeError:
            raise BadSource(f"{src.given}: {CSV} is not UTF-8 text") from None
        if head.split(",") != SETTLED_COLUMNS:
            raise BadSource(f"{src.given}: {CSV} does not have the columns settle writes")


def state_of(src) -> dict:
    """A source's settle/state.json, read as a record: a JSON object of settle's version with its rounds."""
    from banditrepro.settle_run import STATE_VERSION  # deferred as check's columns: read only when one is sent

    try:
        state = json.loads(src.read_bytes(src.results / STATE).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadSource(f"{src.given}: {STATE} is not JSON ({' '.join(str(exc).split())[:200]})") from None
    ok = isinstance(state, dict) and state.get("version") == STATE_VERSION and isinstance(state.get("rounds"), list) \
        and all(isinstance(r, dict) and isinstance(r.get("cell_runs"), dict) for r in state["rounds"]) \
        and isinstance(state.get("alpha"), dict)
    if not ok:
        raise BadSource(f"{src.given}: {STATE} is not a settle state (version {STATE_VERSION}: rounds, alpha)")
    return state


def _last_runs(state: dict) -> dict:
    return state["rounds"][-1]["cell_runs"] if state.get("rounds") else {}


# --- bundle ----------------------------------------------------------------------------------------------


def add_to_bundle(contents, results) -> None:
    """Settle's files of the folder ``results`` as members of the bundle ``contents`` (bundle.Contents), when they
    settle the published runs; none if the folder was never settled; ReproError (one line) otherwise."""
    from pathlib import Path

    results = Path(results)
    found = [name for name in FILES if (results / name).is_file()]
    if not found:
        return
    missing = [name for name in (CSV, STATE) if name not in found]
    if missing:
        raise ReproError(f"{results}: {missing[0]} missing beside {found[0]} (a settle stopped in its first "
                         f"round?): run banditrepro settle again, or remove {' and '.join(found)}")
    try:
        state = json.loads((results / STATE).read_text(encoding="utf-8"))
        last = _last_runs(state)
    except (ValueError, OSError, TypeError, KeyError, AttributeError) as exc:
        raise ReproError(f"{results / STATE} is unreadable ({exc})") from None
    published = {cell: rec.get("runs") for cell, rec in contents.published["cells"].items()}
    if last != published:
        raise ReproError(f"{results}: {STATE}'s last round ran other runs than published.json records (a snakemake "
                         f"run after settle?): run banditrepro settle again, or remove {CSV} and {FOLDER}/")
    for name in found:
        contents.add(f"results/{name}", results / name)


# --- verify ----------------------------------------------------------------------------------------------


def rederive(src, fresh, store, result) -> None:
    """claims-settled.csv of ``src`` re-derived in ``fresh`` (the plan whose store ``store`` holds the re-derived
    summaries and tables, sharing/rederive.py) and compared; the other settle files named as not checked."""
    from banditrepro import settle_claims as sc
    from banditrepro.sharing.differences import text_difference

    found = [name for name in FILES if name in src.files]
    if not found:
        return
    for name in FIGURES:
        result.skip(name, "settle's figure of the sequences: images are not re-drawn (their bytes depend on the "
                          "fonts); what it shows is claims-settled.csv's")
    result.skip(REPORT, "rendered from claims-settled.csv and settle/state.json")
    if CSV not in src.files or STATE not in src.files:
        result.skip(CSV, f"{CSV} and {STATE} come together: one is missing")
        return
    state, config = state_of(src), src.config
    first, cap = config.get("runs"), config.get("max_runs")
    if (state.get("first_round"), state.get("max_runs")) != (first, cap):
        result.mismatch(f"{STATE}: started with first round {state.get('first_round')} and max runs "
                        f"{state.get('max_runs')}, not the runs ({first}) and max_runs ({cap}) published.json records")
    elif _last_runs(state) != fresh.cell_runs:
        result.mismatch(f"{STATE}: its last round ran other runs than published.json records (a run after settle?)")
    if STATE in result.reported:
        result.skip(CSV, f"not re-derived: {STATE} does not settle the published runs")
        return
    result.skip(STATE, "settle's record of its rounds, CPU and α split: its first round, cap and last round's runs "
                       "were checked against published.json, the rest is not re-derivable")
    try:
        traced = sc.trace_all(fresh.figures, store)
    except (ReproError, OSError, ValueError, KeyError) as exc:
        result.skip(CSV, f"cannot be re-derived here: {' '.join(str(exc).split())[:200]}")
        return
    alpha = sc.alphas(traced)
    if alpha != state["alpha"]:
        result.skip(CSV, f"the α split {STATE} holds (made at the first round) is not the split of these claims "
                         "at these runs: the verdicts cannot be re-derived with it")
        return
    ours = sc.settled_csv(traced, sc.decide_all(traced, alpha, sc.looks(first, cap)), alpha)
    theirs = src.read_bytes(src.results / CSV).decode("utf-8")
    if theirs != ours:
        result.mismatch(f"{CSV}: {text_difference(theirs, ours, '.csv')}")
        return
    result.checked.add(CSV)
    result.note(f"{CSV}: {len(traced)} claims' settled verdicts re-derived equal")
