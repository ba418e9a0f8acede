# The run's software stack beside the report: Python, platform, every installed distribution's version
# (banditrepro/workflow/software.py), named by that stack; no other job reads it, so it reruns nothing else.


localrules:
    software_stack,


rule software_stack:
    output:
        report(
            STORE.single_pattern("software", "software.json"),
            caption="../report/software.rst",
            category="Software",
        ),
    log:
        PLAN.log("software", "{key}"),
    run:
        jobs.software(PLAN, output, log)
