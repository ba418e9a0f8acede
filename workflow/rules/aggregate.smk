# Stage 3: runs of a cell -> one summary (mean, standard error, 95 % CI per grid point); run times.
# A cell has as many runs as the most demanding figure drawing it asks (manifest `runs:`), and its
# summary reads all of them, so every figure sharing the cell sees the same runs. A summary is named by its
# cell's shards' key, the runs it keeps and the summary code (banditrepro/workflow/names.py); its inputs are
# its shards (or, for the missing ones, the batches computing them), never how finished work was packed.


rule summarize_cell:
    input:
        get_cell_inputs,
    output:
        STORE.summary_pattern(),
    log:
        PLAN.log("summaries", "{dataset}", "T{horizon}", "{algo}", "{key}"),
    resources:
        runtime=5,
        mem_mb=500,
    run:
        jobs.summarize(PLAN, wildcards, input, output, log)


rule runtime_table:
    input:
        get_runtime_inputs,
    output:
        report(
            STORE.single_pattern("runtime", "runtime.csv"),
            caption="../report/runtime.rst",
            category="Run time",
        ),
    log:
        PLAN.log("runtime_table", "{key}"),
    resources:
        runtime=5,
        mem_mb=500,
    run:
        jobs.runtime_table(PLAN, input, output, log)
