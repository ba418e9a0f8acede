# A Markdown report of every figure, table and claim (the HTML report: snakemake --report report.html).


report: "../report/workflow.rst"


rule report_md:
    input:
        get_figure_outputs,
        claims=LAYOUT.claims_csv,
        runtime=LAYOUT.runtime_csv,
        # only with challengers: the leaderboards, for the report's section on the challengers
        leaderboards=leaderboard.tables(PLAN.figures, LAYOUT),
    output:
        LAYOUT.report_md,
        # every claim with its location, interval and verdict; every deviation with its measured effect
        reproduction=report(
            LAYOUT.reproduction_md,
            caption="../report/reproduction.rst",
            category="Claims",
        ),
    log:
        PLAN.log("report"),
    resources:
        runtime=5,
        mem_mb=500,
    params:
        code=digests.report_code(),
        # the deviations list is read in-process; its digest (not its absolute path) triggers reruns
        deviations=digests.bytes_digest(PLAN.deviations_file()),
    run:
        jobs.report(PLAN, input, output, log)
