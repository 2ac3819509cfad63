"""Stage 3, the tables (rules/tables.smk): what a config reads from its runs and simulations, one table each."""
