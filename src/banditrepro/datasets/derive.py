"""Derivations from raw sources to preference matrices (each rule is stated in the source's SOURCE.md)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np

from banditrepro import ReproError
from banditrepro.instances import condorcet_winner, draw_utilities, utility_preferences


# --------------------------------------------------------------------------------------------- sushi
def parse_kamishima_orders(text: str, n_items: int = 100) -> list[list[int]]:
    """Orders of Kamishima's ``sushi3b.5000.10.order``: a header line ``<n_items> 1``, then one line per
    user, ``0 <m> i_1 … i_m`` with the most preferred item first."""
    orders = []
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ReproError("sushi orders: empty file")
    for lineno, tok in enumerate(lines[1:], start=2):
        try:
            m = int(tok[1])
            items = [int(x) for x in tok[2:]]
        except (IndexError, ValueError):
            raise ReproError(f"sushi orders: line {lineno} is not '0 <m> items…'") from None
        if len(items) != m or len(set(items)) != m or not all(0 <= i < n_items for i in items):
            raise ReproError(f"sushi orders: line {lineno} declares {m} distinct items in [0, {n_items})")
        orders.append(items)
    return orders


def win_counts_from_orders(orders: list[list[int]], n_items: int = 100) -> np.ndarray:
    """W[a, b] = number of orders that place a above b (SOURCE.md rule 1)."""
    W = np.zeros((n_items, n_items), dtype=np.int64)
    for order in orders:
        idx = np.asarray(order)
        for pos, a in enumerate(idx[:-1]):
            W[a, idx[pos + 1:]] += 1
    return W


def format_win_counts(W: np.ndarray) -> str:
    return "\n".join(" ".join(str(int(x)) for x in row) for row in W) + "\n"


def sushi_archive_to_wins(archive: Path, dest: Path, member: str = "sushi3b.5000.10.order") -> None:
    """Kamishima's ``sushi3.tgz`` -> the win-count file (verified afterwards against its sha256)."""
    with tarfile.open(archive) as tf:
        names = [n for n in tf.getnames() if n.endswith(member)]
        if not names:
            raise ReproError(f"sushi archive has no member {member}")
        text = tf.extractfile(names[0]).read().decode("ascii")
    dest.write_text(format_win_counts(win_counts_from_orders(parse_kamishima_orders(text))))


def sushi_matrix(W: np.ndarray, size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Komiyama's rule (SOURCE.md 2–4): the ``size`` most-compared items, rows ordered by ascending
    comparison count; p_ab = W_ab / (W_ab + W_ba), 1/2 if never compared. Returns (P, item ids)."""
    n_comp = (W + W.T).sum(axis=1)
    top = np.argsort(-n_comp, kind="stable")[:size]
    if size < len(n_comp) and n_comp[top[-1]] == np.sort(n_comp)[::-1][size]:
        raise ReproError("sushi: tie at the cut of the most-compared items")
    ids = top[np.argsort(n_comp[top], kind="stable")]
    Wk = W[np.ix_(ids, ids)].astype(float)
    tot = Wk + Wk.T
    P = np.where(tot > 0, Wk / np.where(tot > 0, tot, 1), 0.5)
    np.fill_diagonal(P, 0.5)
    return P, ids


# ------------------------------------------------------------------------------------------- PrefLib
def parse_preflib_soi(text: str) -> tuple[dict[int, str], list[tuple[int, list[int]]]]:
    """PrefLib strict-order-incomplete file -> ({id: name}, [(count, ranking of 1-based ids)])."""
    names, ballots = {}, []
    for ln in text.splitlines():
        ln = ln.strip()
        if not ln:
            continue
        if ln.startswith("#"):
            if ln.startswith("# ALTERNATIVE NAME"):
                key, _, name = ln[len("# ALTERNATIVE NAME"):].partition(":")
                names[int(key)] = name.strip()
            continue
        count, sep, rest = ln.partition(":")
        if not sep:
            raise ReproError(f"preflib: bad data line {ln[:40]!r}")
        ranking = [int(x) for x in rest.replace("{", "").replace("}", "").split(",") if x.strip()]
        ballots.append((int(count), ranking))
    if not names or not ballots:
        raise ReproError("preflib: no alternatives or no ballots found")
    return names, ballots


def pairwise_from_ballots(n: int, ballots, reading: str = "toc") -> np.ndarray:
    """W[i, j] = ballots preferring i to j (0-based). "toc": a ranked candidate beats every unranked one;
    "soi": only pairs ranked on the same ballot count."""
    if reading not in ("toc", "soi"):
        raise ReproError(f"preflib: reading must be 'toc' or 'soi', got {reading!r}")
    W = np.zeros((n, n), dtype=np.int64)
    for count, ranking in ballots:
        r = [c - 1 for c in ranking]
        unranked = np.setdiff1d(np.arange(n), r)
        for pos, a in enumerate(r):
            W[a, r[pos + 1:]] += count
            if reading == "toc":
                W[a, unranked] += count
    return W


def ranked_by(n: int, ballots) -> np.ndarray:
    """Number of voters who ranked each candidate (0-based)."""
    voters = np.zeros(n, dtype=np.int64)
    for count, ranking in ballots:
        voters[np.asarray(ranking) - 1] += count
    return voters


def preference_from_wins(W: np.ndarray) -> np.ndarray:
    W = W.astype(float)
    tot = W + W.T
    P = np.where(tot > 0, W / np.where(tot > 0, tot, 1), 0.5)
    np.fill_diagonal(P, 0.5)
    return P


def election_matrix(text: str, size: int, reading: str = "toc") -> tuple[np.ndarray, list[int], dict]:
    """Pairwise-majority matrix of an election, keeping the ``size`` candidates ranked by the most voters
    (SOURCE.md rule: drop the least-ranked down to the size). Returns (P, kept 1-based ids, names)."""
    names, ballots = parse_preflib_soi(text)
    n = len(names)
    if not 2 <= size <= n:
        raise ReproError(f"preflib: size must be in [2, {n}], got {size}")
    voters = ranked_by(n, ballots)
    keep = np.sort(np.argsort(-voters, kind="stable")[:size])
    W = pairwise_from_ballots(n, ballots, reading)
    P = preference_from_wins(W[np.ix_(keep, keep)])
    return P, [int(k) + 1 for k in keep], names


# ------------------------------------------------------------------------------------- ranker subsets
def ranker_subset(P: np.ndarray, size: int, seed: int, winner: int | None = None) -> np.ndarray:
    """Sorted indices of ``size`` rankers: the Condorcet winner of the full matrix plus ``size − 1`` drawn
    uniformly without replacement with ``default_rng(seed)`` (drawn once, not per run)."""
    cw = condorcet_winner(P)
    if winner is not None and cw != winner:
        raise ReproError(f"ranker subset: expected Condorcet winner {winner}, the matrix has {cw}")
    if cw is None:
        raise ReproError("ranker subset: the full matrix has no Condorcet winner")
    others = np.setdiff1d(np.arange(P.shape[0]), [cw])
    drawn = np.random.default_rng(seed).choice(others, size - 1, replace=False)
    return np.sort(np.concatenate([[cw], drawn]))


# ----------------------------------------------------------------------------------- synthetic model
def utility_model(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One fixed draw of the total-order utility model (docs/decisions.md#ws-simulated-data): u ~ U(0,1)
    sorted decreasing, p_ij = (1 + u_i − u_j)/2, with ``default_rng(seed)``. The per-run model is
    ``instances.UtilityModel``."""
    u = draw_utilities(n, np.random.default_rng(seed))
    return utility_preferences(u), u


def read_text_matrix(path: Path, skiprows: int = 0) -> np.ndarray:
    return np.loadtxt(io.StringIO(Path(path).read_text()), skiprows=skiprows, ndmin=2)


# ------------------------------------------------------------------------------------ user matrices
def read_matrix_file(path: Path, name: str) -> np.ndarray:
    """A user's K×K preference matrix: ``.npy`` (numpy.save) or whitespace-separated text (``#`` comments).
    Only read here; ``PreferenceMatrix`` validates it."""
    path = Path(path)
    if not path.is_file():
        raise ReproError(f"{name}: matrix file not found: {path}")
    try:
        P = np.load(path, allow_pickle=False) if path.suffix == ".npy" else np.loadtxt(path, ndmin=2)
        return np.asarray(P, dtype=np.float64)
    except (ValueError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ReproError(f"{name}: cannot read a matrix from {path}: {first}") from None
