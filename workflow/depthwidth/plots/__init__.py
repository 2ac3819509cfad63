"""Figures: one module per figure id, each with `COLUMNS`, `data(**inputs) -> DataFrame` and `draw(df) -> Figure`.

`python -m depthwidth figure <id> --input NAME=FILE ... --title T --out results/<config>/figures/<id>.png` writes
the PNG, the PDF and `<id>.csv`, the exact rows the figure plots (common.py). A figure job runs the command, its
figure's module and what they import (contracts.code_files), so editing one figure's module reruns that figure
alone; `registry.py` says which figures there are, for which paper, with which title and input tables.
"""
