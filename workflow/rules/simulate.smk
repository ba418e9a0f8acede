# Stage 2: the runs of every (dataset, horizon, algorithm + parameters) cell, one file per run.
#
# Jobs run inside the Snakemake process (`run:`; the default profile sets force-use-threads), so a cell
# costs its simulation, not a Python start-up, numpy/numba import and kernel cache load (~1 s each).
# Kernels release the GIL (nogil). Snakemake's bookkeeping costs tens of ms of CPU per job and a few per
# declared file, more than most runs, so one job computes several runs of a cell: `cells_per_job: auto`
# (default) sizes the group from the horizon and the kernel's ns/step (banditrepro/jobsize.py), an integer
# k fixes it. A job writes the same
# per-run files either way; each run's bytes depend only on (algorithm, dataset, horizon, run, base seed).
# Only the .npz files are outputs: each run's .json sidecar (wall time, versions) is written next to it but
# not declared, since Snakemake's per-output bookkeeping (incomplete marks, metadata records, input
# checksums) cost more than writing the sidecars; the summary reads a sidecar only if it names its run.
# Cells are named by one wildcard, `cell` = <dataset>/T<horizon>/<algorithm id>, so that each rule can be
# restricted to exactly the cells grouped its way (one rule per run range; no two rules make one file).


rule simulate:
    input:
        lambda wc: f"{PREPARED}/{split_key(wc.cell)[0]}.json",
    output:
        cell=f"{CELLS}/{{cell}}/run{{run}}.npz",
    log:
        f"{LOGS}/cells/{{cell}}/run{{run}}.log",
    wildcard_constraints:
        cell=one_of(SINGLE),
    resources:
        runtime=lambda wc: 5 + split_key(wc.cell)[1] // 200_000,
        mem_mb=300,
    params:
        base_seed=config["base_seed"],
        code=lambda wc: cell_code(split_key(wc.cell)[2]),
    run:
        simulate_job(wildcards, input, output, params, log)


for (first, last), keys in sorted(CHUNKED.items()):

    rule:
        name:
            f"simulate_runs_{first}_{last}"
        input:
            lambda wc: f"{PREPARED}/{split_key(wc.cell)[0]}.json",
        output:
            cells=[f"{CELLS}/{{cell}}/run{r}.npz" for r in range(first, last + 1)],
        log:
            f"{LOGS}/cells/{{cell}}/runs{first}-{last}.log",
        wildcard_constraints:
            cell=one_of(keys),
        resources:
            runtime=lambda wc, input, threads, runs=last - first + 1: 5
            + runs * split_key(wc.cell)[1] // 200_000,
            mem_mb=300,
        params:
            base_seed=config["base_seed"],
            # derived from the outputs, so not recorded: regrouping runs (auto, k > 1) reruns no cell
            runs=lambda wc, output, first=first, last=last: list(range(first, last + 1)),
            code=lambda wc: cell_code(split_key(wc.cell)[2]),
        run:
            simulate_job(wildcards, input, output, params, log)
