"""The RO-Crate of a bundle (banditrepro/sharing/bundle.py): the run as a Workflow Run Crate
(https://w3id.org/ro/wfrun/workflow/0.5), built with rocrate from what ``bundle.collect`` read and hashed."""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from urllib.parse import quote

from banditrepro import ReproError
from banditrepro.sharing import settled
from banditrepro.sharing.received import CHECKSUMS

CRATE, README, WORKFLOW = "ro-crate-metadata.json", "README.md", "workflow/Snakefile"

# Workflow Run Crate 0.5 (the newest roc-validator 0.13 knows) and the two profiles it extends, on RO-Crate 1.1, the
# version they are written against: its context maps ComputationalWorkflow and FormalParameter to the bioschemas
# IRIs their shapes use (RO-Crate 1.3's, rocrate's default, maps them elsewhere).
RO_CRATE_VERSION = "1.1"
PROFILES = {"https://w3id.org/ro/wfrun/process/0.5": ("Process Run Crate", "0.5"),
            "https://w3id.org/ro/wfrun/workflow/0.5": ("Workflow Run Crate", "0.5"),
            "https://w3id.org/workflowhub/workflow-ro-crate/1.0": ("Workflow RO-Crate", "1.0")}
SHA256_TERM = "http://schema.org/sha256"  # RO-Crate 1.1's context has no checksum term; 1.2 and later map this
BIOSCHEMAS_WORKFLOW = "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"
# media types by suffix, fixed here: the system's mimetypes tables differ between machines, the bytes must not
MEDIA = {".csv": "text/csv", ".md": "text/markdown", ".tex": "text/x-tex", ".json": "application/json",
         ".png": "image/png", ".pdf": "application/pdf", ".npz": "application/zip", ".sha256": "text/plain"}
STACK = ("snakemake", "banditrepro", "numpy", "numba", "scipy", "pandas", "matplotlib")  # named in the crate


_why = lambda w: "; ".join(f"{s}: {lic}" for s, lic in w.sources)  # noqa: E731 (what a Withheld's line says)


def _run_name(c) -> str:
    papers = ", ".join(c.published["config"].get("papers") or [])
    return f"banditrepro run {c.published.get('results_dir', '')} ({papers})"


def derived_from(catalog, dataset: str, _seen=()) -> list[str]:
    """``dataset`` and every dataset it derives from (``dataset_inputs``: a fallback instance), in order."""
    if dataset in _seen:
        raise ReproError(f"dataset {dataset!r} derives from itself (catalog: fallback)")
    out = [dataset]
    for other in catalog.dataset_inputs(dataset):
        out += [d for d in derived_from(catalog, other, (*_seen, dataset)) if d not in out]
    return out


def raw_sources(catalog, dataset: str) -> list[str]:
    """Every raw source ``dataset`` derives from: where its licence and its right to be passed on come from."""
    return list(dict.fromkeys(s for d in derived_from(catalog, dataset) for s in catalog.raw_inputs(d)))


_one = lambda values: values[0] if len(values) == 1 else values  # noqa: E731 (a value as RO-Crate 1.1 wants it)


def crate_document(c, published_at: str) -> dict:
    """The run as a Workflow Run Crate, built with rocrate: the workflow (main entity) run by one CreateAction whose
    object is the config and the prepared data (withheld ones as contextual entities with their sha256 and
    licence) and whose result is what the run made; every file with its sha256, every dataset with its licence."""
    from importlib import metadata

    from rocrate.model.contextentity import ContextEntity
    from rocrate.model.softwareapplication import SoftwareApplication
    from rocrate.rocrate import ROCrate


    crate, members, config = ROCrate(version=RO_CRATE_VERSION), c.members, c.published["config"]
    crate.metadata.extra_terms["sha256"] = SHA256_TERM
    root = crate.root_dataset

    def entity(ident: str, props: dict, kind: str = "CreativeWork"):
        return crate.add(ContextEntity(crate, ident, properties={"@type": kind, **props}))

    def described(member: str, description: str, **props) -> dict:
        m = members[member]
        return {"name": PurePosixPath(member).name, "sha256": m.sha256, "contentSize": str(m.size), "description":
                description, "encodingFormat": MEDIA.get(PurePosixPath(member).suffix, "text/plain"),
                **{k: v for k, v in props.items() if v is not None}}

    def file(name: str, description: str, **props):
        return crate.add_file(dest_path=name, properties=described(name, description, **props))

    def parameter(ident: str, name: str, kind: str, example=None):  # ``example``: its value here, linked both ways
        p = crate.add_formal_parameter(name=name, additionalType=kind, identifier=ident, description=name)
        if example is not None:
            example["exampleOfWork"], p["workExample"] = p, example
        return p

    root["datePublished"] = published_at  # rocrate puts the clock's time here: the bytes must not depend on it
    root["name"] = _run_name(c)
    root["description"] = ("One run of the banditrepro workflow: its config, the prepared data it drew (those whose "
                           "raw sources may be passed on), " + ("its shards, " if c.with_shards else "") +
                           f"summaries, figures, tables, claims and reports; every file's sha256 is in {CHECKSUMS}")
    try:  # banditrepro's licence (its package metadata): what the results its code made are offered under
        licence = " ".join((metadata.metadata("banditrepro").get("License") or "").split()) or None
    except metadata.PackageNotFoundError:
        licence = None
    results_licence = entity(f"https://spdx.org/licenses/{licence}" if licence and " " not in licence else
                             "#licence-results", {"name": licence or "not stated", "description": "the licence of "
                             "banditrepro, whose code made these results (each prepared file: its sources')"})
    root["license"] = results_licence
    root["conformsTo"] = [entity(pid, {"name": name, "version": v}) for pid, (name, v) in PROFILES.items()]
    file(README, "what the bundle holds", about=root)

    # the software stack the run recorded (software.json: what made the results, not what bundles them)
    try:
        stack = json.loads(members["results/software.json"].path.read_text())
    except (KeyError, OSError, ValueError):
        stack = {}
    dists = stack.get("distributions") or {}
    apps = [(f"https://pypi.org/project/{n}/{dists[n]}/", n, dists[n], f"https://pypi.org/project/{n}/")
            for n in STACK if n in dists]
    if stack.get("python"):
        apps.insert(0, (f"https://www.python.org/downloads/release/python-{stack['python'].replace('.', '')}/",
                        stack.get("implementation") or "Python", stack["python"], "https://www.python.org/"))
    workflow = crate.add_workflow(dest_path=WORKFLOW, main=True, lang="snakemake", lang_version=stack.get("snakemake"),
                                  properties=described(WORKFLOW, "the project's Snakefile (its rules: workflow/rules/)",
                                                       name="banditrepro workflow", version=dists.get("banditrepro"),
                                                       conformsTo={"@id": BIOSCHEMAS_WORKFLOW}))
    if apps:
        workflow["softwareRequirements"] = [crate.add(SoftwareApplication(crate, i, properties={
            "name": n, "softwareVersion": v, "url": u})) for i, n, v, u in apps]

    # inputs: the config, the prepared data (withheld ones as contextual entities), probe verdicts
    values, data, inputs, outputs, made = [], [], [], [], []
    for key in sorted(config):
        value = config[key]  # numbers and text as they are, anything else as JSON text
        kind = {bool: "Boolean", int: "Integer", float: "Float", str: "Text"}.get(type(value), "Text")
        value = value if type(value) in (int, float, str) else json.dumps(value, sort_keys=True)
        values.append(entity(f"#config-{key}", {"name": key, "value": value}, "PropertyValue"))
        inputs.append(parameter(f"#param-config-{key}", key, kind, values[-1]))
    known = c.catalog.sources if c.catalog is not None else {}

    def source(rel: str):  # a raw source of the catalog (never in a bundle) and its licence
        src = known.get(rel, {})
        lic = entity(f"#licence-{quote(rel)}", {"name": str(src.get("licence", "none stated")),
                                                "description": f"the licence of raw source {rel} (its catalog entry)"})
        return entity(f"#source-{quote(rel)}", {"name": rel, "license": lic, "description": "a raw source",
                                                **{k: str(src[k]) for k in ("url", "sha256") if src.get(k)}}), lic

    withheld = {w.dataset: w for w in c.withheld}
    for dataset in sorted({*c.prepared, *withheld}):
        in_catalog = c.catalog is not None and dataset in c.catalog.datasets
        found = [source(rel) for rel in (raw_sources(c.catalog, dataset) if in_catalog else [])]
        props = {"license": _one([lic for _, lic in found] or [  # no source: made from its entry alone, or unknown
            entity("#licence-unknown", {"name": "not recorded"}) if dataset in withheld else results_licence])}
        props.update({"isBasedOn": _one([s for s, _ in found])} if found else {})
        if dataset in withheld:
            w = withheld[dataset]
            data.append(entity(f"#withheld-{dataset}", {"name": f"{dataset} (prepared, withheld)", "identifier": w.name,
                               "sha256": w.sha256, **props, "description": f"not in this bundle: a raw source's "
                               f"licence forbids passing it on ({_why(w)}); the sha256 of the file the run drew"}))
        else:
            data.append(file(c.prepared[dataset], f"the prepared instance {dataset}", **props))
        inputs.append(parameter(f"#param-dataset-{dataset}", f"dataset {dataset}", "File",
                                None if dataset in withheld else data[-1]))
        data[-1]["exampleOfWork"] = inputs[-1]  # a withheld value is no data entity: the parameter names no example
    data += [file(name, f"probe verdict of the optional dataset {d}") for d, name in sorted(c.status.items())]
    workflow["input"] = inputs

    # results: every published file, published.json, the store, the summaries, the shards
    made += [file(f"results/{c.rel(fixed, 'file')}", f"published, copied from results/{c.rel(e['from'], 'store')}")
             for fixed, e in sorted(c.published["files"].items())]
    made.append(file("results/published.json", "what the last publication put where, the config, every cell"))
    made.append(crate.add_dataset(dest_path="results/store", properties={
        "name": "store", "description": "every published file's store entry, named by what it derives from"}))
    made.append(crate.add_dataset(dest_path="results/summaries", properties={
        "name": "summaries", "description": "each cell's runs summarised (.npz) and its measured times (.json)"}))
    made[-1]["hasPart"] = [file(n, "a cell's summary" if n.endswith(".npz") else "a summary's measured times")
                           for n in sorted(members) if n.startswith("results/summaries/")]
    outputs.append(parameter("#param-summaries", "summaries", "Dataset", made[-1]))
    made += [file(f"results/{n}", d) for n, d in settled.DESCRIPTIONS.items() if f"results/{n}" in members]
    if c.with_shards:
        made.append(crate.add_dataset(dest_path="results/cells", properties={
            "name": "shards", "description": f"each cell's runs under its cell key (sha256 of each in {CHECKSUMS})"}))
        outputs.append(parameter("#param-shards", "shards", "Dataset", made[-1]))
    workflow["output"] = outputs
    crate.add_file(dest_path=CHECKSUMS, properties={"name": CHECKSUMS, "encodingFormat": "text/plain",
                   "description": "the sha256 of every other member (sha256sum -c) and of the withheld files"})
    root["mentions"] = crate.add_action(
        workflow, identifier=f"#run-{members['results/published.json'].sha256[:16]}", object=values + data,
        result=made, properties={"name": _run_name(c), "description": f"snakemake on the config published.json "
                                 f"records ({len(c.published['cells'])} cells); no time is recorded: the results are "
                                 "named by their inputs, not by their date"})
    return crate.metadata.generate()
