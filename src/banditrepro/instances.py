"""Problem instances: validated preference matrices (dueling) and Bernoulli arms (multi-armed), and the
generative total-order utility model, which draws a fresh preference matrix per run.

All are immutable; invalid input raises ``ReproError`` with a one-line message that names the problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from banditrepro import ReproError

TOL = 1e-9


@dataclass(frozen=True)
class PreferenceMatrix:
    """P[i, j] = Pr(arm i beats arm j); square, diagonal 1/2, P + Pᵀ = 1, with a Condorcet winner."""

    P: np.ndarray
    labels: tuple[str, ...] = ()
    name: str = "matrix"
    require_condorcet: bool = True
    kind: str = field(default="duel", init=False)

    def __post_init__(self):
        P = np.array(self.P, dtype=np.float64)
        validate_preference_matrix(P, self.name, self.require_condorcet)
        P.setflags(write=False)
        object.__setattr__(self, "P", P)
        labels = tuple(self.labels) or tuple(f"arm {i}" for i in range(P.shape[0]))
        if len(labels) != P.shape[0]:
            raise ReproError(f"{self.name}: {len(labels)} labels for {P.shape[0]} arms")
        object.__setattr__(self, "labels", labels)

    @property
    def n_arms(self) -> int:
        return self.P.shape[0]

    @property
    def condorcet_winner(self) -> int | None:
        return condorcet_winner(self.P)

    @property
    def gaps(self) -> np.ndarray:
        """Δ_j = P[a*, j] − 1/2 (zero for the Condorcet winner)."""
        cw = self.condorcet_winner
        if cw is None:
            raise ReproError(f"{self.name}: no Condorcet winner, gaps undefined")
        return self.P[cw] - 0.5

    @property
    def min_winning_probability(self) -> float:
        """p = min over p_ij > 1/2 (Winner Stays' constant)."""
        return float(self.P[self.P > 0.5].min())


@dataclass(frozen=True)
class BernoulliArms:
    """K Bernoulli arms with means in [0, 1]."""

    means: np.ndarray
    labels: tuple[str, ...] = ()
    name: str = "bernoulli"
    kind: str = field(default="mab", init=False)

    def __post_init__(self):
        mu = np.array(self.means, dtype=np.float64)
        if mu.ndim != 1 or mu.size < 2:
            raise ReproError(f"{self.name}: need a 1-D list of at least 2 arm means, got shape {mu.shape}")
        if not np.all(np.isfinite(mu)) or mu.min() < 0 or mu.max() > 1:
            raise ReproError(f"{self.name}: Bernoulli means must lie in [0, 1], got {mu.tolist()}")
        mu.setflags(write=False)
        object.__setattr__(self, "means", mu)
        labels = tuple(self.labels) or tuple(f"arm {i} (μ={m:g})" for i, m in enumerate(mu))
        object.__setattr__(self, "labels", labels)

    @property
    def n_arms(self) -> int:
        return self.means.size

    @property
    def gaps(self) -> np.ndarray:
        return self.means.max() - self.means


def draw_utilities(n: int, rng: np.random.Generator) -> np.ndarray:
    """u ~ U(0,1)^n sorted decreasing (docs/decisions.md#ws-simulated-data): arm 0 is the best."""
    return np.sort(rng.random(n))[::-1]


def utility_preferences(u: np.ndarray) -> np.ndarray:
    """Total-order utility model: p_ij = (1 + u_i − u_j)/2."""
    return (1 + u[:, None] - u[None, :]) / 2


@dataclass(frozen=True)
class UtilityModel:
    """Generative dueling data: every run draws its own utilities u (``draw``, from a stream the caller derives
    from the run, see ``banditrepro.seeds.instance_seed_sequence``) and duels on p_ij = (1 + u_i − u_j)/2.
    The drawn matrix keeps the model's ``name``, so the algorithm's stream of a run is that of a fixed
    instance of the same name."""

    n: int
    name: str = "utility"
    kind: str = field(default="duel", init=False)
    generative: bool = field(default=True, init=False)

    def __post_init__(self):
        if int(self.n) != self.n or self.n < 2:
            raise ReproError(f"{self.name}: the utility model needs n >= 2 arms, got {self.n}")

    @property
    def n_arms(self) -> int:
        return int(self.n)

    def draw(self, seq: np.random.SeedSequence) -> tuple[PreferenceMatrix, np.ndarray]:
        """(this run's matrix, its utilities u, decreasing)."""
        u = draw_utilities(self.n_arms, np.random.default_rng(seq))
        labels = tuple(f"item {i} (u={x:.3f})" for i, x in enumerate(u))
        return PreferenceMatrix(utility_preferences(u), labels=labels, name=self.name), u


def condorcet_winner(P: np.ndarray) -> int | None:
    """Index of the arm that beats every other with probability > 1/2, or None."""
    K = P.shape[0]
    wins = (P > 0.5).sum(axis=1)
    hits = np.flatnonzero(wins == K - 1)
    return int(hits[0]) if hits.size else None


def validate_preference_matrix(P: np.ndarray, name: str = "matrix", require_condorcet: bool = True) -> None:
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ReproError(f"{name}: preference matrix must be square, got shape {P.shape}")
    if P.shape[0] < 2:
        raise ReproError(f"{name}: need at least 2 arms, got {P.shape[0]}")
    if not np.all(np.isfinite(P)):
        raise ReproError(f"{name}: preference matrix has non-finite entries")
    if P.min() < 0 or P.max() > 1:
        raise ReproError(f"{name}: entries must be probabilities in [0, 1]")
    if np.abs(np.diag(P) - 0.5).max() > TOL:
        raise ReproError(f"{name}: diagonal must be 1/2")
    asym = np.abs(P + P.T - 1).max()
    if asym > TOL:
        i, j = np.unravel_index(np.abs(P + P.T - 1).argmax(), P.shape)
        raise ReproError(f"{name}: P + Pᵀ must equal 1 (off by {asym:.3g} at [{i}, {j}])")
    if require_condorcet and condorcet_winner(P) is None:
        raise ReproError(f"{name}: no Condorcet winner (no arm beats all others with probability > 1/2)")


def load_matrix_text(path: str | Path, name: str | None = None) -> PreferenceMatrix:
    """Read a whitespace-separated K×K text matrix (what ``numpy.savetxt`` writes; ``#`` starts a comment line).

    Whatever the file holds, the outcome is a validated matrix or a one-line ``ReproError`` naming the file.
    """
    path = Path(path)
    # the name keys the random stream (UTF-8 bytes): a file name that is not valid UTF-8 gets U+FFFD
    name = name or path.stem.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if not path.exists():
        raise ReproError(f"{name}: matrix file not found: {path}")
    if not path.is_file():
        raise ReproError(f"{name}: matrix file {path} is not a regular file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReproError(f"{name}: cannot read matrix file {path} ({exc.strerror})") from None
    try:
        if b"\0" in data:
            raise UnicodeError
        text = data.decode("utf-8")
    except UnicodeError:
        raise ReproError(f"{name}: {path} is not a text matrix (binary content)") from None
    rows = [ln.split() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not rows:
        raise ReproError(f"{name}: matrix file {path} has no rows")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ReproError(f"{name}: ragged matrix file {path} (row lengths {sorted(widths)[:5]})")
    if len(rows) != len(rows[0]):
        raise ReproError(f"{name}: preference matrix in {path} must be square, got {len(rows)}×{len(rows[0])}")
    try:
        P = np.array([[float(x) for x in r] for r in rows], dtype=np.float64)
    except ValueError:
        bad = next(x for r in rows for x in r if not _is_number(x))
        raise ReproError(f"{name}: non-numeric entry {bad[:40]!r} in {path}") from None
    return PreferenceMatrix(P, name=name)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False
