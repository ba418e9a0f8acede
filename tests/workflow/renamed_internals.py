"""Test-only: run Snakemake as a release that renamed the internals the workflow touches would be.

`python renamed_internals.py <snakemake arguments>` loads Snakemake's modules with the scheduler's
`_schedule_reevalutation` and `_open_jobs` and the workflow's `output_settings` renamed throughout (their
source rewritten at import), then calls Snakemake's own main: Snakemake works as before, and those names
banditrepro/workflow/engine.py reaches for are gone (tests/workflow/test_engine_internals.py). The
workflow's `scheduler` attribute stays: the executor plugin interface uses it too, so a release renaming it
would rename it there as well (its absence is tested with a stand-in workflow).
"""

import importlib.abc
import importlib.machinery
import re
import sys

RENAMES = [(re.compile(r"\b_schedule_reevalutation\b"), "_schedule_reevaluation_v2"),
           (re.compile(r"\b_open_jobs\b"), "_open_jobs_v2"),
           (re.compile(r"\boutput_settings\b"), "output_settings_v2")]
MODULES = {"snakemake.scheduling.job_scheduler", "snakemake.workflow", "snakemake.cli", "snakemake.api",
           "snakemake.executors.local", "snakemake.spawn_jobs"}


class Renaming(importlib.machinery.SourceFileLoader):
    def get_data(self, path):
        if not path.endswith(".py"):
            raise OSError("no bytecode: the source is rewritten")
        text = super().get_data(path).decode()
        for pattern, new in RENAMES:
            text = pattern.sub(new, text)
        return text.encode()

    def set_data(self, path, data, *args):
        pass  # never cache the rewritten bytecode


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in MODULES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        spec.loader = Renaming(fullname, spec.origin)
        return spec


if __name__ == "__main__":
    sys.meta_path.insert(0, Finder())
    from snakemake.cli import main

    sys.argv = ["snakemake", *sys.argv[1:]]
    main()
