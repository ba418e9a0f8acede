# Stage 4: every figure and table of the manifest, and the claims checked against them, into the store
# (each named by what it draws: its manifest entry and code, its summaries and prepared files); rule all
# publishes them at their fixed paths (banditrepro/workflow/publish.py).
#
# In-process jobs like the cells (`run:`): matplotlib, pandas and scipy are imported once for all figures
# instead of once per figure process (~1.4 s each). `banditrepro figure|claims` do the same by hand.


rule figure:
    input:
        get_figure_inputs,
    output:
        png=report(
            STORE.figure_pattern("png"),
            caption="../report/figure.rst",
            category="{paper}",
            labels={"paper": "{paper}", "figure": "{figure}"},
        ),
        pdf=STORE.figure_pattern("pdf"),
        table=STORE.figure_pattern("csv"),
        markdown=STORE.figure_pattern("md"),
        latex=STORE.figure_pattern("tex"),
    log:
        PLAN.log("figures", "{paper}", "{figure}", "{key}"),
    resources:
        runtime=10,
        mem_mb=1500,
    params:
        caption=get_figure_caption,
    run:
        jobs.figure(PLAN, wildcards, output, log)


rule claims:
    input:
        get_claims_inputs,
    output:
        report(
            STORE.single_pattern("claims", "claims.csv"),
            caption="../report/claims.rst",
            category="Claims",
        ),
    log:
        PLAN.log("claims", "{key}"),
    resources:
        runtime=10,
        mem_mb=1000,
    run:
        jobs.claims(PLAN, input, output, log)
