"""Helpers of the workflow tests: run Snakemake on this checkout or on a copy of it, read its output."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT.parent / "shared" / "data"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TEST_CONFIG = ".test/config/config.yaml"
TEST_RESULTS = "results/test"  # results_dir of the test config
TEST_CELLS = f"{TEST_RESULTS}/cells/seed7"
MIRROR_ARG = ["--config", f"data_mirrors=['{MIRROR}']"]  # a project copy is not beside ../shared/data
PROJECT_FILES = ("Snakefile", "workflow", "config", "profiles", "src", "envs", ".test")


def smk(*args, cwd=ROOT, snakefile=None, timeout=1500, env=None, runner=None):
    """Snakemake (``runner``: another command line that takes Snakemake's arguments) on ``snakefile``."""
    snakefile = Path(snakefile or Path(cwd) / "Snakefile")
    # shell jobs (python -m banditrepro) use the same checkout as the rules
    env = {**os.environ, "PYTHONPATH": str(snakefile.parent / "src"), **(env or {})}
    command = [*(runner or SNAKEMAKE), "-s", str(snakefile), *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


# A live holder of a shard's claim: acquires it as a batch does and renews it (banditrepro/workflow/
# shard_claims.py) until SIGTERM, which releases it (as a stopped batch does); kill -9 leaves it to go stale.
_HOLDER = """
import signal, sys, time
from banditrepro.workflow import shard_claims as sc
shard, me = sys.argv[1], sc.Holder.me()
assert sc.acquire(shard, lambda: False, me)
signal.signal(signal.SIGTERM, lambda *a: (sc.release(shard, me), sys.exit(0)))
print("held", flush=True)
while True:
    time.sleep(1)
"""


def hold_claim(shard) -> subprocess.Popen:
    """A process holding ``shard``'s claim (renewed): a batch reaching that shard waits until it ends."""
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, str(shard)], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert p.stdout.readline().strip() == "held", f"the claim holder did not start (exit {p.poll()})"
    return p


def end_holder(p: subprocess.Popen) -> None:
    """SIGTERM: the holder releases its claim and exits."""
    p.terminate()
    p.wait(timeout=30)


def job_counts(out: str) -> dict[str, int]:
    """The job-stats table of a dry run: rule -> count."""
    return {ln.split()[0]: int(ln.split()[1]) for ln in out.splitlines()
            if len(ln.split()) == 2 and ln.split()[1].isdigit()}


def error_lines(r) -> list[str]:
    """What a user sees on a failed parse, minus Snakemake's two start-up notices."""
    return [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip() and not ln.startswith(
        ("Using workflow specific profile", "Config file "))]


def copy_project(dest: Path) -> Path:
    """Code, config and profiles of this checkout (no results, no data) in ``dest``."""
    dest.mkdir(parents=True)
    for name in PROJECT_FILES:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / name)
    return dest


def clone(folder: Path, dest: Path) -> Path:
    """A `cp -a` copy (mtimes kept) of a project folder."""
    subprocess.run(["cp", "-a", str(folder), str(dest)], check=True)
    return dest


def tree_digest(folder: Path, skip: str | None = None) -> dict[str, tuple[int, str]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*")) if p.is_file() and not (skip and str(p).startswith(skip))}


def edit_function(path: Path, name: str) -> None:
    """Add a statement to the body of function ``name`` in the source file ``path`` (a code edit that
    changes no behaviour, which a digest must still see)."""
    import ast

    text = Path(path).read_text()
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name)
    first = node.body[-1]
    lines = text.splitlines(keepends=True)
    indent = " " * first.col_offset
    lines.insert(first.lineno - 1, f"{indent}pass  # edited by a test\n")
    Path(path).write_text("".join(lines))
