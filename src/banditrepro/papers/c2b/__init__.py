"""The C2B paper (batched dueling bandits): its figure kinds and claim tests."""
