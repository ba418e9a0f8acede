"""The built-in algorithms: name -> module of ``banditrepro.algorithms`` holding its ``SPECS`` (its own module,
so that ``banditrepro.plugins`` can refuse a plugin with a built-in name without importing the registry)."""

MODULES = {
    # dueling bandits (C2B paper, Winner Stays benchmarks)
    "rucb": "rucb",
    "rmed1": "rmed",
    "rmed2": "rmed",
    "btm": "btm",
    "c2b": "c2b",
    "c2b-kl": "c2b",
    "scomp2": "scomp",
    "pcomp": "scomp",
    # Winner Stays paper
    "ws-w": "winner_stays",
    "ws-s": "winner_stays",
    "qsa": "qsa",
    "if": "interleaved_filter",
    "ccb": "ccb",
    "scb": "scb",
    # private multi-armed bandits (DP-TS-UCB paper)
    "dp-ts-ucb": "dp_ts_ucb",
    "ts-gaussian": "ts_gaussian",
    "m-ts-gaussian": "ts_gaussian",
    "dp-se": "dp_se",
    "lazy-dp-ts": "lazy_dp_ts",
    "anytime-lazy-ucb": "anytime_lazy_ucb",
}
