"""Claim tests of the DP-TS-UCB paper (registered with banditrepro.claims.test)."""
