# Stage 4: every figure and table of the manifest, and the claims checked against them.
#
# In-process jobs like the cells (`run:`): matplotlib, pandas and scipy are imported once for all 26
# figures instead of once per figure process (~1.4 s each). `banditrepro figure|claims` do the same by hand.


rule figure:
    input:
        figure_inputs,
    output:
        png=report(
            f"{RESULTS}/figures/{{paper}}/{{figure}}.png",
            caption="../report/figure.rst",
            category="{paper}",
            labels={"paper": "{paper}", "figure": "{figure}"},
        ),
        pdf=f"{RESULTS}/figures/{{paper}}/{{figure}}.pdf",
        table=f"{TABLES}/{{paper}}/{{figure}}.csv",
        markdown=f"{TABLES}/{{paper}}/{{figure}}.md",
        latex=f"{TABLES}/{{paper}}/{{figure}}.tex",
    log:
        f"{LOGS}/figures/{{paper}}/{{figure}}.log",
    resources:
        runtime=10,
        mem_mb=1500,
    params:
        caption=figure_caption,
        # the figure's manifest entry (not its claims) and its drawing code: an edit reruns this figure only
        spec=lambda wc: FIGURE_DIGEST[f"{wc.paper}/{wc.figure}"],
    run:
        figure_job(wildcards, output, log)


rule claims:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
    output:
        report(
            f"{RESULTS}/claims.csv", caption="../report/claims.rst", category="Claims"
        ),
    log:
        f"{LOGS}/claims.log",
    resources:
        runtime=10,
        mem_mb=1000,
    params:
        # every claim entry of the manifest and the claim tests' code: a tolerance edit reruns this job
        # (and the report), never a figure or a cell
        spec=CLAIMS_DIGEST,
    run:
        claims_job(output, log)
