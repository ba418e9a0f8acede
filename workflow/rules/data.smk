# Stage 1: obtain raw files (mirrors first, checksum verified) and derive the instances.


rule fetch_raw:
    output:
        f"{RAW}/{{source}}",
    wildcard_constraints:
        source=r"[^/]+/[^/]+",
    params:
        mirrors=mirror_args(),
        retries=config["download"]["retries"],
        timeout=config["download"]["timeout"],
        catalog=_root_path(config["catalog"]),
    resources:
        runtime=30,
        mem_mb=500,
    log:
        "logs/fetch/{source}.log",
    shell:
        "{CLI} fetch {wildcards.source} --catalog {params.catalog} --raw-dir {RAW} {params.mirrors}"
        " --retries {params.retries} --timeout {params.timeout} > {log} 2>&1"


checkpoint probe_dataset:
    # Optional datasets (network only, e.g. yahoo30): record whether they can be obtained instead of
    # failing the whole run; figures then mark their panels "requires network access".
    output:
        "data/status/{dataset}.json",
    params:
        mirrors=mirror_args(),
        catalog=_root_path(config["catalog"]),
        timeout=config["download"]["timeout"],
    resources:
        runtime=30,
        mem_mb=500,
    log:
        "logs/probe/{dataset}.log",
    shell:
        "{CLI} probe {wildcards.dataset} --out {output} --catalog {params.catalog} --raw-dir {RAW}"
        " {params.mirrors} --retries 1 --timeout {params.timeout} > {log} 2>&1"


rule prepare_dataset:
    input:
        raw=lambda wc: [f"{RAW}/{s}" for s in CATALOG.raw_inputs(wc.dataset)],
        fallback=lambda wc: [f"{PREPARED}/{d}.json" for d in CATALOG.dataset_inputs(wc.dataset)],
    output:
        f"{PREPARED}/{{dataset}}.json",
    params:
        catalog=_root_path(config["catalog"]),
    resources:
        runtime=10,
        mem_mb=1000,
    log:
        "logs/prepare/{dataset}.log",
    shell:
        "{CLI} prepare {wildcards.dataset} --catalog {params.catalog} --raw-dir {RAW}"
        " --prepared-dir {PREPARED} > {log} 2>&1"
