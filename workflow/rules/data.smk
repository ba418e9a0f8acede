# Stage 1: obtain raw files (mirrors first, checksum verified) and derive the instances.
# Shared by every config (data/ depends on the catalog only). Paths in params are relative to the working
# directory (`rel`), so a moved project folder is up to date; `spec` is the catalog entry a job draws
# from, so editing a dataset's derivation or a source's checksum reruns exactly that preparation.


rule fetch_raw:
    output:
        f"{RAW}/{{source}}",
    log:
        "logs/fetch/{source}.log",
    wildcard_constraints:
        source=r"[^/]+/[^/]+",
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=30,
        mem_mb=500,
    params:
        mirrors=mirror_args(),
        retries=config["download"]["retries"],
        timeout=config["download"]["timeout"],
        catalog=rel(config["catalog"]),
        spec=lambda wc: digest(CATALOG.sources.get(wc.source)),
    shell:
        "python -m banditrepro fetch {wildcards.source} --catalog {params.catalog} --dest {output} {params.mirrors}"
        " --retries {params.retries} --timeout {params.timeout} > {log} 2>&1"


checkpoint probe_dataset:
    # Optional datasets (network only, e.g. yahoo30): record whether they can be obtained instead of
    # failing the whole run; figures then mark their panels "requires network access".
    output:
        "data/status/{dataset}.json",
    log:
        "logs/probe/{dataset}.log",
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=30,
        mem_mb=500,
    params:
        mirrors=mirror_args(),
        catalog=rel(config["catalog"]),
        timeout=config["download"]["timeout"],
        raw=RAW,
    shell:
        "python -m banditrepro probe {wildcards.dataset} --out {output} --catalog {params.catalog} --raw-dir {params.raw}"
        " {params.mirrors} --retries 1 --timeout {params.timeout} > {log} 2>&1"


rule prepare_dataset:
    input:
        raw=lambda wc: [f"{RAW}/{s}" for s in CATALOG.raw_inputs(wc.dataset)],
        fallback=lambda wc: [
            f"{PREPARED}/{d}.json" for d in CATALOG.dataset_inputs(wc.dataset)
        ],
        user_file=lambda wc: [f for f in [declared_file(wc.dataset)] if f],
    output:
        f"{PREPARED}/{{dataset}}.json",
    log:
        "logs/prepare/{dataset}.log",
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=10,
        mem_mb=1000,
    params:
        catalog=rel(config["catalog"]),
        raw=RAW,
        spec=lambda wc: dataset_spec(wc.dataset),
        entry=lambda wc: entry_arg(wc.dataset),
    shell:
        "python -m banditrepro prepare {wildcards.dataset} --catalog {params.catalog} --raw-dir {params.raw}"
        " {params.entry} --out {output} > {log} 2>&1"
