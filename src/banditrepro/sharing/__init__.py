"""Results anyone can check and combine, built on the names of banditrepro/workflow/names.py:

refusal    BadSource: the one error a received folder or bundle is refused with
sources    a results folder or a bundle opened for reading (its config, its shards, its plan)
verify     recompute a sample of shards by name and re-derive every summary, table and claim (`verify`)
localdata  verify's prepared data from this checkout, its listing of a source's files and their inventory
rederive   verify's re-derivation of summaries, tables, claims, leaderboards, runtime.csv and the reports
bundle     one archive of a run, described as a Workflow Run RO-Crate (`bundle`)
merge      pool shards computed on other machines into a results folder (`merge`)
compare    the claims whose verdict differs between two runs, and the figures whose cells differ (`compare`)
commands   their command lines (banditrepro/cli.py adds them)
"""
