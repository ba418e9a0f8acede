"""``banditrepro bundle`` (banditrepro/sharing/bundle.py): the same results give the same bytes (twice, and from a
`cp -a` clone whose every file was touched); every member is in checksums.sha256 with its sha256; ``--no-shards``
drops the shards, not the summaries; a dataset whose raw source may not be passed on is absent and its sha256
listed; sources.open_source reads the bundle as it reads the folder; the crate is a valid Workflow Run Crate
(roc-validator, offline); bad input is one line and exit status 2."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from banditrepro import ReproError
from banditrepro.datasets.catalog import load_catalog
from banditrepro.probes import dataset_ran
from banditrepro.sharing import bundle
from banditrepro.sharing.sources import open_source
from tests.sharing.conftest import RESULTS, run_bundle
from tests.workflow.common import ROOT

WITHHELD = {"sushi16", "mslr5", "yelp"}  # what config/datasets.yaml forbids passing on (docs/data.md, Bundles)


def members(archive: Path) -> dict[str, bytes]:
    """Every regular file of the archive: name -> bytes."""
    with tarfile.open(archive, "r:gz") as tar:
        return {i.name: tar.extractfile(i).read() for i in tar.getmembers() if i.isfile()}


def listed(checksums: bytes) -> dict[str, str]:
    """The sha256sum lines of checksums.sha256 (not its comments): name -> sha256."""
    out = {}
    for line in checksums.decode().splitlines():
        if not line.startswith("#"):
            sha, _, name = line.partition("  ")
            out[name] = sha
    return out


def graph(files: dict[str, bytes]) -> dict[str, dict]:
    return {e["@id"]: e for e in json.loads(files[bundle.CRATE])["@graph"]}


# --- units ------------------------------------------------------------------------------------------------


CATALOG = """
sources:
  free/a.txt: {sha256: "00", licence: MIT}
  closed/b.txt: {sha256: "11", licence: "no redistribution", redistribute: false}
  odd/c.txt: {sha256: "22", licence: x, redistribute: "maybe"}
datasets:
  free: {derivation: matrix_text, source: free/a.txt}
  closed: {derivation: matrix_text, source: closed/b.txt}
  stand-in: {derivation: matrix_file, path: null, fallback: closed}
  chain: {derivation: matrix_file, path: null, fallback: stand-in}
  generated: {derivation: bernoulli, means: [0.9, 0.1]}
  odd: {derivation: matrix_text, source: odd/c.txt}
  lost: {derivation: matrix_text, source: nowhere/d.txt}
"""


def test_a_dataset_is_withheld_when_any_source_it_derives_from_forbids_it(tmp_path):
    (tmp_path / "datasets.yaml").write_text(CATALOG)
    cat = load_catalog(tmp_path / "datasets.yaml", {"mine": {"path": "mine.txt"}}, root=tmp_path)
    closed = [("closed/b.txt", "no redistribution")]
    assert bundle.withholding_sources(cat, "free") == bundle.withholding_sources(cat, "generated") == []
    assert bundle.withholding_sources(cat, "closed") == closed
    assert bundle.withholding_sources(cat, "stand-in") == bundle.withholding_sources(cat, "chain") == closed
    # fails closed: what the catalog cannot vouch for is not passed on; a flag that is no boolean is refused
    assert bundle.withholding_sources(cat, "lost") == [("nowhere/d.txt", "unknown (not in the catalog)")]
    assert bundle.withholding_sources(cat, "mine") == [("mine.txt", "a matrix file of the config (no licence "
                                                                    "recorded)")]
    assert bundle.withholding_sources(cat, "undeclared") == bundle.withholding_sources(None, "free") != []
    with pytest.raises(ReproError, match="redistribute must be true or false"):
        bundle.withholding_sources(cat, "odd")


def test_the_projects_catalog_withholds_what_docs_data_md_says():
    cat = load_catalog(ROOT / "config/datasets.yaml")
    assert {d for d in cat.datasets if bundle.withholding_sources(cat, d)} == WITHHELD
    section = (ROOT / "docs/data.md").read_text().split("## Bundles: which datasets are passed on")[1]
    rows = [ln.split("|") for ln in section.splitlines() if ln.startswith("| `")]
    said = {name.strip(" `") for row in rows if "**no**" in row[2] for name in row[1].split(",")}
    assert said == WITHHELD
    assert {name.strip(" `") for row in rows for name in row[1].split(",")} == set(cat.datasets)


def test_published_json_is_read_not_trusted():
    contents = bundle.Contents({"results_dir": "results/test"}, None)
    assert contents.rel("results/test/store/claims/0123456789abcdef/claims.csv", "file") == \
        "store/claims/0123456789abcdef/claims.csv"
    for path in ("/etc/passwd", "results/test/../../etc/passwd", "results/other/claims.csv", "results/test"):
        with pytest.raises(ReproError, match="published.json"):
            contents.rel(path, "file")
    # version 2 (workflow/publish.py): paths relative to the results folder
    contents = bundle.Contents({"results_dir": "results/test", "version": 2}, None)
    entry = "store/claims/0123456789abcdef/claims.csv"
    assert contents.rel(entry, "file") == entry
    for path in ("/etc/passwd", "../x/claims.csv", "store/../../x", ""):
        with pytest.raises(ReproError, match="published.json"):
            contents.rel(path, "file")
    keys = {"key": "0" * 16, "summary": "1" * 16, "data": "2" * 16}
    assert bundle._cell_parts("mslr5/T500/scb+tie_margin=0.1", keys) == ("mslr5", 500, "scb+tie_margin=0.1")
    for cell, rec in [("../x/T5/ws-s", keys), ("mslr5/T0/ws-s", keys), ("mslr5/T5/..", keys), ("mslr5/T5", keys),
                      ("mslr5/T5/ws-s", {**keys, "key": "../../x"})]:
        with pytest.raises(ReproError, match="malformed"):
            bundle._cell_parts(cell, rec)


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "old").mkdir()
    (tmp_path / "old/published.json").write_text('{"files": {}}')
    out = str(tmp_path / "out.tar.gz")
    for args, text in [(["-o", "x.zip"], "expected a .tar.gz or .tgz file, got 'x.zip'"),
                       ([str(tmp_path / "empty"), "-o", out], "no published.json, not a finished run (run snakemake"),
                       ([str(tmp_path / "old"), "-o", out], "records no files, config or cells"),
                       ([str(tmp_path / "missing"), "-o", out], "no such results folder")]:
        r = run_bundle(tmp_path, *args)
        lines = r.stderr.splitlines()
        assert r.returncode == 2 and len(lines) == 1 and text in lines[0] and not r.stdout, (args, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "old"]  # nothing written, not even a part


# --- a finished run ---------------------------------------------------------------------------------------


@pytest.mark.workflow
def test_the_same_results_give_the_same_bytes(reference, project, bundled, tmp_path):
    archive, _ = bundled
    again = tmp_path / "again.tgz"
    assert run_bundle(reference, str(reference / RESULTS), "-o", str(again)).returncode == 0  # absolute, this time
    assert again.read_bytes() == archive.read_bytes()
    later = time.time() + 86400
    for path in project.rglob("*"):  # a `cp -a` clone elsewhere, every file and folder touched
        os.utime(path, (later, later), follow_symlinks=False)
    clone = tmp_path / "clone.tar.gz"
    assert run_bundle(project, RESULTS, "-o", str(clone)).returncode == 0
    assert clone.read_bytes() == archive.read_bytes()

    raw = archive.read_bytes()
    assert raw[:4] == b"\x1f\x8b\x08\x00" and raw[4:8] == bytes(4)  # gzip: no file name, no time
    with tarfile.open(archive, "r:gz") as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == sorted(i.name for i in infos)
    assert {(i.mtime, i.uid, i.gid, i.uname, i.gname) for i in infos} == {(0, 0, 0, "", "")}
    assert {i.mode for i in infos if i.isfile()} == {0o644} and {i.mode for i in infos if i.isdir()} == {0o755}
    assert all(i.isfile() or i.isdir() for i in infos)
    # the one date: SOURCE_DATE_EPOCH, in the crate and on every member
    dated = tmp_path / "dated.tgz"
    assert run_bundle(reference, RESULTS, "-o", str(dated), env={"SOURCE_DATE_EPOCH": "86400"}).returncode == 0
    assert graph(members(dated))["./"]["datePublished"] == "1970-01-02T00:00:00+00:00"
    with tarfile.open(dated, "r:gz") as tar:
        assert {i.mtime for i in tar.getmembers()} == {86400}


@pytest.mark.workflow
def test_every_member_is_listed_with_its_sha256_and_no_shards_keeps_the_summaries(reference, bundled, tmp_path):
    archive, printed = bundled
    files = members(archive)
    sums = listed(files[bundle.CHECKSUMS])
    assert set(sums) == set(files) - {bundle.CHECKSUMS}
    assert {n: hashlib.sha256(b).hexdigest() for n, b in files.items() if n in sums} == sums
    results = reference / RESULTS
    published = json.loads((results / "published.json").read_text())
    for fixed, entry in published["files"].items():  # each published file, and the store entry it was copied from
        # (paths relative to the results folder: workflow/publish.py)
        assert files[f"results/{fixed}"] == files[f"results/{entry['from']}"] == (results / fixed).read_bytes()
    on_disk = {sub: {f"results/{p.relative_to(results).as_posix()}" for p in (results / sub).rglob("*") if p.is_file()}
               for sub in ("cells", "summaries")}
    shards = {n for n in files if n.startswith("results/cells/")}
    summaries = {n for n in files if n.startswith("results/summaries/")}
    assert shards == on_disk["cells"] and summaries == on_disk["summaries"]
    assert f"({len([n for n in shards if n.endswith('.npz')])} shards, {len(published['cells'])} summaries" in printed
    assert {"README.md", "workflow/Snakefile", "results/published.json", "results/claims.csv"} <= set(files)
    if shutil.which("sha256sum"):  # what a receiver without banditrepro runs
        unpacked = tmp_path / "unpacked"
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(unpacked, filter="data")
        check = subprocess.run(["sha256sum", "--strict", "-c", bundle.CHECKSUMS], cwd=unpacked, capture_output=True)
        assert check.returncode == 0, check.stdout[-2000:]

    lean = tmp_path / "lean.tar.gz"
    r = run_bundle(reference, RESULTS, "-o", str(lean), "--no-shards")
    assert r.returncode == 0 and "no shards (--no-shards)" in r.stdout
    with tarfile.open(lean, "r:gz") as tar:
        assert not [n for n in tar.getnames() if n.startswith("results/cells")]
    kept = members(lean)
    assert {n for n in kept if n.startswith("results/summaries/")} == summaries
    assert set(listed(kept[bundle.CHECKSUMS])) == set(kept) - {bundle.CHECKSUMS} == set(sums) - shards
    assert "results/cells/" not in graph(kept) and "results/cells/" in graph(files)


@pytest.mark.workflow
def test_a_withheld_dataset_is_absent_and_its_sha256_listed(reference, bundled):
    archive, printed = bundled
    files = members(archive)
    published = json.loads(files["results/published.json"])
    drawn = {cell.split("/")[0]: rec["data"] for cell, rec in published["cells"].items()}
    assert WITHHELD <= set(drawn) and set(drawn) - WITHHELD  # the narrowed config draws both kinds
    comments = [ln for ln in files[bundle.CHECKSUMS].decode().splitlines() if ln.startswith("# ")]
    crate = graph(files)
    for dataset, key in sorted(drawn.items()):
        name = f"data/prepared/{dataset}/{key}.json"
        sha = hashlib.sha256((reference / name).read_bytes()).hexdigest()
        if dataset in WITHHELD:
            assert name not in files and f"# {sha}  {name}" in comments
            entity = crate[f"#withheld-{dataset}"]
            assert entity["sha256"] == sha and entity["identifier"] == name
            licence = crate[entity["license"]["@id"]]["name"]
            assert licence.startswith(("research use only", "none stated")) and f"{dataset} (" in printed
        else:
            assert files[name] == (reference / name).read_bytes() and crate[name]["sha256"] == sha
    assert not [n for n in files if n.startswith("data/raw")]


@pytest.mark.workflow
def test_sources_opens_the_bundle_and_finds_the_folders_shards(reference, bundled):
    archive, _ = bundled
    with open_source(archive) as got, open_source(reference / RESULTS, data_dir=reference / "data") as folder:
        assert got.bundle_sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
        assert [s.rel for s in got.shards()] == [s.rel for s in folder.shards()] != []
        assert all(s.path.read_bytes() == (folder.results / s.rel).read_bytes() for s in got.shards())
        assert got.config == folder.config and got.cells == folder.cells


@pytest.mark.workflow
def test_a_member_changed_while_it_is_bundled_writes_nothing(project, tmp_path):
    contents = bundle.collect(project / RESULTS, project)
    claims = project / RESULTS / "claims.csv"
    text = claims.read_bytes()
    claims.write_bytes(text[:-2] + (b"0" if text[-2:-1] != b"0" else b"1") + text[-1:])  # same size, other bytes
    out = tmp_path / "out" / "run.tar.gz"
    with pytest.raises(ReproError, match="changed while it was bundled"):
        bundle.write_bundle(contents, out, *bundle.bundle_date(None))
    assert list(out.parent.iterdir()) == []  # not even its temporary file


@pytest.mark.workflow
def test_an_optional_dataset_its_probe_found_unavailable_is_left_out_but_its_verdict(project):
    """As yahoo30 offline: planned, in published.json, never prepared nor computed; its probe verdict says why."""
    status = project / "data/status/utility10.json"
    status.parent.mkdir(exist_ok=True)
    status.write_text('{"available": false, "dataset": "utility10", "reason": "requires network access"}\n')
    for sub in ("summaries", "cells"):
        shutil.rmtree(project / RESULTS / sub / "utility10")
    for path in (project / "data/prepared/utility10").iterdir():
        path.unlink()
    contents = bundle.collect(project / RESULTS, project)
    assert contents.unrun == ["utility10"] and contents.status == {"utility10": "data/status/utility10.json"}
    assert [n for n in contents.members if "/utility10/" in n or "utility10." in n] == ["data/status/utility10.json"]
    assert "not run (unavailable): utility10" in contents.summary("x.tgz", 0, "0" * 64)
    # one reader of probe verdicts (banditrepro/probes.py): not probed is not run, a malformed verdict an error
    assert not dataset_ran(project / "data/status/none.json", optional=True)
    assert dataset_ran(project / "data/status/none.json", optional=False)
    (project / "data/status/odd.json").write_text("[1]")
    with pytest.raises(ReproError, match="not a probe verdict"):
        dataset_ran(project / "data/status/odd.json", optional=True)


# --- the crate --------------------------------------------------------------------------------------------

CONTEXT = "https://w3id.org/ro/crate/1.1/context"


def offline_context_cache(folder: Path) -> Path:
    """roc-validator's HTTP cache, warmed from local bytes: this machine has no network, and the validator reads
    the crate's @context (RO-Crate 1.1's) through that cache, only from it when offline. The document is the
    RO-Crate context rocrate ships (1.3's) with the four bioschemas terms mapped as 1.1 maps them (the only terms
    the two differ in that a bundle's crate uses), and without "sha256", which 1.1 lacks and the crate defines."""
    import requests_cache
    import rocrate
    from requests.adapters import HTTPAdapter
    from urllib3.response import HTTPResponse

    doc = json.loads((Path(rocrate.__file__).parent / "data/ro-crate.jsonld").read_text())
    cw = "https://bioschemas.org/ComputationalWorkflow"
    doc["@id"] = CONTEXT
    doc["@context"].update({"ComputationalWorkflow": cw, "input": f"{cw}#input", "output": f"{cw}#output",
                            "FormalParameter": "https://bioschemas.org/FormalParameter"})
    del doc["@context"]["sha256"]
    body = json.dumps(doc).encode()

    class Local(HTTPAdapter):
        def send(self, request, **kwargs):
            assert request.url == CONTEXT, f"the validator asked for {request.url}"
            return self.build_response(request, HTTPResponse(
                body=io.BytesIO(body), status=200, headers={"Content-Type": "application/ld+json"},
                preload_content=False, request_url=request.url))

    with requests_cache.CachedSession(str(folder), backend="sqlite", expire_after=-1) as session:
        session.mount("https://", Local())
        assert session.get(CONTEXT).status_code == 200
    return folder


@pytest.mark.workflow
def test_the_crate_validates_as_a_workflow_run_crate(bundled, tmp_path):
    pytest.importorskip("rocrate_validator")
    from rocrate_validator import models, services

    newest = max((p for p in services.get_profiles() if p.token == "workflow-run-crate"),
                 key=lambda p: tuple(int(x) for x in p.version.split(".")))
    assert newest.uri in bundle.PROFILES  # the newest Workflow Run Crate the validator knows
    archive, _ = bundled
    crate_dir = tmp_path / "crate"
    with tarfile.open(archive, "r:gz") as tar:
        tar.extractall(crate_dir, filter="data")
    settings = models.ValidationSettings(rocrate_uri=str(crate_dir), profile_identifier=newest.identifier,
                                         offline=True, cache_path=offline_context_cache(tmp_path / "http-cache"),
                                         requirement_severity="REQUIRED")
    result = services.validate(settings)
    issues = [f"{i.severity.name} {i.check.identifier}: {i.message}" for i in result.get_issues()]
    assert result.passed() and not issues, issues

    files = members(archive)
    crate = graph(files)
    root = crate["./"]
    assert {c["@id"] for c in root["conformsTo"]} == set(bundle.PROFILES)
    workflow = crate[root["mainEntity"]["@id"]]
    assert workflow["@id"] == bundle.WORKFLOW and "ComputationalWorkflow" in workflow["@type"]
    action = crate[root["mentions"]["@id"]]
    assert action["@type"] == "CreateAction" and action["instrument"]["@id"] == bundle.WORKFLOW
    objects = {o["@id"] for o in action["object"]}
    assert {"#config-base_seed", "#withheld-sushi16"} <= objects
    assert {"results/claims.csv", "results/summaries/", "results/cells/"} <= {r["@id"] for r in action["result"]}
    hashed = [e for e in crate.values() if "File" in e["@type"] and "sha256" in e]  # rocrate percent-encodes @ids
    assert {unquote(e["@id"]) for e in hashed} == set(files) - {bundle.CHECKSUMS, bundle.CRATE} - {
        n for n in files if n.startswith(("results/cells/", "results/store/"))}  # those two: folders, in checksums
    assert all(hashlib.sha256(files[unquote(e["@id"])]).hexdigest() == e["sha256"] for e in hashed)
    stack = json.loads(files["results/software.json"])
    versions = {crate[s["@id"]]["name"]: crate[s["@id"]]["softwareVersion"] for s in workflow["softwareRequirements"]}
    assert versions["numpy"] == stack["distributions"]["numpy"] and versions["snakemake"] == stack["snakemake"]
