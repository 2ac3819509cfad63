"""Stage 0, the plan (rules/common.smk): the config validated against its schema, and every job it produces with
its complete spec. Torch-free."""
