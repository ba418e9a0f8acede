# Stage 2: the runs of every (dataset, horizon, algorithm + parameters) cell, stored in shards: one file per
# job holding runs first..last of one cell (banditrepro/workflow/plan.py: chains, shard sizes, the code
# digest in each shard's folder). Each run's bytes depend only on (algorithm, dataset, horizon, run, base
# seed), whichever shard holds it.
#
# Jobs run inside the Snakemake process (`run:`; the default profile sets force-use-threads), so a shard
# costs its simulation, not a Python start-up, numpy/numba import and kernel cache load (~1 s each).
# Only the .npz shards are outputs: each shard's .json sidecar (wall times, versions) is written next to it
# but not declared (Snakemake's per-output bookkeeping costs more than the sidecar's write); the summary
# reads a sidecar only if it names the shard's runs.
# Two kinds of rule write shards: `simulate`, one shard per job (cell, code digest and run range are
# wildcards), and under a cluster executor `simulate_bin_<a>_<b>`, the missing shards packed into bins of
# about `job_minutes` of work, one SLURM submission each (banditrepro/workflow/bins.py; a rule without
# wildcards takes precedence). Both come from the one definition below and have no params (the base seed
# and the code digest are in the shard's path), so what Snakemake records for a shard (input, rule body)
# is the same whichever wrote it, and neither reruns the other's shards.


for job in PLAN.simulate_rules(get_cell_prepared):

    rule:
        name:
            job.name
        input:
            job.input,
        output:
            job.output,
        log:
            job.log,
        wildcard_constraints:
            **job.constraints,
        resources:
            runtime=job.runtime,
            mem_mb=job.mem_mb,
        run:
            jobs.simulate(PLAN, input, output, log)
