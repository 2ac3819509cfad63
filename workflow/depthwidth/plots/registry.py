"""The registry of figures: the paper each figure stands for, its title, and its inputs by name (input name ->
table id; the plan maps table ids to files).

The planner reads it at parse time and passes each figure job its own title and input files; the figure
command never imports it, so editing one entry reruns that figure (and the claims and captions, which read the
registry) and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from depthwidth.columns import SENSITIVITY_TABLE, curves_table
from depthwidth.contracts import ENTROPY_TABLE, SDE_TERMINAL, TRAJECTORY, sweep_table
from depthwidth.glue.contracts import GLUE_TABLE

KAPLAN, LEVINE, NOCI = "Kaplan 2020", "Levine 2020", "Noci 2023"
PROTOCOL = "protocol check"  # figures that check our training protocol, not a paper's claim
ROBUSTNESS = "robustness check"  # figures of what the depth verdicts survive (a sensitivity block), no claim of theirs


@dataclass(frozen=True)
class Figure:
    paper: str
    title: str
    inputs: dict[str, str]  # input name (an argument of the module's `data`) -> table id


FIGURES: dict[str, Figure] = {
    "kaplan_power_law": Figure(
        KAPLAN,
        "Kaplan: loss vs non-embedding N at fixed aspect ratio, power-law fit",
        {"baseline": sweep_table("baseline")},
    ),
    "kaplan_fig5_aspect": Figure(
        KAPLAN,
        "Kaplan Fig. 5: loss increase over the L(N) fit vs aspect ratio d/L",
        {"experiment": sweep_table("design"), "baseline": sweep_table("baseline")},
    ),
    "kaplan_fig5_ffratio": Figure(
        KAPLAN,
        "Kaplan Fig. 5: loss increase over the L(N) fit vs feed-forward ratio",
        {"experiment": sweep_table("ffratio"), "baseline": sweep_table("baseline")},
    ),
    "kaplan_fig5_headdim": Figure(
        KAPLAN,
        "Kaplan Fig. 5: loss increase over the L(N) fit vs head dimension",
        {"experiment": sweep_table("headdim"), "baseline": sweep_table("baseline")},
    ),
    "kaplan_fig6": Figure(
        KAPLAN,
        "Kaplan Fig. 6: loss vs non-embedding N, total parameters and training FLOPs, per depth",
        {"design": sweep_table("design")},
    ),
    "levine_regimes": Figure(
        LEVINE,
        "Levine: loss vs non-embedding N per depth, threshold width 3^L marked",
        {"design": sweep_table("design")},
    ),
    "levine_crossover": Figure(
        LEVINE,
        "Levine: width at which the deeper of two depths starts to win, vs depth",
        {"design": sweep_table("design")},
    ),
    "levine_literal": Figure(
        LEVINE,
        "Levine read literally: loss gain of the deeper model against N over the N where its width is 3^L",
        {"design": sweep_table("design"), "literal": sweep_table("literal")},
    ),
    "levine_optimal_depth": Figure(
        LEVINE, "Levine: depth of least loss at each N vs log N", {"design": sweep_table("design")}
    ),
    "training_curves": Figure(
        PROTOCOL,
        "Protocol: training loss against tokens for every run of the design, per N (stalled runs dashed)",
        {"design": sweep_table("design"), "curves": curves_table("design")},
    ),
    "lr_check": Figure(
        PROTOCOL,
        "Protocol: final loss vs learning rate for the shallowest and deepest shapes at one N",
        {"lr_check": sweep_table("lr_check")},
    ),
    "depth_sensitivity": Figure(
        ROBUSTNESS,
        "What the depth comparisons survive: the deeper model's gain in bits per byte, as trained and under each "
        "confound of tiny models alone",
        {"sensitivity": SENSITIVITY_TABLE},
    ),
    "shaped_sde_density": Figure(
        NOCI,
        "S1: terminal correlation density, finite shaped networks vs the SDE",
        {"terminal": SDE_TERMINAL},
    ),
    "shaped_rank_collapse": Figure(
        NOCI,
        "S2: mean correlation vs depth, standard vs shaped attention",
        {"trajectory": TRAJECTORY},
    ),
    "shaped_sde_convergence": Figure(
        NOCI,
        "S3: distance between finite-n and SDE terminal laws vs n",
        {"terminal": SDE_TERMINAL},
    ),
    "shaped_entropy": Figure(
        NOCI,
        "S4: attention entropy vs step and val loss vs learning rate: standard, shaped, temperature-only control",
        {"entropy": ENTROPY_TABLE},
    ),
    "noci_glue": Figure(
        NOCI,
        "GLUE dev scores after fine-tuning, standard vs shaped: mean over seeds, 95% t-interval, chance dashed",
        {"glue": GLUE_TABLE},
    ),
}
