"""Bounds on user inputs, shared by the CLI (checked while parsing) and the cell runner (checked again).

Standard library only, so ``banditrepro --help`` states them without importing numpy.
"""

# Largest horizon a cell accepts: 100x the papers' largest (T = 10^7, DP-TS-UCB §5.1). At the kernels'
# 10–100 ns per step that is minutes to hours per run; a typo such as 2^63 − 1 would run for centuries.
MAX_HORIZON = 10**9
MAX_HORIZON_TEXT = "10^9"
# Run index and base seed are SeedSequence keys and are stored as int64 in every cell file.
MAX_SEED = 2**63 - 1
