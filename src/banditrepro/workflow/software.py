"""The software stack of a run, recorded once per run beside the report (``<results>/software.json``).

Shard sidecars name a few versions each (numpy, numba, Python); this names everything: the Python and the
platform, every installed distribution and its version, and Snakemake's and the executor plugins' versions
on their own lines. The file holds no time and no path, so the same environment writes the same bytes; its
store entry is named by the stack (workflow/names.py), so a changed environment writes a new one.
"""

from __future__ import annotations

import platform
import re
from importlib import metadata


def distributions() -> dict[str, str]:
    """Every installed distribution (normalised name -> version), as pip would list them."""
    out = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:  # a broken install without metadata has none
            out[re.sub(r"[-_.]+", "-", name).lower()] = dist.version  # PEP 503 normalised
    return dict(sorted(out.items()))


def stack() -> dict:
    dists = distributions()
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": {"system": platform.system(), "machine": platform.machine(),
                     "libc": " ".join(x for x in platform.libc_ver() if x)},
        "snakemake": dists.get("snakemake"),
        "executor_plugins": {n: v for n, v in dists.items() if n.startswith("snakemake-executor-plugin-")},
        "distributions": dists,
    }


def write(path, log=None) -> None:
    """``stack()`` as JSON at ``path`` (atomic); a line in ``log`` if given."""
    from banditrepro.atomic import write_json, write_text

    data = stack()
    write_json(path, data)
    if log:
        write_text(log, f"python {data['python']}, snakemake {data['snakemake']}, "
                        f"{len(data['distributions'])} distributions -> {path}\n")
