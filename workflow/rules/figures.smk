# Stage 4: every figure and table of the manifest, and the claims checked against them.
#
# In-process jobs like the cells (`run:`): matplotlib, pandas and scipy are imported once for all figures
# instead of once per figure process (~1.4 s each). `banditrepro figure|claims` do the same by hand.


rule figure:
    input:
        get_figure_inputs,
    output:
        png=report(
            LAYOUT.figure_png("{paper}", "{figure}"),
            caption="../report/figure.rst",
            category="{paper}",
            labels={"paper": "{paper}", "figure": "{figure}"},
        ),
        pdf=LAYOUT.figure_pdf("{paper}", "{figure}"),
        table=LAYOUT.table("{paper}", "{figure}", "csv"),
        markdown=LAYOUT.table("{paper}", "{figure}", "md"),
        latex=LAYOUT.table("{paper}", "{figure}", "tex"),
    log:
        PLAN.log("figures", "{paper}", "{figure}"),
    resources:
        runtime=10,
        mem_mb=1500,
    params:
        caption=get_figure_caption,
        # the figure's manifest entry (not its claims) and its drawing code: an edit reruns this figure only
        spec=get_figure_digest,
    run:
        jobs.figure(PLAN, wildcards, output, log)


rule claims:
    input:
        get_figure_outputs,
    output:
        report(LAYOUT.claims_csv, caption="../report/claims.rst", category="Claims"),
    log:
        PLAN.log("claims"),
    resources:
        runtime=10,
        mem_mb=1000,
    params:
        # every claim entry of the manifest and the claim tests' code: a tolerance edit reruns this job
        # (and the report), never a figure or a cell
        spec=PLAN.claims_digest(),
    run:
        jobs.claims(PLAN, output, log)
