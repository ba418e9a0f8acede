# Stage 2: one job per (dataset, horizon, algorithm + parameters, run) cell.


rule simulate:
    input:
        f"{PREPARED}/{{dataset}}.json",
    output:
        cell=f"{CELLS}/{{dataset}}/T{{horizon}}/{{algo}}/run{{run}}.npz",
        meta=f"{CELLS}/{{dataset}}/T{{horizon}}/{{algo}}/run{{run}}.json",
    params:
        base_seed=config["base_seed"],
    resources:
        runtime=lambda wc: 5 + int(wc.horizon) // 200_000,
        mem_mb=300,
    log:
        "logs/cells/{dataset}/T{horizon}/{algo}/run{run}.log",
    shell:
        "{CLI} simulate --algorithm '{wildcards.algo}' --dataset {wildcards.dataset}"
        " --prepared-dir {PREPARED} --horizon {wildcards.horizon} --seed {wildcards.run}"
        " --base-seed {params.base_seed} --out {output.cell} > {log} 2>&1"
