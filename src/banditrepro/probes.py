"""An optional dataset's probe verdict (``data/status/<dataset>.json``, written by ``banditrepro probe``): read
here once for every reader (the figures, the Snakefile's checkpoint, bundle, verify, estimate).

One reader, one default. A status file holds ``{"dataset": str, "available": bool, "reason": str}``; anything
else (not JSON, another shape, larger than ``MAX_STATUS_BYTES``) is an error, never read as either verdict. A
missing file means *not probed*, and not probed is not available: nothing is drawn, bundled or checked on the
assumption that a probe would have succeeded. A dataset that is not optional has no probe at all and runs
unless a verdict says otherwise (``dataset_ran``); whether it is optional is the caller's to say (catalog, plan).

Standard library only (a low module: the layout's level; sharing/ and the figures import it, never the reverse).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass

from banditrepro import ReproError

AVAILABLE, UNAVAILABLE, UNPROBED = "available", "unavailable", "unprobed"
# A status file is three short fields (the reason: one error line); 64 KiB is 100x the longest written here,
# and bounds what a received bundle's status file can make a reader load.
MAX_STATUS_BYTES = 64 * 1024


class BadProbe(ReproError):
    """A status file that exists but is not a probe verdict."""


@dataclass(frozen=True)
class Probe:
    state: str  # AVAILABLE, UNAVAILABLE or UNPROBED
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.state == AVAILABLE


def probe_verdict(path) -> Probe:
    """The verdict in the status file ``path``: UNPROBED if there is none; BadProbe if it is not one (a link, a
    folder, too large, not JSON, fields missing or of another type)."""
    try:
        st = os.stat(path)  # a link is followed: received data are checked for links by their reader first
    except FileNotFoundError:
        return Probe(UNPROBED, "not probed")
    except OSError as exc:
        raise BadProbe(f"{path}: probe verdict cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadProbe(f"{path}: probe verdict is not a regular file")
    if st.st_size > MAX_STATUS_BYTES:
        raise BadProbe(f"{path}: probe verdict larger than {MAX_STATUS_BYTES} bytes")
    try:
        with open(path, "rb") as f:
            found = json.loads(f.read(MAX_STATUS_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise BadProbe(f"{path}: probe verdict is not JSON ({exc})") from None
    return check_verdict(found, path)


def check_verdict(found, where) -> Probe:
    """A parsed status file as a Probe; BadProbe naming ``where`` if it has another shape."""
    if not (isinstance(found, dict) and isinstance(found.get("available"), bool)
            and isinstance(found.get("reason", ""), str) and isinstance(found.get("dataset", ""), str)):
        raise BadProbe(f"{where}: not a probe verdict (expected {{dataset, available: true|false, reason}})")
    return Probe(AVAILABLE if found["available"] else UNAVAILABLE, found.get("reason", ""))


def dataset_ran(path, optional: bool) -> bool:
    """Whether a run draws the dataset whose status file is ``path``: a verdict decides; without one, only a
    dataset that is not optional (the workflow probes only optional ones: not probed is not run)."""
    verdict = probe_verdict(path)
    return not optional if verdict.state == UNPROBED else verdict.available
