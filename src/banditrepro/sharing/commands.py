"""The command lines of verify, bundle, merge and compare (and settle) (banditrepro/cli.py adds them to its parser).

Exit status: 0 when everything checked agrees, 1 when something differs (a mismatch, a verdict that moved, a
merge refused), 2 on bad input (one line, as every command of cli.py).
"""

from __future__ import annotations

import importlib

# command -> the module holding its ``add_arguments(parser)`` and ``run(args) -> int``
COMMANDS = {
    "verify": ("banditrepro.sharing.verify", "recompute a sample of a run's shards and re-derive everything "
                                             "after them; compare bytes"),
    "bundle": ("banditrepro.sharing.bundle", "one archive of a run (config, stack, data, shards, results), "
                                             "described as a Workflow Run RO-Crate"),
    "merge": ("banditrepro.sharing.merge", "pool runs computed on other machines (folders or bundles) into a "
                                           "results folder"),
    "compare": ("banditrepro.sharing.compare", "the claims whose verdict differs between two runs, and the "
                                               "figures whose cells differ"),
    # not a sharing command, registered here so that cli.py stays as it is (its parser is long enough)
    "settle": ("banditrepro.settle_run", "rounds of runs extending only the cells of undecided claims, until "
                                         "every claim is decided by a confidence sequence (docs/settle.md)"),
}


def add(sub) -> None:
    for name, (module, text) in COMMANDS.items():
        s = sub.add_parser(name, help=text)
        mod = importlib.import_module(module)
        mod.add_arguments(s)
        s.set_defaults(func=mod.run)
