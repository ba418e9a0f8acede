# A Markdown report of every figure, table and claim (the HTML report: snakemake --report report.html), into
# the store; then rule all, the last step of every run: every store entry of this config published at its
# fixed path (results/figures/..., claims.csv, report.md, ...) where the bytes differ (workflow/publish.py).


report: "../report/workflow.rst"


rule report_md:
    input:
        # figures' tables, claims, run times, software (the report's provenance section), leaderboards
        unpack(get_report_inputs),
    output:
        STORE.single_pattern("report", "report.md"),
        # every claim with its location, interval and verdict; every deviation with its measured effect
        reproduction=report(
            STORE.single_pattern("report", "reproduction.md"),
            caption="../report/reproduction.rst",
            category="Claims",
        ),
    log:
        PLAN.log("report", "{key}"),
    resources:
        runtime=5,
        mem_mb=500,
    run:
        jobs.report(PLAN, input, output, log)
