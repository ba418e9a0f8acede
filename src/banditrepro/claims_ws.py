"""Claim tests of the Winner Stays paper (registered with banditrepro.claims.test)."""
