"""The Winner Stays paper: its figure kinds and claim tests."""
