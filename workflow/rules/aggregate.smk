# Stage 3: runs of a cell -> one summary (mean, standard error, 95 % CI per grid point); run times.
# A cell has as many runs as the most demanding figure drawing it asks (manifest `runs:`), and its
# summary reads all of them, so every figure sharing the cell sees the same runs.


rule summarize_cell:
    input:
        lambda wc: [
            cell_path(wc.dataset, wc.horizon, wc.algo, r)
            for r in range(runs_of(wc.dataset, wc.horizon, wc.algo))
        ],
    output:
        f"{SUMMARIES}/{{dataset}}/T{{horizon}}/{{algo}}.npz",
    log:
        f"{LOGS}/summaries/{{dataset}}/T{{horizon}}/{{algo}}.log",
    resources:
        runtime=5,
        mem_mb=500,
    params:
        code=SUMMARY_CODE,
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
            f"{TABLES}/runtime.csv",
            caption="../report/runtime.rst",
            category="Run time",
        ),
    log:
        f"{LOGS}/runtime_table.log",
    resources:
        runtime=5,
        mem_mb=500,
    params:
        code=SUMMARY_CODE,
    run:
        runtime_table_job(input, output, log)
