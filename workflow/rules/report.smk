# A Markdown report of every figure, table and claim (the HTML report: snakemake --report report.html).


report: "../report/workflow.rst"


rule report_md:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
        claims="results/claims.csv",
        runtime="results/tables/runtime.csv",
    output:
        "results/report.md",
    params:
        args=figure_args(),
    resources:
        runtime=5,
        mem_mb=500,
    shell:
        "{CLI} report {params.args} --claims {input.claims} --runtime {input.runtime} --out {output}"
