# Stage 2: one job per (dataset, horizon, algorithm + parameters, run) cell.
#
# The job runs inside the Snakemake process (`run:`; the default profile sets force-use-threads), so a
# cell costs its simulation, not a Python start-up, numpy/numba import and kernel cache load (~1 s
# each). Kernels release the GIL (nogil), so --cores N cells really run in parallel. On a cluster each
# job is its own process anyway.


rule simulate:
    input:
        f"{PREPARED}/{{dataset}}.json",
    output:
        cell=f"{CELLS}/{{dataset}}/T{{horizon}}/{{algo}}/run{{run}}.npz",
        meta=f"{CELLS}/{{dataset}}/T{{horizon}}/{{algo}}/run{{run}}.json",
    log:
        "logs/cells/{dataset}/T{horizon}/{algo}/run{run}.log",
    resources:
        runtime=lambda wc: 5 + int(wc.horizon) // 200_000,
        mem_mb=300,
    params:
        base_seed=config["base_seed"],
    run:
        simulate_job(wildcards, input, output, params, log)
