"""The project folder a command works in: where ``banditrepro``'s default paths point.

``--project DIR``, else the environment variable BANDITREPRO_PROJECT, else the current directory or its
nearest parent that holds config/datasets.yaml. Standard library only (``banditrepro --help`` stays fast).
"""

from __future__ import annotations

import os
from pathlib import Path

from banditrepro import ReproError

PROJECT_ENV = "BANDITREPRO_PROJECT"
PROJECT_MARKER = "config/datasets.yaml"  # a folder holding this file is a project


class Project:
    """Where the default paths point: ``root`` (None if no project was found) and how it was chosen."""

    def __init__(self, root: Path | None, how: str):
        self.root, self.how = root, how

    def path(self, rel: str) -> str:
        """A default path: as given when the project is the current directory (messages stay short)."""
        if self.root is None or self.root == Path.cwd().resolve():
            return rel
        return str(self.root / rel)

    def hint(self) -> str:
        """Where the defaults were looked for and how to point elsewhere (appended to errors)."""
        fix = f"add --project DIR after the command or set {PROJECT_ENV}"
        if self.root is None:
            return f"{self.how}; {fix}"
        return f"project {self.root} ({self.how}); {fix} to use another"


def find_project(option: str | None = None, environ=None, cwd: Path | None = None) -> Project:
    """The project folder: ``option`` (--project), else $BANDITREPRO_PROJECT, else ``cwd`` or its nearest
    parent holding config/datasets.yaml. A named folder must exist; it need not hold a catalog (the
    commands that need one say so)."""
    environ = os.environ if environ is None else environ
    for value, how in ((option, "from --project"), (environ.get(PROJECT_ENV) or None, f"from ${PROJECT_ENV}")):
        if value is not None:
            root = Path(value).expanduser()
            if not root.is_dir():
                raise ReproError(f"project folder {value!r} ({how}) is not a folder")
            return Project(root.resolve(), how)
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_MARKER).is_file():
            return Project(folder, "the current directory" if folder == here else f"nearest parent of {here} "
                           f"holding {PROJECT_MARKER}")
    return Project(None, f"no project found: no {PROJECT_MARKER} in {here} or its parents")
