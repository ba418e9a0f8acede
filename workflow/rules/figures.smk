# Stage 4: every figure and table of the manifest, and the claims checked against them.


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
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=10,
        mem_mb=1500,
    params:
        caption=figure_caption,
        args=figure_args(),
        prepared=PREPARED,
    shell:
        "python -m banditrepro figure {wildcards.paper}/{wildcards.figure} {params.args} --prepared-dir {params.prepared}"
        " --status-dir data/status"
        " --png {output.png} --pdf {output.pdf} --table {output.table} > {log} 2>&1"


rule claims:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
    output:
        report("results/claims.csv", caption="../report/claims.rst", category="Claims"),
    log:
        "logs/claims.log",
    conda:
        "../../envs/banditrepro.yaml"
    resources:
        runtime=10,
        mem_mb=1000,
    params:
        args=figure_args(),
        prepared=PREPARED,
    shell:
        "python -m banditrepro claims {params.args} --status-dir data/status"
        " --prepared-dir {params.prepared} --out {output} > {log} 2>&1"
