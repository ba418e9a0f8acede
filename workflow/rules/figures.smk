# Stage 4: every figure and table of the manifest, and the claims checked against them.


def figure_caption(wildcards):
    fig = FIGURE_BY_STEM[f"{wildcards.paper}/{wildcards.figure}"]
    algos = {a.id: a.label for p in fig.panels for a in p.algorithms}
    panels = "; ".join(f"{p.title}: {p.dataset}, T = {p.horizon:,}" for p in fig.panels)
    return (
        f"{fig.title}. {fig.caption} Configuration: {config['runs']} runs per line, base seed "
        f"{config['base_seed']}; panels: {panels}; algorithms (id → legend): "
        + ", ".join(f"{k} → {v}" for k, v in algos.items())
        + "."
    )


def figure_args():
    papers = " ".join(config["papers"])
    cap = f"--max-horizon {config['max_horizon']}" if config["max_horizon"] else ""
    return f"--manifest {_root_path(config['manifest'])} --papers {papers} {cap}"


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
    params:
        caption=figure_caption,
        args=figure_args(),
    resources:
        runtime=10,
        mem_mb=1500,
    log:
        "logs/figures/{paper}/{figure}.log",
    shell:
        "{CLI} figure {wildcards.paper}/{wildcards.figure} {params.args} --prepared-dir {PREPARED}"
        " --status-dir data/status --runs {config[runs]}"
        " --png {output.png} --pdf {output.pdf} --table {output.table} > {log} 2>&1"


rule claims:
    input:
        lambda wc: [t for f in FIGURES for t in figure_outputs(f)],
    output:
        report("results/claims.csv", caption="../report/claims.rst", category="Claims"),
    params:
        args=figure_args(),
    resources:
        runtime=10,
        mem_mb=1000,
    log:
        "logs/claims.log",
    shell:
        "{CLI} claims {params.args} --status-dir data/status --out {output} > {log} 2>&1"
