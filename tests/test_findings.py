"""The findings, published: claims.md opens with a one-screen summary."""

from __future__ import annotations

import pandas as pd
from depthwidth import claims
from depthwidth.claims import verdicts

SCALE = "config ci; 14 sweep runs x 2 tokens per non-embedding parameter, seeds [0]"


def claims_frame() -> pd.DataFrame:
    """Every claim, not run (no figure CSVs), but the first three with other verdicts and long values."""
    frame = claims.table([], SCALE)
    frame.loc[0, ["verdict", "our_value"]] = verdicts.HOLDS, "alpha = 0.071; curvature +0.01 | a bar"
    frame.loc[1, ["verdict", "our_value"]] = verdicts.FAILS, "spread " + "0.5% and more " * 20
    frame.loc[2, ["verdict", "interval"]] = verdicts.INCONCLUSIVE, "[0.1, 0.3]"
    return frame


def summary_rows(text: str) -> list[list[str]]:
    """The cells of the summary table's rows in `text` (escaped bars read back as bars)."""
    lines = text.splitlines()
    start = lines.index("| claim | statement | verdict | our number |") + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("| `"):
            break
        rows.append([cell.strip() for cell in line.replace("\\|", "\0").strip("|").split("|")])
    return [[cell.replace("\0", "|") for cell in row] for row in rows]


def test_claims_md_opens_with_one_line_per_claim():
    frame = claims_frame()
    text = claims.markdown(frame)
    assert text.startswith("# Claims\n\nRun at: " + SCALE + ".\n")
    assert text.index("| claim | statement | verdict | our number |") < text.index("## Every claim in full")
    rows = summary_rows(text)
    assert [(row[0], row[2]) for row in rows] == [(f"`{i}`", f"**{v}**") for i, v in zip(frame["id"], frame["verdict"])]
    assert rows[0][3] == "alpha = 0.071"  # the number, up to its first '; '
    assert rows[1][3].endswith("...") and len(rows[1][3]) <= claims.SUMMARY_WIDTH
    counts = frame["verdict"].value_counts()
    assert (
        f"Verdicts of {len(frame)} claims: 1 holds, 1 does not hold, 1 inconclusive, {counts['not run']} not run."
        in text
    )
    assert len(text[: text.index("## Every claim in full")].splitlines()) <= 30  # one screen
    full = text[text.index("## Every claim in full") :]
    assert "alpha = 0.071; curvature +0.01 \\| a bar" in full  # the full table keeps every value, escaped


def test_shorten_cuts_at_a_word_and_keeps_short_text():
    assert claims.shorten("short; rest") == "short"
    assert claims.shorten("one two three four", limit=12) == "one two..."
