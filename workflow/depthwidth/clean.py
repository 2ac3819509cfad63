"""`clean --configfile A [--dry-run]`: delete what config A built and no other config needs.

What a config concludes lies in results/<name>/ (tables, figures, claims, captions, report, check) with
its logs in results/logs/<name>/: all of it goes. What configs share (results/runs/, results/data/,
results/simulations/, keyed by spec) goes only where no other known config plans it, with the job's
log and benchmark; results/downloads/ (a cache of published files) stays. The other known configs are
every config/**/*.yaml and every config recorded in results/<name>/config.json (`record`: the workflow writes
it as a run of that config starts, never on a dry run). A folder results/<name>/ of a config that is not
known (from a file elsewhere, last run before configs were recorded) could use any shared output, so then
nothing shared is deleted, and the command says which folder kept it; a config file that does not
validate, the same. Clean while no snakemake runs in this folder.

Prints what it deletes (with --dry-run: what it would), one path a line, then one line of totals.
"""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from depthwidth import contracts
from depthwidth.glue.contracts import GLUE_FOLDERS
from depthwidth.io import write_text
from depthwidth.plan.config import ConfigError, add_override_arguments, read, read_overridden
from depthwidth.plan.jobs import Plan, from_config

RECORD = "config.json"  # results/<name>/config.json: the validated config the workflow ran


def record_path(name: str) -> Path:
    return Path(contracts.config_dir(name)) / RECORD


def record(plan: Plan) -> str | None:
    """Write the plan's config to results/<name>/config.json (unless it is there already), so that `clean`
    of another config knows what this one plans; one line saying why it could not (a read-only results folder:
    only clean reads it), else None."""
    path, text = record_path(plan.name), json.dumps(plan.config, indent=1, sort_keys=True) + "\n"
    try:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_text(path, text)
    except OSError as err:
        return f"config not recorded: {err}"
    return None


def shared_paths(plan: Plan) -> dict[str, list[str]]:
    """What a plan shares with other configs, by kind; each entry a path to delete with its log and benchmark.
    Its runs are every run it may train: those it plans and those its learning-rate scans may ask for
    (`sweep.lr_grid`), whose rounds it shares too; every corpus they read (a sensitivity block's vocabulary
    confound prepares its own); and its GLUE stage's tasks, pretrainings and fine-tunings."""
    jobs = [plan.job(run_id) for run_id in plan.all_run_ids()]
    runs = [p for job in jobs for p in (job.folder, job.checkpoint_dir, *job_records("runs", job.run_id))]
    sims = map(plan.simulation, plan.all_simulation_ids())  # those the second stage may ask for too
    simulations = [p for job in sims for p in (job.output, *job_records("simulations", job.id))]
    data = [p for corpus in corpora(plan) for p in (corpus, *job_records("data", Path(corpus).name))]
    scans = [
        p
        for scan in plan.scans.values()
        for p in (
            str(Path(scan.round_path(0)).parent),
            *map(str, sorted(Path(contracts.log_path("rates", scan.id)).parent.glob(f"{scan.id}-round*.log"))),
        )
    ]
    glue = plan.glue
    glue_jobs = [*glue.tasks.values(), *glue.pretrained.values(), *glue.finetuned.values()] if glue else []
    glue_paths = [  # each job's folder, a pretraining's checkpoint beside it, its log and benchmark
        p
        for job in glue_jobs
        for p in (job.folder, f"{job.folder}.ckpt", *job_records(Path(job.folder).parent.name, job.id))
    ]
    return {"runs": runs, "simulations": simulations, "data": data, "rates": scans, "glue": glue_paths}


def corpora(plan: Plan) -> list[str]:
    """The corpus folders a plan's runs read (its data block's, and a sensitivity block's vocabulary confounds')."""
    return sorted({plan.data_dir, *(plan.job(run_id).spec["data"] for run_id in plan.all_run_ids())})


def job_records(kind: str, name: str) -> tuple[str, str]:
    return contracts.log_path(kind, name), contracts.benchmark_path(kind, name)


@dataclass
class Others:
    """The configs other than the one cleaned: their plans, and why some could not be read."""

    plans: dict[str, Plan] = field(default_factory=dict)  # where it was found -> plan
    unknown: list[str] = field(default_factory=list)  # why a config could use shared outputs we cannot tell


def other_configs(plan: Plan, configfile: Path | None = None) -> Others:
    """Every known config but the one cleaned (`plan`, read from `configfile`): each config/**/*.yaml but that
    file, and each results/<name>/config.json record of a config other than `plan`'s (a record of the same name
    that differs, from an edited or a twin file, is another config: its runs stay). results/<other>/ folders of
    no known config, and config files that do not validate, are `unknown`."""
    others = Others()
    ours = Path(configfile).resolve() if configfile else None
    files = [path for path in sorted(Path("config").glob("**/*.yaml")) if path.resolve() != ours]
    records = sorted(Path(contracts.RESULTS).glob(f"*/{RECORD}"))
    for path in [*files, *records]:
        try:
            raw = read(path) if path.suffix == ".yaml" else json.loads(path.read_text(encoding="utf-8"))
            other = from_config(raw)
        except (ConfigError, ValueError, OSError) as err:
            others.unknown.append(f"{path} does not plan ({err})")
            continue
        if path.suffix == ".yaml" or other.config != plan.config:  # a record of this very config is none other
            others.plans[str(path)] = other
    names = {other.name for other in others.plans.values()} | {plan.name, *contracts.SHARED_FOLDERS, *GLUE_FOLDERS}
    for folder in sorted(Path(contracts.RESULTS).glob("*/")):
        if folder.is_dir() and folder.name not in names:
            others.unknown.append(f"{folder}/ is the folder of a config that is neither in config/ nor recorded")
    return others


def to_delete(plan: Plan, others: Others) -> tuple[list[str], list[str]]:
    """The existing paths to delete, and one line per reason something stays."""
    paths, kept = [contracts.config_dir(plan.name), f"{contracts.RESULTS}/logs/{plan.name}"], []
    twins = [where for where, other in others.plans.items() if other.name == plan.name and where.endswith(".yaml")]
    if twins:  # another config file of this name concludes into the same folders
        kept.append(f"{paths[0]}/ and {paths[1]}/ stay: {', '.join(twins)} has the name {plan.name} too")
        paths = []
    if others.unknown:
        kept += [f"every shared output stays: {why}" for why in others.unknown]
    else:
        used = set()
        for other in others.plans.values():
            used.update(p for paths in shared_paths(other).values() for p in paths)
        for kind, candidates in shared_paths(plan).items():
            mine = [p for p in candidates if p not in used]
            paths += mine
            if len(mine) < len(candidates):
                users = sorted(
                    where for where, other in others.plans.items() if set(shared_paths(other)[kind]) & set(candidates)
                )
                kept.append(f"{kind}: {len(candidates) - len(mine)} paths stay, planned by {', '.join(users)}")
    return [p for p in paths if Path(p).exists() or Path(p).is_symlink()], kept


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--configfile", required=True, type=Path, help="the config whose results to delete")
    parser.add_argument("--dry-run", "-n", action="store_true", help="list what would be deleted; delete nothing")
    add_override_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if not Path(contracts.RESULTS).is_dir():  # run elsewhere, it would find nothing and say it deleted nothing
        raise FileNotFoundError(
            f"no {contracts.RESULTS}/ folder in {Path.cwd()}: run clean in the folder the workflow runs in"
        )
    plan = from_config(read_overridden(args.configfile, args.config))
    paths, kept = to_delete(plan, other_configs(plan, args.configfile))
    for path in paths:
        print(path)
        if not args.dry_run:
            target = Path(path)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
    for line in kept:
        print(f"kept: {line}")
    verb = "would delete" if args.dry_run else "deleted"
    print(f"clean {plan.name}: {verb} {len(paths)} paths" + ("; kept what the lines above say" if kept else ""))
    return 0
