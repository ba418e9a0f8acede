"""Datasets: declared once in ``config/datasets.yaml``; fetched (mirrors first, checksummed) and derived
by code into ``data/prepared/<name>.json``."""
