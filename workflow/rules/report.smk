# A Markdown report of every figure, table and claim (the HTML report: snakemake --report report.html).


report: "../report/workflow.rst"


rule report_md:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
        claims=f"{RESULTS}/claims.csv",
        runtime=f"{TABLES}/runtime.csv",
    output:
        f"{RESULTS}/report.md",
    log:
        f"{LOGS}/report.log",
    resources:
        runtime=5,
        mem_mb=500,
    params:
        code=source_digest("report.py"),
    run:
        report_job(input, output, log)
