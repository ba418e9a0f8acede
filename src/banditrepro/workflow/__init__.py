"""The workflow's Python: everything the Snakemake rules call, as unit-tested package code.

config     validate a config against its schema, fill in defaults (one-line errors)
plan       what a config asks for: cells and their runs, the grouping of runs into jobs, every input list
digests    what each job's bytes derive from (import closures of the package), so edits rerun exactly those jobs
jobs       bodies of the in-process (`run:`) jobs
progress   the quiet profile's progress line, failure lines and the interrupt note
scheduler  the coalescing re-evaluation timer (a Snakemake scheduler patch)
cluster    fail fast when a cluster executor's tools are missing
"""
