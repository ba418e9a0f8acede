"""A cell's key, ``<dataset>/T<horizon>/<algorithm id>``, and its parts: spelled here once for the workflow."""

from __future__ import annotations


def cell_key(dataset: str, horizon: int, algo: str) -> str:
    return f"{dataset}/T{horizon}/{algo}"


def split_key(key: str) -> tuple[str, int, str]:
    dataset, horizon, algo = key.split("/")
    return dataset, int(horizon[1:]), algo


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
