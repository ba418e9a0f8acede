"""``verify`` and ``compare`` of a bundle with the network cut off (``unshare -n``: a new network namespace
holding only a loopback that is down): they read the archive and this checkout, never a URL. The bundle is the
reference run's, made by ``banditrepro bundle``; its withheld datasets (sushi16, mslr5, yelp) are the project's
own prepared files, as a reviewer who obtained them under their licence would have them."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.sharing.conftest import CLI, RESULTS


def offline(proj, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["unshare", "-n", *CLI, *args, "--project", str(proj)], cwd=proj, capture_output=True,
                          text=True, timeout=900)


def _can_cut_the_network() -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.workflow
@pytest.mark.skipif(not _can_cut_the_network(), reason="unshare -n needs root or user namespaces")
def test_verify_and_compare_of_a_bundle_need_no_network(reference, bundled):
    # the namespace really has no route out: a connection to any address fails at once
    probe = subprocess.run(["unshare", "-n", "python3", "-c", "import socket; socket.create_connection(('192.0.2.1', "
                            "80), timeout=2)"], capture_output=True, text=True)
    assert probe.returncode != 0 and "unreachable" in probe.stderr.lower(), probe.stderr
    archive, _ = bundled
    r = offline(reference, "verify", str(archive), "--sample", "4", "--seed", "7")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    last = r.stdout.splitlines()[-1]
    assert last.startswith("no mismatch in what was checked: checked: 4 of ") and ", 4 byte-identical;" in last
    assert " claims, 3 of runtime.csv, report.md, reproduction.md re-derived equal;" in last
    r = offline(reference, "compare", str(reference / RESULTS), str(archive))
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert r.stdout.splitlines()[-1].startswith("compare: 0 of ") and " claims changed verdict; 0 of " in r.stdout
