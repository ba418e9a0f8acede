"""banditrepro: reference reproduction of three bandit papers (C2B, Winner Stays, DP-TS-UCB).

Heavy modules (numba kernels, pandas, matplotlib) are imported lazily so that one simulation cell
starts fast; importing this package imports nothing but the standard library.
"""

__version__ = "0.1.0"


class ReproError(Exception):
    """Bad input or unavailable data: the CLI prints the message on one line, without a traceback."""
