"""Figures: one module per figure id, each with `data(inputs) -> DataFrame` and `draw(df, fig)`.

`python -m depthwidth figure <id> --input FILE... --out results/figures/<id>.png` writes the PNG,
the PDF and `<id>.csv`, the exact rows the figure plots. One module per figure means editing a
figure reruns that figure alone.
"""

FIGURES = {
    "kaplan_power_law": "Kaplan: loss vs non-embedding N at fixed aspect ratio, power-law fit",
    "kaplan_fig5_aspect": "Kaplan Fig. 5: loss increase over the L(N) fit vs aspect ratio d/L",
    "kaplan_fig5_ffratio": "Kaplan Fig. 5: loss increase over the L(N) fit vs feed-forward ratio",
    "kaplan_fig5_headdim": "Kaplan Fig. 5: loss increase over the L(N) fit vs head dimension",
    "kaplan_fig6": "Kaplan Fig. 6: loss vs parameters with and without embeddings, per depth",
    "levine_regimes": "Levine: loss vs non-embedding N per depth, threshold width 3^L marked",
    "levine_crossover": "Levine: width at which the deeper of two depths starts to win, vs depth",
    "levine_optimal_depth": "Levine: depth of least loss at each N vs log N",
    "shaped_sde_density": "S1: terminal correlation density, finite shaped networks vs the SDE",
    "shaped_rank_collapse": "S2: mean correlation vs depth, standard vs shaped attention",
    "shaped_sde_convergence": "S3: distance between finite-n and SDE terminal laws vs n",
    "shaped_entropy": "S4: attention entropy vs step and val loss vs learning rate, standard vs shaped",
}
