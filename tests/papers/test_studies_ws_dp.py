"""Issue 10 §2–§3: the WS-S β study (ws-beta kind, argmin interval, ws_beta_advice) and the privacy–regret
frontier (dp-frontier kind, dp_frontier_dominated)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.atomic import write_npz
from banditrepro.claims import TESTS, Context
from banditrepro.figures import DRAWERS, build_figure
from banditrepro.manifest import load_manifest
from banditrepro.papers.dp_ts_ucb import privacy as pv
from banditrepro.papers.dp_ts_ucb.studies import frontier_table
from banditrepro.papers.winner_stays.figures import beta_table
from banditrepro.verdicts import argmin_interval
from tests.helpers import layout_at, summary_file

ROOT = Path(__file__).resolve().parents[2]
BETAS = [1.05, 1.1, 1.2, 1.3, 1.5, 2.0, 3.0, 5.0, 10.0]


def _summary(path, finals, metrics=("regret",)):
    finals = np.asarray(finals, dtype=float)
    grid = np.array([0, 50, 100])
    arrays = {"grid": grid, "runs": np.arange(finals.size), "n_runs": np.int64(finals.size),
              "horizon": np.int64(grid[-1]),
              "n_batches": np.zeros(finals.size, np.int64)}
    for m in metrics:
        mean = np.array([0.0, 0.5, 1.0]) * finals.mean()
        arrays.update({f"{m}_final": finals, f"{m}_mean": mean, f"{m}_lo": mean * 0.9, f"{m}_hi": mean * 1.1})
    write_npz(path, arrays)


# --- manifest ---------------------------------------------------------------------------------------


def test_manifests_of_the_studies():
    ws = {f.id: f for f in load_manifest(ROOT / "config/figures/winner-stays.yaml", papers=["winner-stays"])}
    beta = ws["beta-sensitivity"]
    assert beta.kind == "ws-beta" and beta.kind in DRAWERS
    assert [r.params["beta"] for r in beta.panels[0].algorithms] == BETAS
    claims = {c["id"]: c["test"] for c in beta.claims}
    assert claims["beta-advice-1.1"] == {"kind": "ws_beta_advice", "advised": 1.1, "near": [1.05, 1.2], "max_arms": 20}
    import yaml

    raw = yaml.safe_load((ROOT / "config/figures/winner-stays.yaml").read_text())
    assert raw["winner-stays"]["figures"]["beta-sensitivity"]["runs"] == 200
    dp = {f.id: f for f in load_manifest(ROOT / "config/figures/dp-ts-ucb.yaml", papers=["dp-ts-ucb"])}
    fr = dp["regret-vs-epsilon"]
    assert fr.kind == "dp-frontier" and fr.panels[0].horizon == 10**6 and fr.extra["delta"] == 1e-5
    refs = {r.key: r for r in fr.panels[0].algorithms}
    for name in ("dp-se", "lazy-dp-ts", "anytime-lazy-ucb"):
        assert sorted(r.params["epsilon"] for r in refs.values() if r.name == name) == [0.1, 0.25, 0.5, 1, 2, 4, 8]
    assert sorted(r.params["alpha"] for r in refs.values() if r.name == "dp-ts-ucb") == [0, 0.25, 0.5, 0.75, 1]
    assert all("reconstructed" in r.label for r in refs.values() if r.name == "anytime-lazy-ucb")
    assert "RECONSTRUCTED" in fr.caption and "δ = 0" in fr.caption
    # the paper's operating points are the cells of §5.3 / E.2
    e2 = {r.key: r.id for r in dp["eps-dp-alpha0"].panels[0].algorithms}
    assert refs["mts-b1"].id == e2["mts"] and refs["dp-se-0.5"].id == e2["dp-se"]
    assert set(fr.extra["operating_points"]) <= set(refs)


# --- ws-beta: the argmin and its interval -----------------------------------------------------------


def test_argmin_interval_is_seeded_and_covers_ties():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 1, (200, 1))
    clear = np.column_stack([10 + noise, 5 + noise, 8 + noise]) + rng.normal(0, 0.1, (200, 3))
    best, lo, hi, share = argmin_interval(clear, seed=3)
    assert (best, lo, hi) == (1, 1, 1) and share[1] == 1.0
    x = 5 + rng.normal(0, 3, 200)
    tied = np.column_stack([10 + noise[:, 0], x, rng.permutation(x)])  # lines 1 and 2: equal sample means
    best, lo, hi, share = argmin_interval(tied, seed=3)
    assert (lo, hi) == (1, 2) and 0.2 < share[1] < 0.8 and share.sum() == pytest.approx(1.0)
    assert argmin_interval(tied, seed=3)[3].tolist() == share.tolist()  # same seed, same interval


WS_MINI = """
wst:
  title: t
  figures:
    b:
      title: b
      kind: ws-beta
      options: {panel_metrics: [strong_regret_binary, strong_regret_binary]}
      algorithms:
%s
      panels:
        - {dataset: small, horizon: 100}
        - {dataset: large, horizon: 100}
      claims:
        - {id: advice, text: advice, test: {kind: ws_beta_advice, advised: 1.1, near: [1.05, 1.2], max_arms: 20}}
"""


def _ws(tmp_path, means: dict[str, list[float]], arms=(5, 30)):
    algos = "\n".join(f"        - {{name: ws-s, key: b{b:g}, params: {{beta: {b}}}}}" for b in BETAS)
    (tmp_path / "m.yaml").write_text(WS_MINI % algos)
    fig = {f.id: f for f in load_manifest(tmp_path / "m.yaml", papers=["wst"])}["b"]
    prepared = tmp_path / "prepared"
    prepared.mkdir(exist_ok=True)
    rng = np.random.default_rng(1)
    for ds, K in zip(("small", "large"), arms):
        (prepared / f"{ds}.json").write_text(json.dumps({"matrix": np.full((K, K), 0.5).tolist()}))
        noise = rng.normal(0, 10, 200)
        for b, m in zip(BETAS, means[ds]):
            ref = next(r for r in fig.panels[0].algorithms if r.params["beta"] == b)
            _summary(summary_file(ds, 100, ref.id, tmp_path / "summaries"), m + noise + rng.normal(0, 2, 200),
                     metrics=("strong_regret_binary",))
    table = beta_table(fig, layout_at(tmp_path))
    return fig, table, Context(fig, table, layout_at(tmp_path))


U_AT_11 = [300, 100, 200, 300, 400, 500, 600, 700, 800]   # minimum at β = 1.1
U_AT_2 = [900, 800, 700, 600, 500, 100, 300, 600, 900]    # minimum at β = 2
TIE_11_13 = [300, 100, 200, 100, 400, 500, 600, 700, 800]  # β = 1.1 and 1.3 tied


def test_beta_table_and_figure(tmp_path):
    fig, table, _ = _ws(tmp_path, {"small": U_AT_11, "large": U_AT_2})
    assert table.beta.tolist() == BETAS * 2
    p0, p1 = table[table.panel_index == 0], table[table.panel_index == 1]
    assert p0.minimiser_beta.unique().tolist() == [1.1] and p1.minimiser_beta.unique().tolist() == [2.0]
    assert p0[p0.is_minimiser].beta.item() == 1.1 and p0.argmin_share.sum() == pytest.approx(1.0)
    out = tmp_path / "out"
    build_figure(fig, layout_at(tmp_path), out / "b.png", out / "b.pdf", out / "b.csv")
    assert (out / "b.png").stat().st_size > 1000 and "minimiser_ci_high" in (out / "b.csv").read_text()


def test_beta_advice_verdicts(tmp_path):
    advice = TESTS["ws_beta_advice"]
    kw = {"advised": 1.1, "near": [1.05, 1.2], "max_arms": 20}
    # the 30-arm panel is outside the advice's scope: only the K = 5 panel decides
    out = advice(_ws(tmp_path, {"small": U_AT_11, "large": U_AT_2})[2], **kw)
    assert out.verdict == "reproduced" and "large" not in out.measured and (out.ci_low, out.ci_high) == (1.1, 1.1)
    out = advice(_ws(tmp_path, {"small": U_AT_2, "large": U_AT_11})[2], **kw)
    assert out.verdict == "not reproduced" and "β* 2 [2, 2] (contradicted)" in out.measured
    out = advice(_ws(tmp_path, {"small": TIE_11_13, "large": U_AT_2})[2], **kw)
    assert out.verdict == "inconclusive" and "[1.1, 1.3]" in out.measured
    out = advice(_ws(tmp_path, {"small": U_AT_2, "large": U_AT_2}, arms=(30, 30))[2], **kw)
    assert out.verdict == "not run"
    with pytest.raises(ReproError, match="outside near"):
        advice(_ws(tmp_path, {"small": U_AT_11, "large": U_AT_2})[2], advised=1.5, near=[1.05, 1.2])


# --- dp-frontier -------------------------------------------------------------------------------------

DP_MINI = """
dpt:
  title: t
  figures:
    f:
      title: f
      kind: dp-frontier
      options: {delta: 1.0e-5, operating_points: [dp1, mts]}
      algorithms:
        - {name: dp-ts-ucb, key: dp0, params: {alpha: 0.0}}
        - {name: dp-ts-ucb, key: dp1, params: {alpha: 1.0}}
        - {name: m-ts-gaussian, key: mts, params: {b: 1, c: 1.18}}
        - {name: dp-se, key: se1, params: {epsilon: 1.0}}
        - {name: dp-se, key: se8, params: {epsilon: 8.0}}
      panels:
        - {dataset: bernoulli5, horizon: 1000000}
"""


def _dp(tmp_path, means: dict[str, float]):
    (tmp_path / "d.yaml").write_text(DP_MINI)
    fig = {f.id: f for f in load_manifest(tmp_path / "d.yaml", papers=["dpt"])}["f"]
    rng = np.random.default_rng(2)
    noise = rng.normal(0, 20, 30)
    for ref in fig.panels[0].algorithms:
        _summary(summary_file("bernoulli5", 10**6, ref.id, tmp_path / "summaries"),
                 means[ref.key] + noise + rng.normal(0, 2, 30))
    table = frontier_table(fig, layout_at(tmp_path))
    return fig, table, Context(fig, table, layout_at(tmp_path))


def test_frontier_table_reads_privacy_py(tmp_path):
    fig, table, _ = _dp(tmp_path, {"dp0": 500, "dp1": 3000, "mts": 400, "se1": 2000, "se8": 1000})
    t = table.set_index("algorithm")
    T = 10**6
    assert t.loc["dp1", "eta"] == pytest.approx(pv.eta_dp_ts_ucb(1.0, T))
    assert t.loc["mts", "eta"] == pytest.approx(pv.eta_m_ts_gaussian(T, 1, 1.18))
    for k in ("dp0", "dp1", "mts"):
        assert pv.delta_of_epsilon(t.loc[k, "eps_at_delta"], t.loc[k, "eta"]) == pytest.approx(1e-5, rel=1e-6)
        assert t.loc[k, "delta"] == 1e-5 and t.loc[k, "dp_kind"] == "GDP"
    # DP-TS-UCB(α = 1) is √(2 c0)-GDP: ε ≈ 15.8 at δ = 1e-5, independent of T
    assert t.loc["dp1", "eps_at_delta"] == pytest.approx(15.8, abs=0.1)
    assert t.loc["se8", "eps_at_delta"] == 8.0 and t.loc["se8", "delta"] == 0.0
    assert t.loc["se8", "dp_kind"] == "pure ε-DP"
    assert t.operating_point.tolist() == [False, True, True, False, False]
    out = tmp_path / "out"
    build_figure(fig, layout_at(tmp_path), out / "f.png", out / "f.pdf", out / "f.csv")
    assert (out / "f.pdf").stat().st_size > 1000


def test_frontier_dominated_verdicts(tmp_path):
    dom = TESTS["dp_frontier_dominated"]
    # dp1 (ε ≈ 15.8) is beaten by se8 (ε = 8); mts (ε in the thousands) by se1: both dominated
    ctx = _dp(tmp_path, {"dp0": 500, "dp1": 3000, "mts": 4000, "se1": 2000, "se8": 1000})[2]
    out = dom(ctx, points=["dp1", "mts"], by=["se1", "se8"])
    assert out.verdict == "reproduced" and out.ci_high < 1
    # dp1 better than every ε-DP line with smaller ε: not dominated
    ctx = _dp(tmp_path, {"dp0": 500, "dp1": 300, "mts": 4000, "se1": 2000, "se8": 1000})[2]
    out = dom(ctx, points=["dp1", "mts"], by=["se1", "se8"])
    assert out.verdict == "not reproduced" and "(contradicted)" in out.measured and "(holds)" in out.measured
    # equal regret up to independent noise: inconclusive
    ctx = _dp(tmp_path, {"dp0": 500, "dp1": 1000, "mts": 4000, "se1": 2000, "se8": 1000})[2]
    assert dom(ctx, points=["dp1"], by=["se8"]).verdict == "inconclusive"
    # a point with no line of smaller ε cannot be dominated by the grid (ε = 1 vs a grid at ε = 8)
    out = dom(ctx, points=["se1"], by=["se8"])
    assert out.verdict == "not reproduced" and "no line of the grid has ε ≤ 1" in out.measured
