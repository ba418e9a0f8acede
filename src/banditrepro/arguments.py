"""What a command-line value may be (banditrepro.cli): each check one line naming the argument and the value."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from banditrepro.limits import MAX_HORIZON, MAX_HORIZON_TEXT, MAX_SEED


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (argparse prints the whole usage block first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def _one_line(text) -> str:
    return " ".join(str(text).split())


def _integer(lo: int, hi: int, hi_text: str | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {hi_text or hi}], got {text!r}")
        return value

    return parse


def _positive_float(hi: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0 < value <= hi:  # also rejects nan
            raise argparse.ArgumentTypeError(f"must be a number in (0, {hi:g}], got {text!r}")
        return value

    return parse


def _output(*suffixes: str):
    """An output file path: not an existing folder, its parent not a file, with one of ``suffixes``."""

    def parse(text: str) -> str:
        path = Path(text)
        if not text or path.is_dir() or text.endswith(("/", "\\")):
            raise argparse.ArgumentTypeError(f"expected a file path, got the folder {text!r}")
        if suffixes and path.suffix not in suffixes:
            raise argparse.ArgumentTypeError(f"expected a {' or '.join(suffixes)} file, got {text!r}")
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise argparse.ArgumentTypeError(f"{str(parent)!r} is not a folder, in {text!r}")
                break
        return text

    return parse


_SEED = _integer(0, MAX_SEED, "2^63-1")
_HORIZON = _integer(1, MAX_HORIZON, MAX_HORIZON_TEXT)
