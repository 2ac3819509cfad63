"""The columns of the tables the stages after training exchange, and the enums they share, written once.
Torch-free and stdlib-only like contracts.py, but apart from it: contracts.py is code of every job (training
included), so a new column, block or verdict here reruns the simulations, tables, figures and claims that read
it (their commands import it: contracts.code_files) and never the training."""

from __future__ import annotations

BLOCKS = ("attention", "mlp", "both")  # the shaped block a simulation runs
SIMULATION_ATTENTIONS = ("shaped", "standard")  # finite networks at initialization; the SDE is the shaped limit
LR_CHECK = "lr_check"  # the protocol check: shapes at fixed factors of the rule's rate, no scan (plan, claims, check)
EXPERIMENTS = (
    "design",
    "literal",
    "ffratio",
    "headdim",
    "baseline",
    LR_CHECK,
)  # the sweep's experiments, in plan order
SENSITIVITY_PREFIX = "sens_"  # then each confound of the sensitivity block's: sens_tokens, sens_vocab<V>, sens_heads
VERDICTS = ("holds", "does not hold", "inconclusive", "not run")
# claims.csv: each claim in words (claims.wording), then the statistic that decided it in numbers (claims.judge):
# which it is, its value, 95% interval, margin, the learning-rate systematic it carries (how far its true value may
# lie below and above), its unit, and the seeds per shape the rule read
CLAIMS_TEXT_COLUMNS = (
    "id", "paper", "statement", "metric", "paper_value", "paper_at_our_scale", "our_value", "interval", "noise", "rule",
    "verdict", "verdict_unstalled", "what_it_would_take", "scale_note", "figure",
)  # fmt: skip
# what the verdict survives (claims.robustness): the row's verdict at each other count of parameters it is read at,
# `count=verdict` pairs joined by "; "; with a sensitivity block, the depth row's outcome under each confound
# (claims/sensitivity.py: survives, depends, open or untested), `experiment=outcome` likewise; and the counts and
# confounds its verdict depends on (another verdict at that count; a pair's sign flipped), joined by "; "
ROBUSTNESS_COLUMNS = ("verdict_by_count", "by_confound", "depends_on")
DECIDE_COLUMNS = ("decide_seeds", "decide_runs", "decide_job_minutes", "decide_undecidable")  # claims/decide.py
# the look that reached the verdict, of how many, at which two-sided level, and the digest of the design
# (config `decide`, plan/second.py)
LOOK_COLUMNS = ("look", "looks", "level", "design")
CLAIMS_NUMBER_COLUMNS = (
    "part", "statistic", "low", "high", "margin", "sys_down", "sys_up", "unit", "seeds", "stalled_runs",
    *DECIDE_COLUMNS, *LOOK_COLUMNS,
)  # fmt: skip
# results/<config>/decisions.csv: each look and row of the figures a decide job prices, what it read and decided,
# and what the second stage asked for it (claims/second.py)
DECISIONS_COLUMNS = (
    "look", "claim", "level", "alpha_spent", "part", "statistic", "low", "high", "margin", "sys_down", "sys_up",
    "decision", "reason", "seeds_asked", "runs_asked", "job_minutes_asked", "design",
)  # fmt: skip
# results/<config>/sensitivity.csv: each pair of depths of the sensitivity block in each source (the config's own runs,
# `reference`, then each confound): the deeper model's gain in bits per byte, % (claims/sensitivity.py), its interval
# at `level`, its sign (1: the deeper wins, -1: it loses, 0: the interval straddles 0), each shape's heads, the runs
# read and how many of them stalled; then what the interval is made of: 100 ln(L_deep / L_shallow), its standard
# error and dof (a row over several pairs reads them at its own Bonferroni level), and 1 where a confound's runs of the
# pair are runs of the reference's own (it tests nothing there)
SENSITIVITY_REFERENCE = "reference"  # the `source` of the config's own runs (the rows' tables); a confound's: its name
SENSITIVITY_TABLE = "sensitivity"  # its table id, a figure's input (plots/registry.py); its file: plan.jobs
# each pair in each source: heads, runs and the dose they trained at (tokens per non-embedding parameter and epochs,
# the most of the pair's runs: the epoch cap shows there), stalled runs, then the deeper model's gain
SENSITIVITY_COLUMNS = (
    "source", "experiment", "n", "shallow", "deep", "heads_shallow", "heads_deep", "runs_shallow", "runs_deep",
    "tokens_per_parameter", "epochs", "stalled", "gain_pct", "low", "high", "sign", "level", "log_ratio", "se", "dof",
    "same_runs",
)  # fmt: skip

SWEEP_COLUMNS = (
    "experiment",
    "run_id",
    "seed",
    "n_target",
    "n_layer",
    "d_model",
    "n_head",
    "d_head",
    "d_ff",
    "aspect_ratio",
    "ff_ratio",
    "n_nonembedding",
    "n_total",
    "n_kaplan",
    "lr_factor",
    "lr_peak",
    "lr_scan",  # sweep.lr_grid: the shape's learning-rate scan (depthwidth.rates), empty without one
    "lr_choice",  # where its scan found the best rate: interior, below the cliff, at a bound
    "lr_excess_pct",  # the loss at the chosen rate above the scan's fitted best, % (>= 0; nan: unknown), vertex's in
    "lr_vertex_pct",  # of which the scouts' noise in the fitted vertex (tables.sweep.vertex_pct; nan: none fitted)
    "tokens_seen",
    "tokens_per_parameter",
    "epochs",
    "train_flops",
    "final_val_loss",
    "best_val_loss",
    "final_val_bpb",  # final_val_loss in bits per byte of the val text (tables.bits): comparable across vocabularies
    "stall_excess_pct",  # final loss over the median of its shape's other seeds at its rate, % (stalls.flag)
    "stalled",  # that excess above stalls.STALL_EXCESS (or the run did not finish): figures read it both ways
    "status",
    "wall_seconds",
    "tokens_per_second",
)
TIMED_COLUMNS = ("wall_seconds", "tokens_per_second")  # how long a run took: no two runs share them (manifest.py)
# A sweep experiment's training curves (tables.curves): per run, its binned training loss (kind "train") and its
# evaluations ("val"), in nats per token at `tokens` tokens seen. The table's id is here, not in contracts.py with the
# others' (an edit there retrains every run), and out of tables/ (the planner reads it; no stage imports the plan)
CURVES_COLUMNS = ("run_id", "kind", "tokens", "loss")
CURVES_PREFIX = "curves_"


def curves_table(experiment: str) -> str:
    """The table id of a sweep experiment's training curves, written beside its sweep table."""
    return f"{CURVES_PREFIX}{experiment}"


ENTROPY_TABLE_COLUMNS = (
    "attention",
    "lr",
    "seed",
    "run_id",
    "step",
    "tokens",
    "layer",
    "entropy",
    "final_val_loss",
    "final_val_bpb",
    "status",
    "n_layer",  # the run's layers, tokens and training FLOPs: what the second stage prices a fresh seed of its kind
    "tokens_seen",  # at (plan/second.Price), as it prices a sweep shape's from the sweep table's
    "train_flops",
    "wall_seconds",
)
# source: sde, finite, or ode (the drift-only limit an SDE job writes beside its samples); n only for finite
# networks, dt only for the SDE and the ODE
SOURCES = ("sde", "finite", "ode")
SETTING_COLUMNS = ("source", "attention", "block", "n", "T", "dt", "tau0", "gamma", "m", "rho0", "seed")
TERMINAL_COLUMNS = (*SETTING_COLUMNS, "sample", "rho01", "status")
TRAJECTORY_COLUMNS = (*SETTING_COLUMNS, "t", "mean_rho", "sem_rho", "alive", "samples")
# the simulation setting keys every job reads: dt only for the SDE, the ReLU slopes only for blocks with an MLP
SETTING_KEYS = ("T", "tau0", "gamma", "m", "rho0", "samples")
SDE_KEYS, MLP_KEYS = ("dt",), ("c_plus", "c_minus")
