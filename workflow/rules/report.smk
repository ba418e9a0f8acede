# A Markdown report of every figure, table and claim (the HTML report: snakemake --report report.html).


report: "../report/workflow.rst"


rule report_md:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
        claims="results/claims.csv",
        runtime="results/tables/runtime.csv",
    output:
        "results/report.md",
    log:
        "logs/report.log",
    resources:
        runtime=5,
        mem_mb=500,
    run:
        report_job(input, output, log)
