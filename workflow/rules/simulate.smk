# Stage 2: the runs of every (dataset, horizon, algorithm + parameters) cell, stored in shards: one file
# holding runs first..last of one cell (banditrepro/workflow/plan.py: shard lists, shard sizes, the code
# digest in each shard's folder). Each run's bytes depend only on (algorithm, dataset, horizon, run, base
# seed), whichever shard holds it.
#
# Shards are computed in batches (banditrepro/workflow/batches.py): a job of this rule computes the shards
# of its batch that are not complete yet and then writes its receipt, the only output Snakemake tracks. The
# shards are not outputs, so a failed or cancelled job keeps every shard it finished (Snakemake removes a
# failed job's outputs) and its retry computes only the rest. Locally a batch is about one shard
# (`shard_seconds` of work) and runs inside the Snakemake process (`run:`; the default profile sets
# force-use-threads); on a cluster (profiles/slurm) a batch is `batch_minutes` of work, one submission.


rule simulate:
    input:
        get_batch_prepared,
    output:
        LAYOUT.receipt("{batch}"),
    log:
        PLAN.log("batches", "{batch}"),
    resources:
        runtime=get_batch_runtime,
        mem_mb=1000,
    run:
        jobs.simulate(PLAN, wildcards, input, output, log)
