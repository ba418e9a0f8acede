"""The DP-TS-UCB paper: its figure kinds, claim tests and privacy accounting."""
