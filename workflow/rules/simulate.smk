# Stage 2: one job per (dataset, horizon, algorithm + parameters, run) cell.
#
# The job runs inside the Snakemake process (`run:`; the default profile sets force-use-threads), so a
# cell costs its simulation, not a Python start-up, numpy/numba import and kernel cache load (~1 s
# each). Kernels release the GIL (nogil). On a cluster each job is its own process, so there
# `cells_per_job: k` (config) makes one job compute k runs of a cell, writing the same per-run files.


if config["cells_per_job"] == 1:

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

else:
    for chunk in run_chunks():

        rule:
            name:
                f"simulate_runs_{chunk[0]}_{chunk[-1]}"
            input:
                f"{PREPARED}/{{dataset}}.json",
            output:
                cells=[
                    f"{CELLS}/{{dataset}}/T{{horizon}}/{{algo}}/run{r}.npz"
                    for r in chunk
                ],
                metas=[
                    f"{CELLS}/{{dataset}}/T{{horizon}}/{{algo}}/run{r}.json"
                    for r in chunk
                ],
            log:
                f"logs/cells/{{dataset}}/T{{horizon}}/{{algo}}/runs{chunk[0]}-{chunk[-1]}.log",
            resources:
                runtime=lambda wc, input, threads, runs=len(chunk): 5
                + runs * int(wc.horizon) // 200_000,
                mem_mb=300,
            params:
                base_seed=config["base_seed"],
                runs=chunk,
            run:
                simulate_job(wildcards, input, output, params, log)
