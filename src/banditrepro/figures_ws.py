"""Figure kinds of the Winner Stays paper (registered into banditrepro.figures.DRAWERS)."""
