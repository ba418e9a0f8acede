# A Markdown report of every figure, table and claim (the HTML report: snakemake --report report.html).


report: "../report/workflow.rst"


rule report_md:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
        claims=f"{RESULTS}/claims.csv",
        runtime=f"{TABLES}/runtime.csv",
    output:
        f"{RESULTS}/report.md",
        # every claim with its location, interval and verdict; every deviation with its measured effect
        reproduction=report(
            f"{RESULTS}/reproduction.md",
            caption="../report/reproduction.rst",
            category="Claims",
        ),
    log:
        f"{LOGS}/report.log",
    resources:
        runtime=5,
        mem_mb=500,
    params:
        code=source_digest("report.py"),
        # the deviations list is read in-process; its digest (not its absolute path) triggers reruns
        deviations=file_digest("config/deviations.yaml"),
    run:
        from banditrepro.report import build_reproduction

        report_job(input, output, log)
        build_reproduction(
            FIGURES,
            LAYOUT,
            input.claims,
            _root_path("config/deviations.yaml"),
            output.reproduction,
        )
