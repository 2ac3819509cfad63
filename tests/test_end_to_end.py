"""The whole workflow on config/ci.yaml in a temporary copy, then the caching promises.

One build (a few minutes on 2 cores) serves every test in this module: artifact checks, a
second dry run with nothing to do, partial reruns after edits, and resume after a SIGKILL.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import CI_CONFIG, package_env, plan_of, readable, run_file, run_id, run_snakemake
from depthwidth import contracts, fits
from depthwidth.columns import curves_table
from depthwidth.contracts import ENTROPY_TABLE, SDE_TERMINAL, sweep_table
from depthwidth.data import tokens
from depthwidth.plan.second import look_path
from depthwidth.tables import bits
from depthwidth.train.checkpoint import CHECKPOINT_NAME

CI = ["--configfile", "config/ci.yaml"]
PLAN = plan_of(CI_CONFIG)
NAME = PLAN.name  # what the ci config concludes lies under results/ci/
CLAIMS_CSV, CLAIMS_MD = contracts.claims_files(NAME)


def planned_outputs(work: Path, *args: str) -> set[str]:
    """Every output file the dry run would (re)build."""
    result = run_snakemake("-n", *args, cwd=work, check=True)
    outputs = set()
    for line in result.stdout.splitlines():
        if line.startswith("    output: "):
            outputs.update(path.strip() for path in line.removeprefix("    output: ").split(","))
    return outputs


@pytest.fixture(scope="module")
def built(ci_build, tmp_path_factory) -> Path:
    """A copy of the session's ci build (shared with the cluster tests), for these tests to change."""
    work = tmp_path_factory.mktemp("e2e") / "work"
    subprocess.run(["cp", "-a", str(ci_build), str(work)], check=True)
    return work


def test_everything_is_built_and_checked(built):
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results", *CI],
        cwd=built,
        env=package_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    claims = (built / CLAIMS_CSV).read_text()
    assert "noci_glue" in claims and "not run" in claims


def test_second_run_has_nothing_to_do(built):
    assert planned_outputs(built, *CI) == set()


def run_check(built: Path) -> subprocess.CompletedProcess:
    """`python -m depthwidth check results` on the ci build `built`, its output captured."""
    command = [sys.executable, "-m", "depthwidth", "check", "results", *CI]
    return subprocess.run(command, cwd=built, env=package_env(), capture_output=True, text=True)


@contextmanager
def damaged(path: Path, damage) -> Iterator[None]:
    """`path` damaged by `damage(path)` within the block, then restored as built (bytes and times: no rerun)."""
    original, stat = path.read_bytes(), path.stat()
    try:
        damage(path)
        yield
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_check_catches_a_broken_artifact(built):
    figure = contracts.figure_path(NAME, "kaplan_fig6")
    with damaged(built / figure, lambda path: path.write_bytes(b"not a png")):
        result = run_check(built)
    assert result.returncode == 1 and f"{figure}: not a PNG file" in result.stdout


def drawn_at(level: float | None):
    """A damage: the figure CSV's rows say their intervals are at `level` (None: the column left out)."""

    def damage(path: Path) -> None:
        rows = pd.read_csv(path)
        (rows.drop(columns=fits.LEVEL_COLUMN) if level is None else rows.assign(level=level)).to_csv(path, index=False)

    return damage


@pytest.mark.parametrize("level", [0.99, None])
def test_check_holds_a_figures_rows_to_the_level_the_config_draws_it_at(built, level):
    """Each figure CSV records the level of its intervals (the ci config draws them at 95%, one look); one drawn at
    another, or by code that did not record it, is named: the claims would read its intervals at the wrong level."""
    figure = contracts.figure_path(NAME, "kaplan_fig6", ".csv")
    assert set(pd.read_csv(built / figure)[fits.LEVEL_COLUMN]) == {0.95}
    with damaged(built / figure, drawn_at(level)):
        result = run_check(built)
    said = "records no 'level' of its intervals" if level is None else "its intervals are at 0.99, where the config"
    assert result.returncode == 1 and f"{figure}: {said}" in result.stdout, result.stdout


def without_first_run(path: Path) -> None:
    curves = pd.read_csv(path)
    curves[curves["run_id"] != curves["run_id"].iloc[0]].to_csv(path, index=False)


def test_check_holds_a_curves_table_to_its_sweep_tables_runs(built):
    table = contracts.table_path(NAME, curves_table("design"))
    with damaged(built / table, without_first_run):
        result = run_check(built)
    assert result.returncode == 1 and f"{table}: its runs are not the runs of its sweep table" in result.stdout


def restated(change):
    """A damage for `damaged`: the JSON file rewritten with `change` applied to its first decision."""

    def damage(path: Path) -> None:
        record = json.loads(path.read_text())
        change(record["decisions"][0])
        path.write_text(json.dumps(record))

    return damage


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda d: d.update(verdict="holds"),
            "claim kaplan_depth_collapse: decide found 'holds' where its figure gives",
        ),
        (lambda d: d.update(claim="kaplan_power_law"), "decides kaplan_power_law, no claim of the figure kaplan_fig6"),
        (lambda d: d.pop("shapes"), "not a record of decisions (TypeError"),
        (  # a decision priced otherwise than the design prices (say, at a measured wall time): it would ask otherwise
            lambda d: d.update(shape_minutes=[m * 2 for m in d["shape_minutes"]]),
            "claim kaplan_depth_collapse prices ",
        ),
    ],
)
def test_check_holds_each_decision_to_its_figure_and_its_verdict(built, change, problem):
    record = PLAN.decide_file("kaplan_fig6")
    with damaged(built / record, restated(change)):
        result = run_check(built)
    assert result.returncode == 1 and f"{record}: {problem}" in result.stdout, result.stdout


def assert_only_figure_and_claims(outputs: set[str], figure: str, decide: list[str]) -> None:
    """The planned outputs are one figure's three files plus the claims and captions that read it, and the `decide`
    records named (which run the figure's code, and the claims package, which reads the figures' registry)."""
    figures = {p for p in outputs if p.startswith(f"{contracts.config_dir(NAME)}/figures/")}
    assert figures == set(contracts.figure_files(NAME, figure))
    # a decide job writes its record and the figure's rows at look 1 beside it (plan/second.py)
    looks = [look_path(NAME, Path(record).stem) for record in decide]
    decided = {*decide, *looks, *map(contracts.unstalled_path, looks)}
    assert outputs - figures == {CLAIMS_CSV, CLAIMS_MD, PLAN.decisions_file(), *PLAN.captions(), *decided}


def test_editing_one_plot_module_reruns_only_its_figure(built):
    module = built / "workflow/depthwidth/plots/levine_regimes.py"
    source = module.read_text()
    try:
        module.write_text(source + "\n# an edit\n")
        outputs = planned_outputs(built, *CI)
    finally:
        module.write_text(source)
    assert_only_figure_and_claims(outputs, "levine_regimes", [PLAN.decide_file("levine_regimes")])


def test_editing_one_figure_title_reruns_only_that_figure(built):
    registry = built / "workflow/depthwidth/plots/registry.py"
    source = registry.read_text()
    title = "Levine: loss vs non-embedding N per depth, threshold width 3^L marked"
    assert title in source
    try:
        registry.write_text(source.replace(title, "Levine: two regimes per depth"))
        outputs = planned_outputs(built, *CI)
    finally:
        registry.write_text(source)
    assert_only_figure_and_claims(outputs, "levine_regimes", PLAN.decide_files())


def test_a_moved_checkout_keeps_its_cache(built, tmp_path):
    moved = tmp_path / "moved"
    subprocess.run(["cp", "-a", str(built), str(moved)], check=True)
    assert planned_outputs(moved, *CI) == set()


def test_a_deleted_run_output_is_rebuilt_and_check_reruns_when_an_input_changes(built, tmp_path):
    # `check` declares its report, results/<config>/check.txt: asked for, it runs once, then is up to date
    report = contracts.check_path(NAME)
    assert report in planned_outputs(built, "check", *CI)
    run_snakemake("--cores", "1", "check", *CI, cwd=built, check=True)
    assert (built / report).read_text().splitlines()[0].endswith(": 0 problems")
    assert planned_outputs(built, "check", *CI) == set()
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    metrics = run_file(PLAN, "L1-d46-h2-f184-s0", "metrics.json")
    (copy / metrics).unlink()
    assert metrics in planned_outputs(copy, *CI)  # `all` names every run output: a deleted one is rebuilt
    # checking again (`--forcerun check`, as the rule says) rebuilds it first
    assert {metrics, report} <= planned_outputs(copy, "--forcerun", "check", "check", *CI)
    # an input that changed since the report (here its code: check.py, which its command runs) makes `check` run
    # again, and nothing else
    edited = tmp_path / "edited"
    subprocess.run(["cp", "-a", str(built), str(edited)], check=True)
    module = edited / "workflow/depthwidth/check.py"
    module.write_text(module.read_text() + "\n# an edit\n")
    assert planned_outputs(edited, "check", *CI) == {report}


@contextmanager
def sweep_changed(work: Path, change) -> Iterator[str]:
    """config/ci.yaml edited as a user edits it, by `change(sweep_block)`, for the dry runs of the block; restored
    after (a copy under the same name that plans other runs is refused: it would write results/ci/ over ci's)."""
    path = work / "config/ci.yaml"
    original = path.read_text()
    config = yaml.safe_load(original)
    change(config["sweep"])
    path.write_text(yaml.safe_dump(config))
    try:
        yield "config/ci.yaml"
    finally:
        path.write_text(original)


def run_folders(outputs: set[str]) -> set[str]:
    """The run ids of the planned outputs under results/runs/."""
    runs = f"{contracts.run_dir('')}"
    return {p.removeprefix(runs).split("/")[0] for p in outputs if p.startswith(runs)}


def test_a_new_seed_reruns_only_the_new_runs_and_their_consumers(built):
    with sweep_changed(built, lambda sweep: sweep["seeds"].append(1)) as changed:
        outputs = planned_outputs(built, "--configfile", changed)
        new = plan_of(built / changed)
    runs = run_folders(outputs)
    assert runs and all(readable(run).endswith("-s1") for run in runs)
    assert runs == set(new.runs) - set(PLAN.runs)  # every new run, and no other
    untouched = (contracts.table_path(NAME, ENTROPY_TABLE), contracts.table_path(NAME, SDE_TERMINAL))
    assert not any(p.startswith((f"{contracts.RESULTS}/data/", f"{contracts.RESULTS}/simulations/")) for p in outputs)
    assert not set(untouched) & outputs
    shaped = tuple(contracts.figure_path(NAME, figure, "") for figure in ("shaped_sde", "shaped_rank"))
    assert not any(p.startswith(shaped) for p in outputs)


def test_a_new_n_reruns_only_the_design_runs_at_that_n(built):
    with sweep_changed(built, lambda sweep: sweep["design"]["n"].append(100000)) as changed:
        outputs = planned_outputs(built, "--configfile", changed)
        new = plan_of(built / changed)
    # N = 100k at depths 1, 2, 4
    assert run_folders(outputs) == {
        run_id(new, name) for name in ("L1-d92-h4-f368-s0", "L2-d64-h4-f256-s0", "L4-d46-h2-f184-s0")
    }
    tables = {p for p in outputs if p.startswith(f"{contracts.config_dir(NAME)}/tables/")}
    assert tables == {contracts.table_path(NAME, table) for table in (sweep_table("design"), curves_table("design"))}
    unaffected = tuple(
        contracts.figure_path(NAME, figure, ".")
        for figure in ("kaplan_fig5_ffratio", "kaplan_fig5_headdim", "kaplan_power_law")
    )
    assert not any(p.startswith(unaffected) for p in outputs)  # figures that do not read the design


def test_killed_training_job_resumes_to_the_same_metrics(built):
    job_of = PLAN.runs[run_id(PLAN, "L3-d52-h4-f208-s0")]
    run = job_of.folder
    metrics_path = built / run / "metrics.json"
    reference = json.loads(metrics_path.read_text())
    curve = (built / run / "curve.csv").read_text()
    for name in ("metrics.json", "curve.csv"):
        (built / run / name).unlink()

    def checkpoints() -> list[Path]:  # beside the run's folder, named by its run id (so by its spec)
        return list(built.glob(f"{job_of.checkpoint_dir}/{CHECKPOINT_NAME}"))

    job = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "1", f"{run}/metrics.json", *CI],
        cwd=built,
        env=package_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 120
        while not checkpoints() and time.time() < deadline and job.poll() is None:
            time.sleep(0.05)
        assert checkpoints(), "no checkpoint appeared before the run ended"
        (checkpoint,) = checkpoints()
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    assert not metrics_path.exists()
    run_snakemake("--unlock", *CI, cwd=built, check=True)  # a killed snakemake leaves its lock
    run_snakemake("--cores", "1", "--rerun-incomplete", f"{run}/metrics.json", *CI, cwd=built, check=True)
    resumed = json.loads(metrics_path.read_text())
    assert (built / run / "curve.csv").read_text() == curve
    for key in ("final_val_loss", "best_val_loss", "tokens_seen", "status"):
        assert resumed[key] == reference[key], key
    assert not checkpoint.parent.exists()


# ---------------------------------------------------------------------------------------------
# Hand edits and stale reports: what check and the next snakemake make of them


def copy_of(ci_build: Path, dest: Path) -> Path:
    """A copy of the session's ci build as built (the module's `built` has runs retrained by the tests above)."""
    subprocess.run(["cp", "-a", str(ci_build), str(dest)], check=True)
    return dest


def as_read(value: float) -> float:
    """`value` written to a CSV and read back, as `check` reads the rows it recomputes (the last digit may move)."""
    return float(pd.read_csv(io.StringIO(pd.DataFrame({"v": [value]}).to_csv(index=False)))["v"].iloc[0])


def check_results(work: Path, *argv: str) -> tuple[int, list[str]]:
    """Exit code and problem lines of `check results` in `work`."""
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results", *CI, *argv],
        cwd=work,
        env=package_env(),
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result.returncode, [line.removeprefix("  - ") for line in result.stdout.splitlines()[1:]]


def test_check_names_a_run_that_trained_with_another_warmup(ci_build, tmp_path):
    work = copy_of(ci_build, tmp_path / "work")
    metrics_file = run_file(PLAN, "L1-d46-h2-f184-s0", "metrics.json")
    path = work / metrics_file
    metrics = json.loads(path.read_text())
    assert metrics["spec"]["recipe"]["warmup_tokens"] == 10000
    metrics["spec"]["recipe"]["warmup_tokens"] = 5000
    path.write_text(json.dumps(metrics))
    assert check_results(work) == (
        1,
        [f"{metrics_file}: its spec differs from the plan's at recipe.warmup_tokens: 10000 planned, 5000 ran"],
    )


def test_check_out_holds_a_passing_report_and_no_stale_one(ci_build, tmp_path):
    work = copy_of(ci_build, tmp_path / "work")
    report = tmp_path / "check.txt"
    code, problems = check_results(work, "--out", str(report))
    assert (code, problems) == (0, []) and report.read_text().splitlines()[0].endswith(": 0 problems")
    figure = contracts.figure_path(NAME, "kaplan_fig6")
    (work / figure).write_bytes(b"not a png")
    code, problems = check_results(work, "--out", str(report))
    assert code == 1 and problems == [f"{figure}: not a PNG file"]
    assert not report.exists()


def edit_curve_row(path: Path, row: int, column: str, value: float) -> float:
    """Set one cell of curve.csv (row counted from the first data row; -1 the last) as text; returns the old value."""
    header, *rows = path.read_text().splitlines()
    cells = rows[row].split(",")
    index = header.split(",").index(column)
    old, cells[index] = float(cells[index]), repr(value)
    rows[row] = ",".join(cells)
    path.write_text("\n".join([header, *rows]) + "\n")
    return old


@pytest.mark.parametrize("edit", ["mid-file", "alike"])
def test_a_hand_edited_run_never_reaches_the_claims(ci_build, tmp_path, edit):
    work = copy_of(ci_build, tmp_path / "work")
    run = contracts.run_dir(run_id(PLAN, "L2-d46-h2-f184-s0"))
    claims = (work / CLAIMS_CSV).read_bytes()
    experiments = ("design", "ffratio")  # the run's tables
    tables = [contracts.table_path(NAME, sweep_table(experiment)) for experiment in experiments]
    assert all(f"{run.split('/')[-1]}," in (work / table).read_text() for table in tables)
    expected = [f"{run}/curve.csv: differs from the curve_sha256 its metrics.json records"]
    if edit == "mid-file":
        edit_curve_row(work / run / "curve.csv", 10, "train_loss", 9.5)
    else:  # metrics.json and the last curve row agree on a lower loss; the tables still hold the real one
        metrics = json.loads((work / run / "metrics.json").read_text())
        forged = round(metrics["final_val_loss"] - 0.1, 4)
        assert edit_curve_row(work / run / "curve.csv", -1, "val_loss", forged) == metrics["final_val_loss"]
        (work / run / "metrics.json").write_text(json.dumps({**metrics, "final_val_loss": forged}))
        per_token = bits.bytes_per_token(tokens.read_meta(work / PLAN.data_dir))
        for table in tables:  # the loss, and the loss in bits per byte
            rows = pd.read_csv(work / table).set_index("run_id")
            held = float(rows.loc[run.split("/")[-1], "final_val_bpb"])
            expected += [
                f"{table}: {run.split('/')[-1]}: final_val_loss {metrics['final_val_loss']!r}, its run's metrics.json "
                f"gives {forged!r}",
                f"{table}: {run.split('/')[-1]}: final_val_bpb {held!r}, its run's metrics.json gives "
                f"{as_read(bits.bits_per_byte(forged, per_token))!r}",
            ]
    assert check_results(work) == (1, expected)
    rebuild = run_snakemake("--cores", "1", "--keep-going", *CI, cwd=work)
    assert rebuild.returncode != 0
    for table in tables:  # each table that reads the run refuses it, in one line
        log = (work / contracts.log_path(NAME, f"tables/{Path(table).stem}")).read_text()
        assert log.strip().splitlines() == [
            f"depthwidth sweep-table: error: {run}/curve.csv: differs from the curve_sha256 its metrics.json "
            "records; retrain the run or restore the file"
        ]
    assert (work / CLAIMS_CSV).read_bytes() == claims


def test_two_looks_read_the_first_stage_and_train_what_the_second_asks(ci_build, tmp_path):
    """With two looks (decide.looks 2) the ci build gains the first stage's tables, the rows at look 1, the second
    stage (ci's one seed per shape prices no seed; the SDE row asks for its sample jobs again, which the build runs)
    and decisions.csv, and check holds each to its recomputation. A second stage that asks for two fresh seeds of one
    shape, one of an attention kind and a sample job's third plans exactly those runs and that job and the tables,
    figures and claims that read them; and check names a second stage the decisions do not give."""
    work = copy_of(ci_build, tmp_path / "work")
    looks = ("--config", "decide={looks: 2}")
    run_snakemake("--cores", "2", *CI, *looks, cwd=work, check=True)
    second = work / "results" / NAME / "decide" / "second-stage.json"
    record = json.loads(second.read_text())
    # ci's one seed per shape prices no seed; the SDE row, whose samples measure their own noise, asks for more of them
    sampled = {name for name in plan_of(CI_CONFIG).sample_jobs()}
    assert set(record["shapes"]) == sampled and set(record["shapes"].values()) == {1}
    reasons = {ask["claim"]: ask["reason"] for ask in record["asks"]}
    assert reasons.pop("noci_sde_describes_finite") == "asked"
    assert set(reasons.values()) <= {"undecidable", "noise_unknown"}
    trail = pd.read_csv(work / "results" / NAME / "decisions.csv")
    assert set(trail["look"]) == {1, 2} and (trail.groupby("claim").size() == 2).all()
    assert check_results(work, *looks) == (0, [])
    design = pd.read_csv(work / contracts.table_path(NAME, sweep_table("design")))
    named = design.sort_values(["seed", "run_id"])["run_id"].iloc[0]
    # and one fresh seed of standard attention at the top rate, named as the entropy row's decide job names it
    entropy = pd.read_csv(work / contracts.table_path(NAME, ENTROPY_TABLE))
    top = entropy[(entropy["lr"] == entropy["lr"].max()) & (entropy["attention"] == "standard")]
    kind = top.sort_values(["seed", "run_id"])["run_id"].iloc[0]
    # and the samples of one finite width once more, named as the SDE row's decide job names its sample jobs
    asked = record["shapes"]
    record["shapes"] = {**asked, named: 2, kind: 1, "attention-n16": 2}
    second.write_text(json.dumps(record))
    planned = planned_outputs(work, *CI, *looks)
    fresh = {p.split("/")[2] for p in planned if p.startswith("results/runs/")}
    expected = {f"{readable(named)[:-3]}-s3000", f"{readable(named)[:-3]}-s3001", f"{readable(kind)[:-3]}-s3000"}
    assert {readable(run) for run in fresh} == expected
    (sampled,) = [p for p in planned if p.startswith("results/simulations/")]  # one sample job, new: its seed 3001
    assert readable(Path(sampled).stem) == "attention-n16" and not (work / sampled).exists()
    assert contracts.table_path(NAME, sweep_table("design")) in planned
    assert contracts.table_path(NAME, ENTROPY_TABLE) in planned
    assert contracts.table_path(NAME, SDE_TERMINAL) in planned
    assert contracts.table_path(NAME, sweep_table("headdim")) not in planned  # it does not read the shape
    assert look_path(NAME, "shaped_entropy") not in planned  # look 1 reads the first stage's table, unchanged
    code, problems = check_results(work, *looks)
    said = f"asks for {record['shapes']}, the decisions and the design give {asked}"
    assert code == 1 and f"results/{NAME}/decide/second-stage.json: {said}" in problems
    assert {p.split("/")[2] for p in problems if p.endswith("metrics.json: missing")} == fresh  # not trained yet
