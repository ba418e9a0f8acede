# Stage 4: every figure and table of the manifest, and the claims checked against them.
#
# In-process jobs like the cells (`run:`): matplotlib, pandas and scipy are imported once for all 26
# figures instead of once per figure process (~1.4 s each). `banditrepro figure|claims` do the same by hand.


rule figure:
    input:
        figure_inputs,
    output:
        png=report(
            "results/figures/{paper}/{figure}.png",
            caption="../report/figure.rst",
            category="{paper}",
            labels={"paper": "{paper}", "figure": "{figure}"},
        ),
        pdf="results/figures/{paper}/{figure}.pdf",
        table="results/tables/{paper}/{figure}.csv",
        markdown="results/tables/{paper}/{figure}.md",
        latex="results/tables/{paper}/{figure}.tex",
    log:
        "logs/figures/{paper}/{figure}.log",
    resources:
        runtime=10,
        mem_mb=1500,
    params:
        caption=figure_caption,
    run:
        figure_job(wildcards, output, log)


rule claims:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
    output:
        report("results/claims.csv", caption="../report/claims.rst", category="Claims"),
    log:
        "logs/claims.log",
    resources:
        runtime=10,
        mem_mb=1000,
    run:
        claims_job(output, log)
