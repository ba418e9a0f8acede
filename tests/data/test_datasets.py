import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.datasets import derive
from banditrepro.datasets.catalog import load_catalog, load_prepared
from banditrepro.datasets.fetch import fetch, git_blob_of

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT.parent / "shared" / "data"
CATALOG = ROOT / "config" / "datasets.yaml"
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason="offline data mirror ../shared/data not present")


# ----------------------------------------------------------------------------------------- parsers
def test_kamishima_order_parser_and_win_counts():
    text = "4 1\n0 3 2 0 1\n0 3 0 1 2\n0 2 3 1\n"
    orders = derive.parse_kamishima_orders(text, n_items=4)
    assert orders == [[2, 0, 1], [0, 1, 2], [3, 1]]
    W = derive.win_counts_from_orders(orders, n_items=4)
    assert W[2, 0] == 1 and W[0, 2] == 1 and W[0, 1] == 2 and W[3, 1] == 1 and W[1, 3] == 0
    assert W.sum() == 3 + 3 + 1  # m(m-1)/2 pairs per order
    with pytest.raises(ReproError, match="line 2"):
        derive.parse_kamishima_orders("4 1\n0 3 2 2 1\n", n_items=4)


def test_sushi_matrix_rule_on_made_up_counts():
    W = np.array([[0, 5, 1], [3, 0, 0], [9, 0, 0]])  # comparisons: item0 18, item1 8, item2 10
    P, ids = derive.sushi_matrix(W, size=2)
    assert ids.tolist() == [2, 0]  # ascending comparison count among the two most compared
    assert P[1, 0] == pytest.approx(1 / 10) and P[0, 1] == pytest.approx(9 / 10)


def test_preflib_parser_and_readings():
    text = ("# NUMBER ALTERNATIVES: 3\n# ALTERNATIVE NAME 1: A\n# ALTERNATIVE NAME 2: B\n"
            "# ALTERNATIVE NAME 3: C\n5: 1,2\n3: 3\n2: 2,3,1\n")
    names, ballots = derive.parse_preflib_soi(text)
    assert names == {1: "A", 2: "B", 3: "C"} and ballots[0] == (5, [1, 2])
    toc = derive.pairwise_from_ballots(3, ballots, "toc")
    soi = derive.pairwise_from_ballots(3, ballots, "soi")
    assert toc[0, 2] == 5 and soi[0, 2] == 0  # A ranked, C unranked on the 5 ballots
    assert toc[2, 0] == 3 + 2 and soi[2, 0] == 2
    assert derive.ranked_by(3, ballots).tolist() == [7, 7, 5]
    P, kept, _ = derive.election_matrix(text, 2)
    assert kept == [1, 2] and P[0, 1] == pytest.approx(5 / 7)


def test_ranker_subset_keeps_winner_and_is_seeded():
    rng = np.random.default_rng(0)
    u = np.sort(rng.random(20))[::-1]
    P = (1 + u[:, None] - u[None, :]) / 2
    a = derive.ranker_subset(P, 6, seed=3)
    assert 0 in a and len(set(a)) == 6
    np.testing.assert_array_equal(a, derive.ranker_subset(P, 6, seed=3))
    with pytest.raises(ReproError, match="expected Condorcet winner 5"):
        derive.ranker_subset(P, 6, seed=3, winner=5)


# ------------------------------------------------------------------------------------------- fetch
def _source(tmp_path, content=b"1 2 3\n"):
    mirror = tmp_path / "mirror"
    (mirror / "x").mkdir(parents=True)
    (mirror / "x" / "f.txt").write_bytes(content)
    return mirror, hashlib.sha256(content).hexdigest()


def test_fetch_from_mirror_skips_missing_folders(tmp_path):
    mirror, sha = _source(tmp_path)
    dest = tmp_path / "raw" / "x" / "f.txt"
    where = fetch("x/f.txt", dest, url=None, sha256=sha, mirrors=[str(tmp_path / "nope"), str(mirror)])
    assert where.endswith("f.txt") and dest.read_bytes() == b"1 2 3\n"


def test_checksum_failure_leaves_no_file(tmp_path):
    mirror, _ = _source(tmp_path)
    dest = tmp_path / "raw" / "x" / "f.txt"
    with pytest.raises(ReproError, match="checksum mismatch"):
        fetch("x/f.txt", dest, url=None, sha256="0" * 64, mirrors=[str(mirror)])
    assert not dest.exists() and not list(dest.parent.glob("*.part"))


def test_corrupt_copy_in_one_mirror_falls_through_to_the_next(tmp_path):
    good, sha = _source(tmp_path, b"0.5 0.6\n0.4 0.5\n")
    bad = tmp_path / "bad"
    (bad / "x").mkdir(parents=True)
    (bad / "x" / "f.txt").write_bytes(b"0.5 0.7\n0.3 0.5\n")  # consistent but not the declared file
    dest = tmp_path / "raw" / "x" / "f.txt"
    logged = []
    where = fetch("x/f.txt", dest, url=None, sha256=sha, mirrors=[str(bad), str(good)], log=logged.append)
    assert where == str(good / "x" / "f.txt") and dest.read_bytes() == b"0.5 0.6\n0.4 0.5\n"
    assert len(logged) == 1 and "checksum mismatch" in logged[0] and str(bad) in logged[0]
    # both bad: one error naming every source tried, both hashes, and no file left behind
    dest.unlink()
    with pytest.raises(ReproError, match=r"cannot obtain x/f.txt: .*bad.*sha256 [0-9a-f]{64}, expected " + sha):
        fetch("x/f.txt", dest, url=None, sha256=sha, mirrors=[str(bad), str(bad)], log=logged.append)
    assert not dest.exists() and not list(dest.parent.glob(".*part"))


def test_corrupt_mirror_falls_through_to_the_upstream_url(tmp_path):
    bad = tmp_path / "bad"
    (bad / "x").mkdir(parents=True)
    (bad / "x" / "f.txt").write_bytes(b"tampered\n")
    upstream = tmp_path / "upstream.txt"
    upstream.write_bytes(b"genuine\n")
    dest = tmp_path / "raw" / "x" / "f.txt"
    where = fetch("x/f.txt", dest, url=upstream.as_uri(), sha256=hashlib.sha256(b"genuine\n").hexdigest(),
                  mirrors=[str(bad)], retries=1, log=lambda _: None)
    assert where == upstream.as_uri() and dest.read_bytes() == b"genuine\n"


def test_offline_without_mirror_is_a_clear_error(tmp_path):
    dest = tmp_path / "raw" / "f.txt"
    with pytest.raises(ReproError, match="cannot obtain x/f.txt"):
        fetch("x/f.txt", dest, url="http://127.0.0.1:9/none", sha256="0" * 64, mirrors=[], retries=1,
              timeout=2)
    assert not dest.exists()


def test_url_mirror_and_git_blob(tmp_path):
    mirror, _ = _source(tmp_path, b"hello\n")
    blob = git_blob_of(mirror / "x" / "f.txt")
    assert blob == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object` of "hello\n"
    dest = tmp_path / "raw" / "f.txt"
    fetch("x/f.txt", dest, url=None, git_blob=blob, mirrors=[mirror.as_uri()])
    assert dest.read_bytes() == b"hello\n"


# -------------------------------------------------------------------- real datasets (offline mirror)
EXPECTED = {  # Condorcet winners stated in ../shared/data/*/SOURCE.md
    "six-rankers": (6, 0, "ranker 0"),
    "sushi16": (16, 7, "toro (fatty tuna)"),
    "irish-meath12": (12, 2, "Noel Dempsey F.F."),
    "irish-dublin8": (8, 6, "Trevor Sargent G.P."),
    "mslr5": (5, 0, "ranker 0"),
}


@needs_mirror
@pytest.mark.parametrize("name", [*EXPECTED, "mslr30", "utility10", "bernoulli5"])
def test_prepared_datasets(tmp_path, name):
    cat = load_catalog(CATALOG)
    for rel in cat.raw_inputs(name):
        cat.fetch(rel, tmp_path / "raw", [str(MIRROR)])
    rec = cat.prepare(name, tmp_path / "raw", tmp_path / "prep")
    inst = load_prepared(tmp_path / "prep" / f"{name}.json")
    assert json.loads((tmp_path / "prep" / f"{name}.json").read_text())["name"] == name
    if name in EXPECTED:
        K, cw, label = EXPECTED[name]
        assert inst.n_arms == K and inst.condorcet_winner == cw and inst.labels[cw] == label
    if name == "mslr30":
        assert inst.n_arms == 30 and inst.labels[inst.condorcet_winner] == "ranker 109"
        assert rec["ranker_ids"] == sorted(rec["ranker_ids"]) and 109 in rec["ranker_ids"]
    if name == "bernoulli5":
        np.testing.assert_allclose(inst.means, [0.95, 0.75, 0.55, 0.35, 0.15])


@needs_mirror
def test_sushi_win_counts_rebuild_byte_identically():
    """Online the wins file is rebuilt from Kamishima's orders; its formatting must hash like the mirror's."""
    raw = (MIRROR / "sushi" / "sushi3b_pairwise_wins.txt").read_bytes()
    W = np.loadtxt(MIRROR / "sushi" / "sushi3b_pairwise_wins.txt", dtype=np.int64)
    assert derive.format_win_counts(W).encode() == raw


@needs_mirror
def test_dublin_soi_reading_changes_the_winner(tmp_path):
    text = (MIRROR / "irish" / "00001-00000001.soi").read_text()
    P, kept, names = derive.election_matrix(text, 8, "soi")
    from banditrepro.instances import condorcet_winner

    assert names[kept[condorcet_winner(P)]].startswith("Michael Kennedy")


def test_yelp_falls_back_to_labelled_substitute(tmp_path):
    cat = load_catalog(CATALOG)
    prep = tmp_path / "prep"
    prep.mkdir()
    P = np.array([[0.5, 0.7], [0.3, 0.5]])
    (prep / "sushi16.json").write_text(json.dumps({"matrix": P.tolist(), "labels": ["a", "b"]}))
    rec = cat.prepare("yelp", tmp_path, prep)
    assert rec["substitute"] is True and "substitute for Yelp" in rec["substitute_label"]


# ------------------------------------------------------------- raw files are re-verified by prepare
@needs_mirror
def test_prepare_refuses_a_consistently_edited_raw_file(tmp_path):
    """Issue 11 item 3: p01 0.55 -> 0.57 and p10 0.45 -> 0.43 still parse as a valid matrix."""
    import subprocess
    import sys

    raw = tmp_path / "raw"
    cat = load_catalog(CATALOG)
    cat.fetch("six-rankers/pref_arxiv.txt", raw, [str(MIRROR)])
    args = [sys.executable, "-m", "banditrepro", "prepare", "six-rankers", "--catalog", str(CATALOG),
            "--raw-dir", str(raw), "--prepared-dir", str(tmp_path / "prep")]
    assert subprocess.run(args, capture_output=True, text=True).returncode == 0
    path = raw / "six-rankers" / "pref_arxiv.txt"
    lines = path.read_text().splitlines(keepends=True)
    assert lines[0].startswith("0.50 0.55 ") and lines[1].startswith("0.45 0.50 ")
    lines[0] = lines[0].replace("0.50 0.55 ", "0.50 0.57 ", 1)
    lines[1] = lines[1].replace("0.45 0.50 ", "0.43 0.50 ", 1)
    path.write_text("".join(lines))
    from banditrepro.instances import load_matrix_text

    assert load_matrix_text(path).P[0, 1] == 0.57  # still a valid preference matrix: only the hash tells
    r = subprocess.run(args, capture_output=True, text=True)
    expected = cat.sources["six-rankers/pref_arxiv.txt"]["sha256"]
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "checksum" in r.stderr and str(path) in r.stderr and expected in r.stderr and actual in r.stderr


def test_prepare_names_a_missing_raw_file(tmp_path):
    with pytest.raises(ReproError, match="raw file .*pref_arxiv.txt missing; run: banditrepro fetch"):
        load_catalog(CATALOG).prepare("six-rankers", tmp_path / "raw", tmp_path / "prep")
    assert not (tmp_path / "prep" / "six-rankers.json").exists()


@pytest.mark.parametrize("content", [b"{", b"\xff\xfe", b'{"kind": "duel"}', b'{"kind": "duel", "matrix": "x", '
                                     b'"labels": [], "name": "n"}'])
def test_unreadable_prepared_file_is_named(tmp_path, content):
    (tmp_path / "d.json").write_bytes(content)
    with pytest.raises(ReproError, match="d.json"):
        load_prepared(tmp_path / "d.json")


@needs_mirror
def test_fetch_command_skips_a_mirror_with_a_tampered_copy(tmp_path, capsys):
    """Two mirror folders: the first holds a consistently edited pref_arxiv.txt, the second the real one."""
    from banditrepro.cli import main

    rel = "six-rankers/pref_arxiv.txt"
    bad = tmp_path / "bad-mirror" / rel
    bad.parent.mkdir(parents=True)
    bad.write_text((MIRROR / rel).read_text().replace("0.50 0.55 ", "0.50 0.57 ", 1))
    dest = tmp_path / "raw" / rel
    argv = ["fetch", rel, "--catalog", str(CATALOG), "--dest", str(dest), "--mirror", str(tmp_path / "bad-mirror"),
            "--mirror", str(MIRROR), "--retries", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "checksum mismatch" in out and f"verified, from {MIRROR / rel}" in out
    assert dest.read_bytes() == (MIRROR / rel).read_bytes()
