# Stage 3: runs of a cell -> one summary (mean, standard error, 95 % CI per grid point); run times.


rule summarize_cell:
    input:
        lambda wc: [cell_path(wc.dataset, wc.horizon, wc.algo, r) for r in RUNS],
    output:
        "results/summaries/{dataset}/T{horizon}/{algo}.npz",
    log:
        "logs/summaries/{dataset}/T{horizon}/{algo}.log",
    resources:
        runtime=5,
        mem_mb=500,
    run:
        summarize_job(input, output, log)


rule runtime_table:
    input:
        lambda wc: sorted(
            {
                summary_path(p.dataset, p.horizon, a.id)
                for f in FIGURES
                for p in f.panels
                for a in p.algorithms
                if not CATALOG.is_optional(p.dataset)
            }
        ),
    output:
        report(
            "results/tables/runtime.csv",
            caption="../report/runtime.rst",
            category="Run time",
        ),
    log:
        "logs/runtime_table.log",
    resources:
        runtime=5,
        mem_mb=500,
    run:
        runtime_table_job(input, output, log)
