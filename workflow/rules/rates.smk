# Stage 2a (sweep.lr_grid): each shape's learning-rate scan, one round a job, each round a checkpoint. A round
# reads every scout so far and asks for more or chooses the rate every seed trains at (depthwidth.rates); the
# tables read each shape's runs at its scan's chosen rate, and the scan's final round.


def round_record(scan_id, round_):
    """A round's path and record, read and recomputed (rates.read_round); IncompleteCheckpointException while
    it is not done, and one line naming a damaged one (no_traceback)."""
    path = checkpoints.rate_scan.get(scan=scan_id, round=round_).output[0]
    with no_traceback(rates.RoundError):
        return path, rates.read_round(path, PLAN.scans[scan_id].spec)


def scan_rounds(scan_id):
    """The paths and records of a scan's rounds, in order, up to the one that chose."""
    rounds = [round_record(scan_id, 0)]
    while not rounds[-1][1]["done"]:
        rounds.append(round_record(scan_id, len(rounds)))
    return rounds


def chosen_indices(experiment):
    """The lattice index each scan that decides an experiment's runs chose (ScansIncomplete: those not done)."""
    scans = PLAN.experiment_scans(experiment)
    return dict(zip(scans, each_scan(scans, lambda s: scan_rounds(s)[-1][1]["chosen"])))


def round_files(scan_ids):
    """Every round of the scans `scan_ids`, up to the one that chose (ScansIncomplete: those not done)."""
    return sum(each_scan(scan_ids, lambda s: [path for path, _ in scan_rounds(s)]), [])


def get_experiment_rounds(wildcards):
    """The rounds of the scans that decide an experiment's runs: its table reads their final rounds."""
    return round_files(PLAN.experiment_scans(wildcards.experiment))


def table_run_ids(table):
    """The runs a table reads, each run a scan decides at its scan's chosen rate."""
    experiment = sweep_experiment(table)
    if experiment is None:
        return PLAN.table_runs(table)
    chosen = chosen_indices(experiment)
    return [
        PLAN.chosen_run(experiment, run_id, chosen.get)
        for run_id in PLAN.table_runs(table)
    ]


def get_table_run_files(table, name):
    """One file (`name`) of every run a table (a table id, or a function of the wildcards) reads."""
    return lambda wildcards: [
        f"{contracts.run_dir(run)}/{name}"
        for run in table_run_ids(table(wildcards) if callable(table) else table)
    ]


def get_sweep_table(wildcards):
    return sweep_table(wildcards.experiment)


def get_first_runs(wildcards):
    """A sweep table's runs on the first stage's seeds, each at its scan's chosen rate."""
    with one_round_named():  # a params function may wait on one of its inputs only
        chosen = chosen_indices(wildcards.experiment)
    return as_json(PLAN.chosen_plan(wildcards.experiment, chosen.get))


def second_stage_rows(experiment):
    """An experiment's second-stage runs (run id -> what its table needs): {} with one look, or none asked."""
    if PLAN.design.looks == 1 or experiment == "lr_check":
        return {}
    asked = second.asked(checkpoints.second_stage.get().output[0])
    return (
        PLAN.second_plan(experiment, chosen_indices(experiment).get, asked)
        if asked
        else {}
    )


def get_sweep_runs(wildcards):
    """A sweep table's runs: the first stage's and, with two looks, those the second stage asked for."""
    with one_round_named():  # a params function may wait on one of its inputs only
        chosen = chosen_indices(wildcards.experiment)
        rows = second_stage_rows(wildcards.experiment)
    return as_json({**PLAN.chosen_plan(wildcards.experiment, chosen.get), **rows})


def get_second_run_files(name):
    """One file (`name`) of every second-stage run of an experiment's table (none with one look)."""
    return lambda wildcards: [
        f"{contracts.run_dir(run)}/{name}"
        for run in second_stage_rows(wildcards.experiment)
    ]


def stage_asked(figure):
    """What the second stage asked for, where `figure` grows (looks 2): {} otherwise."""
    if not PLAN.grows(figure):
        return {}
    return second.asked(checkpoints.second_stage.get().output[0])


def get_entropy_second_files(wildcards):
    """Every file of the shaped training's second-stage runs (none with one look, or none asked)."""
    return [
        f"{contracts.run_dir(run)}/{name}"
        for run in PLAN.entropy_second(stage_asked(second.ENTROPY_FIGURE))
        for name in contracts.RUN_FILES
    ]


def get_sde_samples(wildcards):
    """The sample tables the terminal table reads: the planned ones and, with two looks, those the second stage
    asked for."""
    return PLAN.sde_samples(stage_asked(second.SDE_FIGURE))


def scan_round_runs(wildcards):
    """A round's runs, (`scout` or `confirm`, lattice index, run id): the first scouts, or every run so far and
    those the previous round asked for; and the previous round's file ([] for the first).
    """
    round_ = int(wildcards.round)
    previous, record = (
        round_record(wildcards.scan, round_ - 1) if round_ else ([], None)
    )
    return PLAN.scans[wildcards.scan].round_runs(record), previous


def get_scan_inputs(wildcards):
    runs, previous = scan_round_runs(wildcards)
    return {
        "runs": [f"{contracts.run_dir(r)}/metrics.json" for _, _, r in runs],
        "previous": previous,
    }


def get_scan_arguments(wildcards):
    runs, _ = scan_round_runs(wildcards)
    files = [f"--{kind}={k}={contracts.run_dir(r)}/metrics.json" for kind, k, r in runs]
    return " ".join(map(shlex.quote, files))


def get_scan_spec(wildcards):
    return as_json(PLAN.scans[wildcards.scan].spec)


checkpoint rate_scan:
    input:
        unpack(get_scan_inputs),
        code=package_code("rate-scan"),
    output:
        RATE_ROUND,
    log:
        contracts.log_path("rates", "{scan}-round{round}"),
    conda:
        CONDA_ENV
    params:
        scan=get_scan_spec,
        scouts=get_scan_arguments,
    shell:
        "python -m depthwidth rate-scan --scan-json {params.scan:q} {params.scouts} --out {output:q} > {log:q} 2>&1"
