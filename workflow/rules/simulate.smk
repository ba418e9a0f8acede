# Stage 2: the runs of every (dataset, horizon, algorithm + parameters) cell, one file per run.
#
# Jobs run inside the Snakemake process (`run:`; the default profile sets force-use-threads), so a cell
# costs its simulation, not a Python start-up, numpy/numba import and kernel cache load (~1 s each).
# Kernels release the GIL (nogil). Snakemake's bookkeeping costs tens of ms of CPU per job and a few per
# declared file, more than most runs, so one job computes several runs of a cell: `cells_per_job: auto`
# (default) sizes the group from the horizon and the kernel's ns/step (banditrepro/jobsize.py), an integer
# k fixes it; run files that exist are grouped apart from new ones, so more runs compute only the new runs
# (banditrepro/workflow/plan.py). A job writes the same per-run files either way; each run's bytes depend
# only on (algorithm, dataset, horizon, run, base seed).
# Only the .npz files are outputs: each run's .json sidecar (wall time, versions) is written next to it but
# not declared, since Snakemake's per-output bookkeeping (incomplete marks, metadata records, input
# checksums) cost more than writing the sidecars; the summary reads a sidecar only if it names its run.
# Cells are named by one wildcard, `cell` = <dataset>/T<horizon>/<algorithm id>, so that each rule can be
# restricted to exactly the cells grouped its way (one rule per run range; no two rules make one file).


rule simulate:
    input:
        get_cell_prepared,
    output:
        cell=PLAN.cell_pattern(),
    log:
        PLAN.log("cells", "{cell}", "run{run}"),
    wildcard_constraints:
        cell=one_of(PLAN.single),
    resources:
        runtime=lambda wc: PLAN.cell_minutes(wc.cell),
        mem_mb=300,
    params:
        base_seed=config["base_seed"],
        # the code the cell runs (import closure of its kernel and cell.py): an edit reruns its cells only
        code=get_cell_code,
    run:
        jobs.simulate(PLAN, wildcards, input, output, params, log)


for (first, last), cells in sorted(PLAN.chunked.items()):

    rule:
        name:
            chunk_name(first, last)
        input:
            get_cell_prepared,
        output:
            cells=[PLAN.cell_pattern(r) for r in range(first, last + 1)],
        log:
            PLAN.log("cells", "{cell}", f"runs{first}-{last}"),
        wildcard_constraints:
            cell=one_of(cells),
        resources:
            runtime=lambda wc, runs=last - first + 1: PLAN.cell_minutes(wc.cell, runs),
            mem_mb=300,
        params:
            base_seed=config["base_seed"],
            # derived from the outputs, so not recorded: regrouping runs reruns no finished range
            runs=lambda wc, output, first=first, last=last: list(range(first, last + 1)),
            code=get_cell_code,
        run:
            jobs.simulate(PLAN, wildcards, input, output, params, log)
