# A Markdown report of every figure, table and claim (the HTML report: snakemake --report report.html).


report: "../report/workflow.rst"


rule report_md:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
        claims="results/claims.csv",
        runtime="results/tables/runtime.csv",
        deviations=_root_path("config/deviations.yaml"),
    output:
        "results/report.md",
        # every claim with its location, interval and verdict; every deviation with its measured effect
        reproduction=report(
            "results/reproduction.md",
            caption="../report/reproduction.rst",
            category="Claims",
        ),
    log:
        "logs/report.log",
    resources:
        runtime=5,
        mem_mb=500,
    run:
        from banditrepro.report import build_reproduction

        report_job(input, output, log)
        build_reproduction(
            FIGURES, input.claims, input.deviations, output.reproduction
        )
