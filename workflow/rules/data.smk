# Stage 1: obtain raw files (mirrors first, checksum verified) and derive the instances.
# Shared by every config (data/ depends on the catalog only). Paths in params are relative to the working
# directory (`PLAN.rel`), so a moved project folder is up to date. A prepared file is named by what it derives
# from (its catalog entry, its raw sources' sha256, a fallback's name, a user file's sha256, the preparation
# code: banditrepro/workflow/names.py), so editing any of them prepares a new file and keeps the old one.


rule fetch_raw:
    output:
        LAYOUT.raw_file("{source}"),
    log:
        PLAN.data_log("fetch", "{source}"),
    wildcard_constraints:
        source=r"[^/]+/[^/]+",
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=30,
        mem_mb=500,
    params:
        mirrors=PLAN.mirror_args(),
        retries=config["download"]["retries"],
        timeout=config["download"]["timeout"],
        catalog=PLAN.rel(config["catalog"]),
    shell:
        "python -m banditrepro fetch {wildcards.source} --catalog {params.catalog} --dest {output} {params.mirrors}"
        " --retries {params.retries} --timeout {params.timeout} > {log} 2>&1"


checkpoint probe_dataset:
    # Optional datasets (network only, e.g. yahoo30): record whether they can be obtained instead of
    # failing the whole run; figures then mark their panels "requires network access".
    output:
        LAYOUT.status_file("{dataset}"),
    log:
        PLAN.data_log("probe", "{dataset}"),
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=30,
        mem_mb=500,
    params:
        mirrors=PLAN.mirror_args(),
        catalog=PLAN.rel(config["catalog"]),
        timeout=config["download"]["timeout"],
        raw=LAYOUT.raw,
    shell:
        "python -m banditrepro probe {wildcards.dataset} --out {output} --catalog {params.catalog} --raw-dir {params.raw}"
        " {params.mirrors} --retries 1 --timeout {params.timeout} > {log} 2>&1"


rule prepare_dataset:
    input:
        raw=get_raw_inputs,
        fallback=get_fallback_inputs,
        user_file=get_user_file,
    output:
        LAYOUT.prepared_pattern(),
    log:
        PLAN.data_log("prepare", "{dataset}-{key}"),
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=10,
        mem_mb=1000,
    params:
        catalog=PLAN.rel(config["catalog"]),
        raw=LAYOUT.raw,
        entry=lambda wc: PLAN.entry_arg(wc.dataset),
        inputs=lambda wc: PLAN.fallback_args(wc.dataset),
    shell:
        "python -m banditrepro prepare {wildcards.dataset} --catalog {params.catalog} --raw-dir {params.raw}"
        " {params.entry} {params.inputs} --out {output} > {log} 2>&1"
