"""(being written)"""

from __future__ import annotations


def add_arguments(parser) -> None:
    pass


def run(args) -> int:
    raise NotImplementedError
