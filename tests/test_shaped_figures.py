"""The shaped-entropy figure (S4): one series per trained attention kind, the control dashed, the data beside it."""

from __future__ import annotations

import matplotlib
import pandas as pd
from depthwidth.plots import common

matplotlib.use("Agg")

KINDS = {"standard": 0.3, "shaped": 2.5, "temperature": 1.2}  # final entropy per kind (initial 3.0)


def entropy_table(path):
    rows = []
    for attention, final in KINDS.items():
        for lr in (0.003, 0.03):
            for layer in (0, 1):
                for step, entropy in ((0, 3.0), (10, final)):
                    rows.append(
                        {
                            "attention": attention,
                            "lr": lr,
                            "seed": 0,
                            "run_id": f"{attention}-{lr}",
                            "step": step,
                            "tokens": 640 * step,
                            "layer": layer,
                            "entropy": entropy,
                            "final_val_loss": 4.0 + lr,
                            "status": "ok",
                        }
                    )
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_each_attention_kind_is_a_series_and_the_control_is_dashed(tmp_path, monkeypatch):
    drawn = {}
    save = common.save_figure

    def keep(fig, table, *paths):  # the PNG, and the PDF and CSV (None: beside it)
        drawn["fig"] = fig
        save(fig, table, *paths)

    monkeypatch.setattr(common, "save_figure", keep)
    table = common.render(
        "shaped_entropy", {"entropy": entropy_table(tmp_path / "e.csv")}, tmp_path / "shaped_entropy.png"
    )
    assert set(table["attention"]) == set(KINDS)
    first = drawn["fig"].axes[0]
    finals = {(line.get_linestyle(), round(float(line.get_ydata()[-1]), 3)) for line in first.get_lines()}
    assert finals == {("-", 0.3), ("-", 2.5), ("--", 1.2)}  # one final value per kind (both layers alike)
    assert [t.get_text() for t in first.get_legend().get_texts()] == sorted(KINDS)
    loss_panel = drawn["fig"].axes[-1]
    assert sorted(t.get_text() for t in loss_panel.get_legend().get_texts()) == sorted(KINDS)
    assert set(pd.read_csv(tmp_path / "shaped_entropy.csv")["attention"]) == set(KINDS)
