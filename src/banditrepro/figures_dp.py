"""Figure kinds of the DP-TS-UCB paper (registered into banditrepro.figures.DRAWERS)."""
