# The run's software stack, once per run beside the report: Python, platform, every installed distribution's
# version (banditrepro/workflow/software.py). The stack's digest is its param, so a changed environment
# writes the file again; no other job reads it, so it reruns nothing else.


localrules:
    software_stack,


rule software_stack:
    output:
        report(
            LAYOUT.software_json,
            caption="../report/software.rst",
            category="Software",
        ),
    log:
        PLAN.log("software"),
    params:
        stack=software.digest(),
    run:
        software.write(output[0], log[0])
