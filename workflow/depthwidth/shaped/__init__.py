"""Stage 2b, the shaped Transformer at initialization (rules/shaped.smk): the covariance SDE, finite networks,
the simulation jobs."""
