# Stage 3: runs of a cell -> one summary (mean, standard error, 95 % CI per grid point); run times.
# A cell has as many runs as the most demanding figure drawing it asks (manifest `runs:`), and its
# summary reads all of them, so every figure sharing the cell sees the same runs.


rule summarize_cell:
    input:
        # the receipts of the batches holding the cell's shards; the job reads the shards themselves
        get_cell_receipts,
    output:
        LAYOUT.summary("{dataset}", "{horizon}", "{algo}"),
    log:
        PLAN.log("summaries", "{dataset}", "T{horizon}", "{algo}"),
    resources:
        runtime=5,
        mem_mb=500,
    params:
        code=digests.summary_code(),
        # the runs kept: fewer runs than the cell's shards hold rerun the summary
        runs=lambda wc: PLAN.runs_of(wc.dataset, wc.horizon, wc.algo),
    run:
        jobs.summarize(PLAN, wildcards, input, output, log)


rule runtime_table:
    input:
        get_runtime_inputs,
    output:
        report(LAYOUT.runtime_csv, caption="../report/runtime.rst", category="Run time"),
    log:
        PLAN.log("runtime_table"),
    resources:
        runtime=5,
        mem_mb=500,
    params:
        code=digests.summary_code(),
    run:
        jobs.runtime_table(PLAN, input, output, log)
