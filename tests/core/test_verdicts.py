"""The verdict rules of banditrepro.verdicts: a difference inside its interval is never a win or a loss."""

from __future__ import annotations

import numpy as np
import pytest

from banditrepro import verdicts as vd


def test_decide_uses_the_interval_not_the_point():
    iv = vd.Interval(0.9, 0.8, 1.05)  # point below 1, interval straddles it
    assert vd.decide(iv, 1.0, "below") == vd.INCONCLUSIVE
    assert vd.decide(vd.Interval(0.9, 0.8, 0.99), 1.0, "below") == vd.REPRODUCED
    assert vd.decide(vd.Interval(1.1, 1.01, 1.2), 1.0, "below") == vd.NOT_REPRODUCED
    assert vd.decide(vd.Interval(1.1, 1.01, 1.2), 1.0, "above") == vd.REPRODUCED
    assert vd.decide_within(vd.Interval(1.2, 1.1, 1.4), 1 / 1.5, 1.5) == vd.REPRODUCED
    assert vd.decide_within(vd.Interval(1.45, 1.3, 1.6), 1 / 1.5, 1.5) == vd.INCONCLUSIVE
    assert vd.decide_within(vd.Interval(2.0, 1.8, 2.2), 1 / 1.5, 1.5) == vd.NOT_REPRODUCED


def test_combine_and_settle():
    R, N, I = vd.REPRODUCED, vd.NOT_REPRODUCED, vd.INCONCLUSIVE
    assert vd.combine([R, R]) == R and vd.combine([R, I]) == I and vd.combine([I, N]) == N
    assert vd.combine([vd.NOT_RUN]) == vd.NOT_RUN
    # half-width 0.1 at distance 0.05 from the boundary: ≈ 4× the runs
    assert vd.runs_to_settle(vd.Interval(0.95, 0.85, 1.05), 1.0, 20) == 80
    # a ratio interval [0.072, 4.8e299] (a tiny matrix at T = 500) names no run count instead of overflowing
    assert vd.runs_to_settle(vd.Interval(1.5, 0.072, 4.8e299), 1.0, 3) is None
    assert "80 runs" in vd.settle_note(vd.Interval(0.95, 0.85, 1.05), 1.0, 20)


def test_paired_ratio_interval_is_seeded_and_covers_a_true_gap():
    rng = np.random.default_rng(0)
    a = 100 + 10 * rng.standard_normal(40)
    b = a * 1.2 + rng.standard_normal(40)  # paired: common noise cancels
    iv = vd.ratio_ci(a, b, seed=7)
    assert iv.low < 1 / 1.2 < iv.high < 1 and iv == vd.ratio_ci(a, b, seed=7)
    unpaired = vd.ratio_ci(a, rng.permutation(b), seed=7)  # the same values without the pairing: wider
    assert unpaired.high - unpaired.low > iv.high - iv.low


def test_outcome_rejects_old_verdict_names():
    for old in ("pass", "fail", "not-run"):
        with pytest.raises(ValueError):
            vd.Outcome("t", "m", old)
