# Stage 2: the runs of every (dataset, horizon, algorithm + parameters) cell, stored in shards: one file
# holding runs first..last of one cell, named by everything its bytes depend on (banditrepro/workflow/plan.py,
# names.py). Each run's bytes depend only on (algorithm, dataset, horizon, run, base seed, code, stack),
# whichever shard holds it, and a shard under its name is complete.
#
# The missing shards are computed in batches (banditrepro/workflow/batches.py): a job of rule `simulate`
# computes the shards of its batch whose files do not exist and then writes its end, the only output Snakemake
# tracks (temporary). The shards are not outputs, so a failed or cancelled job keeps every shard it finished
# (Snakemake removes a failed job's outputs) and its retry computes only the rest. Locally a batch is about
# `shard_seconds` of one kernel's work and runs inside the Snakemake process (`run:`; the default profile sets
# force-use-threads); on a cluster (profiles/slurm) a batch is `batch_minutes` of work, one submission, and
# its node reads what to compute from the spec the main process wrote (rule batch_spec).


rule batch_spec:
    output:
        LAYOUT.batch_spec("{batch}"),
    log:
        PLAN.log("batches", "{batch}.spec"),
    run:
        jobs.batch_spec(PLAN, wildcards, output, log)


rule simulate:
    input:
        unpack(get_batch_inputs),
    output:
        temp(LAYOUT.batch_done("{batch}")),
    log:
        PLAN.log("batches", "{batch}"),
    resources:
        runtime=get_batch_runtime,
        mem_mb=1000,
    run:
        jobs.simulate(PLAN, wildcards, input, output, log)
