"""Stage 2, training (rules/train.smk): one decoder-only Transformer trained from one complete spec; the code a
checkpoint digest covers."""
