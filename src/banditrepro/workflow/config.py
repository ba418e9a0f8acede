"""The workflow config, shaped in one place: ``shape_config`` merges cluster mode in (``apply_cluster_mode``),
renames deprecated keys, validates against workflow/schemas/config.schema.yaml and fills in its defaults
(``check_config``). Every way in reaches it: the Snakefile through ``plan.build_plan``, the CLI through
``plan.open_project`` (its config merged by Snakemake's own code first: ``merged_config``) or ``load_config``,
and the sharing commands through the config a results folder recorded (``recorded_config``, then ``build_plan``).

Errors are one line naming the key and the bad value (snakemake.utils.validate prints the whole schema
around it), raised as ``ConfigError``; ``fail`` prints such a line and exits non-zero without a traceback
(also for ``snakemake -n``).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import sys
from pathlib import Path

from banditrepro import ReproError, yamlfile

SCHEMA = "workflow/schemas/config.schema.yaml"  # under the project root


class ConfigError(ReproError):
    """A config value the schema rejects."""


class UnreadableConfig(ReproError):
    """A config file or a ``--config`` entry Snakemake's own code cannot read."""


# Config keys renamed so that each says what it sizes (runs per shard, seconds per shard, minutes per
# batch): the old names are accepted for one release, with one line on stderr each.
ALIASES = {"cells_per_job": "runs_per_shard", "job_seconds": "shard_seconds", "job_minutes": "batch_minutes"}


# Keys that size or route the work and change no result's bytes (a shard's runs are the same whatever shard or
# batch holds them; mirrors and download settings fetch the same checksummed files): left out of the config a
# results folder records (``results_config``), so a cluster run and a laptop run of one config record the same
ENGINE_KEYS = ("runs_per_shard", "shard_seconds", "batch_minutes", "partition_minutes", "data_mirrors", "download",
               "first_run")


def results_config(cfg: dict) -> dict:
    """What a results folder records of its config (``published.json``): every key but the engine's."""
    return {k: v for k, v in sorted(cfg.items()) if k not in ENGINE_KEYS and k not in ALIASES}


def apply_aliases(cfg: dict, stderr=None) -> None:
    """Move each deprecated key's value to its new name (a new name given too wins), one line each."""
    for old, new in ALIASES.items():
        if old in cfg:
            value = cfg.pop(old)
            cfg.setdefault(new, value)
            (stderr or sys.stderr).write(f"banditrepro: config key '{old}' is deprecated: use '{new}'\n")


def fail(message) -> None:
    """Stop parsing the workflow: ``banditrepro: <message>`` on stderr, exit status 1."""
    sys.exit(f"banditrepro: {message}")


def apply_defaults(schema: dict, doc: dict) -> None:
    """Fill in the schema's ``default`` of every missing key, recursively through nested objects."""
    for key, sub in schema.get("properties", {}).items():
        if key not in doc and "default" in sub:
            doc[key] = copy.deepcopy(sub["default"])
        if isinstance(doc.get(key), dict) and sub.get("type") == "object":
            apply_defaults(sub, doc[key])


def _reason(err) -> str:
    if err.validator == "oneOf":
        return "expected " + " or ".join(
            f"an integer >= {s['minimum']}" if s.get("type") == "integer" else repr(s.get("const"))
            for s in err.schema["oneOf"]
        )
    # a schema `title` says in words what a pattern or a combination of types requires
    return err.schema.get("title") or err.message.replace("\n", " ")


def error_line(schema: dict, cfg: dict) -> str | None:
    """The first schema error of ``cfg`` as one line (the shallowest key first), or None."""
    import jsonschema  # deferred: 70 ms of import (python -X importtime), paid only when a config is checked

    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(cfg))
    if not errors:
        return None
    err = min(errors, key=lambda e: (len(e.absolute_path), str(list(e.absolute_path))))
    where = ".".join(str(p) for p in err.absolute_path)
    if err.validator == "additionalProperties":
        known = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(known))
        prefix = f"{where}." if where else ""
        return f"config error: unknown key {prefix}{extra[0]} (known: {', '.join(known)})"
    return f"config error: {where} = {json.dumps(err.instance)}: {_reason(err)}"


RULE = "simulate"  # the rule whose resource carries cluster mode's batch size (profiles/slurm's set-resources)
SETTING = "batch_minutes"


def minutes_from_resources(overwrite_resources) -> float | None:
    """``batch_minutes`` of rule simulate from Snakemake's --set-resources mapping ({rule: {name: value}},
    values Snakemake ``Resource`` objects or plain numbers), or None. ValueError on a value not a number."""
    rule = (overwrite_resources or {}).get(RULE) or {}
    if SETTING not in rule:
        return None
    value = rule[SETTING]
    raw = getattr(value, "raw", value)  # a Resource keeps what was written (20, or "0.5": an expression)
    try:
        minutes = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"--set-resources {RULE}:{SETTING}={raw!r} is not a number of minutes") from None
    if not minutes > 0:
        raise ValueError(f"--set-resources {RULE}:{SETTING}={raw!r} must be > 0")
    return int(minutes) if minutes == int(minutes) else minutes


def apply_cluster_mode(config: dict, minutes: float | None) -> dict:
    """Cluster mode into ``config`` (in place): a batch_minutes the config sets (not null) wins, as a
    user's explicit size; else the profile's resource. The deprecated ``job_minutes`` counts as set."""
    if minutes is not None and config.get("batch_minutes") is None and config.get("job_minutes") is None:
        config["batch_minutes"] = minutes
    return config


def cell_runs_from_command_line(cfg: dict) -> None:
    """``--config 'cell_runs={"<cell key>": 40}'``: Snakemake reads a flow mapping with its YAML base loader, which
    gives every value as a string; a string of digits becomes the integer a config file would give (anything
    else is left for the schema to reject in one line). Nothing else changes: a config file's integers stay."""
    listed = cfg.get("cell_runs")
    if isinstance(listed, dict):
        cfg["cell_runs"] = {k: int(v) if isinstance(v, str) and v.isascii() and v.isdigit() else v
                            for k, v in listed.items()}


def check_config(cfg: dict, schema_path) -> dict:
    """Validate ``cfg`` in place (deprecated keys renamed) and fill in defaults; ``ConfigError`` (one line) on
    the first error."""
    apply_aliases(cfg)
    cell_runs_from_command_line(cfg)
    schema = yamlfile.load(Path(schema_path).read_text())
    line = error_line(schema, cfg)
    if line:
        raise ConfigError(line)
    apply_defaults(schema, cfg)
    return cfg


def shape_config(config: dict, root, cluster_minutes: float | None = None) -> dict:
    """The one place a config is shaped: cluster mode merged in (``cluster_minutes``, the SLURM profile's batch
    size, unless the config sets its own), deprecated keys renamed, validated, defaults filled in. In place (the
    Snakefile's rules read Snakemake's ``config`` itself) and returned; shaping a shaped config changes nothing.
    ``ConfigError`` (one line) on the first error."""
    apply_cluster_mode(config, cluster_minutes)
    return check_config(config, Path(root) / SCHEMA)


def recorded_config(record: dict) -> dict:
    """The config a results folder recorded (published.json), as the sharing commands plan it: a copy whose
    ``results_dir`` is a placeholder the schema accepts (the plan reads the folder where it lies); shaping the
    copy leaves the record as it was read."""
    return copy.deepcopy({**record, "results_dir": "results"})


def declared_datasets(path, root) -> dict:
    """The datasets a workflow config file declares (``datasets:``; the CLI's datasets and prepare), from the file
    shaped as the workflow shapes it; outside a project folder (``root`` None) there is no schema to shape by, and
    they are read as the file writes them. ``ConfigError`` (one line) on a file that is no config."""
    try:
        doc = yamlfile.load(Path(path).read_text()) or {}
    except yamlfile.Error as exc:
        raise ConfigError(f"config file {path}: unreadable YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"config file {path}: not a mapping of config keys")
    if root is None:
        return dict(doc.get("datasets") or {})
    return dict(shape_config(doc, root)["datasets"])


def merged_config(project: Path, configfiles=(), overrides=(), profile: str | None = None) -> tuple[dict, float | None]:
    """The config Snakemake would build for ``snakemake [--workflow-profile profile] [--configfile f ...]
    [--config k=v ...]`` in ``project``, merged by Snakemake's own command-line parser and config code but not yet
    shaped, and the profile's cluster-mode minutes (None if it sets none). ``UnreadableConfig`` (one line)."""
    # deferred: Snakemake's command line is 0.8 s of import (python -X importtime), paid only by commands that plan
    from snakemake.cli import parse_args, parse_config
    from snakemake.common.configfile import load_configfile
    from snakemake.settings.types import ConfigSettings
    from snakemake.utils import update_config

    argv = ["--snakefile", str(project / "Snakefile"), "--workflow-profile", str(profile) if profile else "none"]
    if not profile and (project / "profiles/default").is_dir():  # what snakemake picks up by itself
        argv[-1] = str(project / "profiles/default")
    if configfiles:
        argv += ["--configfile", *map(str, configfiles)]
    if overrides:
        argv += ["--config", *overrides]
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # its "Using workflow specific profile" notice
            _, args = parse_args(argv)
        settings = ConfigSettings(config=parse_config(args.config), configfiles=args.configfile or (),
                                  replace_workflow_config=bool(getattr(args, "replace_workflow_config", False)))
    except (ValueError, SystemExit) as exc:
        raise UnreadableConfig(f"--config: {exc}") from None
    except Exception as exc:  # noqa: BLE001 -- Snakemake's WorkflowError for an unreadable or invalid config file
        raise UnreadableConfig(f"config file: {' '.join(str(exc).split())}") from None
    try:
        minutes = minutes_from_resources(getattr(args, "set_resources", None))
    except ValueError as exc:
        raise UnreadableConfig(str(exc)) from None
    # the Snakefile's `configfile: config/config.yaml`, then what the command line adds (Workflow.configfile)
    try:
        config = {} if settings.replace_workflow_config else load_configfile(str(project / "config/config.yaml"))
        update_config(config, settings.overwrite_config)
    except Exception as exc:  # noqa: BLE001 -- Snakemake's WorkflowError for an unreadable or invalid file
        raise UnreadableConfig(f"config file: {' '.join(str(exc).split())}") from None
    return config, minutes


def load_config(project: Path, configfiles=(), overrides=(), profile: str | None = None) -> dict:
    """The shaped config of ``snakemake [--workflow-profile profile] [--configfile f ...] [--config k=v ...]`` in
    ``project`` (``merged_config``, then ``shape_config``): for a command that needs the config but no plan."""
    config, minutes = merged_config(project, configfiles, overrides, profile)
    return shape_config(config, project, minutes)
