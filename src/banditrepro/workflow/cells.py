"""A cell's key, ``<dataset>/T<horizon>/<algorithm id>``, and its parts, for the workflow (spelled and parsed in
banditrepro/layout.py, beside the paths it names)."""

from __future__ import annotations

from banditrepro.layout import cell_key, split_key

__all__ = ["algorithm_of", "cell_key", "dataset_of", "kernel_name", "kernel_of", "split_key"]


def dataset_of(key: str) -> str:
    return key.partition("/")[0]


def algorithm_of(key: str) -> str:
    """The algorithm id a cell runs (``rucb+alpha=0.6`` of ``sushi16/T100000/rucb+alpha=0.6``)."""
    return key.rpartition("/")[2]


def kernel_of(key: str) -> str:
    """The algorithm a cell runs, without its parameters (``rucb`` of ``sushi16/T100000/rucb+alpha=0.6``)."""
    return algorithm_of(key).partition("+")[0]


def kernel_name(algo_id: str) -> str:
    """An algorithm id's algorithm, without its parameters (``rucb`` of ``rucb+alpha=0.6``)."""
    return algo_id.partition("+")[0]
