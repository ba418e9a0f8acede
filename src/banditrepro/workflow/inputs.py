"""What each rule reads: the input functions of workflow/rules/*.smk, computed from the plan.

A first run names its figures, and everything that reads them, twice: at parse time, and again once the optional
datasets' probes (checkpoint ``probe_dataset``) have run, since a probe's verdict is part of those names
(banditrepro/workflow/names.py). Every job past the summaries therefore asks for its inputs through
``Inputs.probed``: it waits for the probes (Snakemake re-evaluates the function once the checkpoint ran), names
the outputs again, and only then checks the job's key and lists its inputs. No job runs under, or reads by, a
name computed before the probes ran (tests/workflow/test_first_run.py).
"""

from __future__ import annotations

from banditrepro import leaderboard
from banditrepro.probes import probe_verdict


class Inputs:
    def __init__(self, plan, checkpoints):
        self.plan = plan
        self.checkpoints = checkpoints  # Snakemake's checkpoints; probe_dataset is read when first called

    @property
    def store(self):
        return self.plan.store

    def status(self, dataset: str) -> tuple[str, bool]:
        """An optional dataset's probe: (its status file, whether it was found); waits for the checkpoint."""
        path = self.checkpoints.probe_dataset.get(dataset=dataset).output[0]
        return path, probe_verdict(path).available

    def probed(self) -> None:
        """Wait for every optional dataset's probe, then name the outputs by what the probes found."""
        for dataset in self.plan.optional_datasets():
            self.checkpoints.probe_dataset.get(dataset=dataset)
        self.plan.rename_outputs()

    def drawn(self) -> list[str]:
        """What claims and the report read: the figures' tables and, beside them, the summaries and prepared
        files the figures drew (declared, so that one deleted by hand is made again first, never read as
        missing)."""
        plan = self.plan
        return sorted({t for fig in plan.figures for t in [*self.store.figure_outputs(fig.paper, fig.id),
                                                            *plan.figure_inputs(fig.paper, fig.id, self.status)]})

    def figure(self, paper: str, figure: str, key: str) -> list[str]:
        self.probed()
        self.plan.check_key("figure", (paper, figure), key)
        return self.plan.figure_inputs(paper, figure, self.status)

    def claims(self, key: str) -> list[str]:
        self.probed()
        self.plan.check_key("claims", None, key)
        return self.drawn()

    def leaderboard(self, paper: str, key: str) -> list[str]:
        self.probed()
        self.plan.check_key("leaderboard", paper, key)
        return leaderboard.inputs(self.plan.figures, self.store, paper)

    def report(self, key: str) -> dict:
        """The report's inputs by the names the probes settled (never an entry named before them)."""
        self.probed()
        self.plan.check_key("report", None, key)
        st = self.store
        return {"drawn": self.drawn(), "claims": st.claims_csv, "runtime": st.runtime_csv,
                "software": st.software_json, "leaderboards": leaderboard.tables(self.plan.figures, st)}

    def first(self) -> list[str]:
        """What rule ``all`` asks for first (Plan.first_targets): with ``first_run`` set, an optional dataset's
        batches only where its probe found it (offline, Yahoo30 is probed, never fetched)."""
        return self.plan.first_targets(self.status)

    def published(self) -> list[str]:
        """Every store entry the run publishes, asked for once the probes have run (none with ``first_run``)."""
        if self.plan.partial:
            return []
        self.probed()
        return self.plan.all_targets() + leaderboard.targets(self.plan.figures, self.store)
