# Only with challengers (config key `challengers`, banditrepro/challengers.py): per paper, every line of the
# figures a challenger joined, ranked, with its final regret relative to the paper's algorithm per panel
# (banditrepro/leaderboard.py). Without challengers no leaderboard is planned and this rule never runs.


localrules:
    leaderboard,


rule leaderboard:
    input:
        get_leaderboard_inputs,
    output:
        # the HTML report (snakemake --report) shows each leaderboard, figure and table, in its own category
        csv=report(
            STORE.leaderboard_pattern("csv"),
            caption="../report/leaderboard.rst",
            category="Leaderboards",
            labels={"paper": "{paper}", "file": "table"},
        ),
        md=STORE.leaderboard_pattern("md"),
        png=report(
            STORE.leaderboard_pattern("png"),
            caption="../report/leaderboard.rst",
            category="Leaderboards",
            labels={"paper": "{paper}", "file": "figure"},
        ),
        pdf=STORE.leaderboard_pattern("pdf"),
    log:
        PLAN.log("leaderboards", "{paper}", "{key}"),
    resources:
        runtime=10,
        mem_mb=1500,
    run:
        jobs.leaderboard(PLAN, wildcards, output, log)
