"""No module of the package holds more than 400 lines (issue 44, "smaller rooms"): a module that grows past it
holds more than one thing, and is split by what it holds, not cut in half."""

from __future__ import annotations

from tests.core.test_imports import modules

MAX_LINES = 400


def _lines() -> dict[str, int]:
    return {name: len(path.read_text().splitlines()) for name, path in modules().items()}


def test_no_module_over_400_lines():
    long = {name: n for name, n in _lines().items() if n > MAX_LINES}
    assert not long, f"split by what they hold: {long}"


def test_the_count_reads_real_modules():
    lines = _lines()
    # the check would pass vacuously on an empty or mis-rooted walk: it must see the package's big modules
    assert len(lines) > 100 and max(lines.values()) > 300, lines
