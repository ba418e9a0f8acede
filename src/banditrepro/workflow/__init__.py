"""The workflow's Python: everything the Snakemake rules call, as unit-tested package code. The data path, in order:

config     the config shaped in one place: cluster mode merged in, validated, defaults filled in, loaded as
           Snakemake would (the CLI)
cells      a cell's key <dataset>/T<horizon>/<algorithm id> and its parts
digests    what each job's code is: its entry modules, from the registries, and the digests of their import
           closures by syntax tree (banditrepro/closure.py, the naming library under everything)
names      the name of every stored result: a digest of everything its bytes depend on
plan       pure data: config -> cells, runs, names, shards, the batches of the missing shards (reads no content)
batches    the run-time room: packing, a batch's spec, running a batch (a shard is complete when its file exists)
jobs       bodies of the in-process (`run:`) jobs, each writing store entries (the leaderboard's too)
publish    rule all: the store's entries copied to the fixed paths a reader opens, where the bytes differ
stop       a stop request (Ctrl-C, SIGTERM) that in-process jobs notice within seconds
engine     every contact with Snakemake itself: cluster mode's resource, the submit-host check, the scheduler
           patches (soft: a renamed internal costs a warning line, never a wrong result)
progress   the quiet profile's progress line, failure lines and the interrupt note (Snakemake's logger)
software   the run's software stack (software.json)
estimate   what a run will submit and write, before anything runs (`banditrepro estimate`); costs: its forecast
clean      stored results this config does not name, and recomputing on request (`banditrepro clean`)
"""
