# Only with challengers (config key `challengers`, banditrepro/challengers.py): per paper, every line of the
# figures a challenger joined, ranked, with its final regret relative to the paper's algorithm per panel
# (banditrepro/leaderboard.py). Without challengers no leaderboard is planned and this rule never runs.
from banditrepro import leaderboard


localrules:
    leaderboard,


rule leaderboard:
    input:
        lambda wc: leaderboard.inputs(PLAN.figures, LAYOUT, wc.paper),
    output:
        # the HTML report (snakemake --report) shows each leaderboard, figure and table, in its own category
        csv=report(
            LAYOUT.leaderboard("{paper}", "csv"),
            caption="../report/leaderboard.rst",
            category="Leaderboards",
            labels={"paper": "{paper}", "file": "table"},
        ),
        md=LAYOUT.leaderboard("{paper}", "md"),
        png=report(
            LAYOUT.leaderboard("{paper}", "png"),
            caption="../report/leaderboard.rst",
            category="Leaderboards",
            labels={"paper": "{paper}", "file": "figure"},
        ),
        pdf=LAYOUT.leaderboard("{paper}", "pdf"),
    log:
        PLAN.log("leaderboards", "{paper}"),
    resources:
        runtime=10,
        mem_mb=1500,
    params:
        # the figures' manifest entries (with the challengers' lines) and the leaderboard's code
        spec=lambda wc: leaderboard.digest(PLAN.figures, wc.paper),
    run:
        leaderboard.job(PLAN, wildcards, output, log)
