"""results/README.md, written from the contracts: every folder and file the workflow writes under results/,
each path made by the function that the code makes it with, so the page cannot drift from the code
(tests/test_docs.py compares the committed page with `text()`). Regenerate it after a contract changes:

    python -m depthwidth.results_readme > results/README.md

Apart from contracts.py on purpose: the training imports contracts.py, so an edit there retrains every run.
"""

from __future__ import annotations

import textwrap

from depthwidth import clean, contracts
from depthwidth.columns import curves_table
from depthwidth.glue import contracts as glue
from depthwidth.plan import second
from depthwidth.plan.jobs import decide_path, sensitivity_path
from depthwidth.spec import load_schema
from depthwidth.train.checkpoint import CHECKPOINT_NAME, CHECKSUM_SUFFIX

WIDTH = 115  # the page's lines, at most


def _rel(path: str) -> str:
    """A path under results/, as the page names it (relative to results/)."""
    if not path.startswith(f"{contracts.RESULTS}/"):
        raise ValueError(f"{path}: not under {contracts.RESULTS}/")
    return path.removeprefix(f"{contracts.RESULTS}/")


def _code(*names: str) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _item(text: str) -> str:
    """One list item, wrapped (never inside a hyphenated name)."""
    return textwrap.fill(text, WIDTH, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False)


def _downloads() -> str:
    """The folder of downloads: the schema's default `data.cache_dir`, one of the shared folders."""
    folder = _rel(load_schema()["properties"]["data"]["properties"]["cache_dir"]["default"])
    if folder not in contracts.SHARED_FOLDERS:
        raise ValueError(f"data.cache_dir's default {folder}: not one of contracts.SHARED_FOLDERS")
    return folder


def shared_items() -> list[str]:
    """What every config shares, keyed by the spec it comes from."""
    # data_dir digests the block it is given: the placeholder replaces that digest
    data = _rel(contracts.data_dir("<corpus>", {})).rsplit("-", 1)[0] + "-<digest of the data block>"
    checkpoint = f"{CHECKPOINT_NAME}{CHECKSUM_SUFFIX}"
    logs, benchmarks = contracts.log_path("<stage>", "<job>"), contracts.benchmark_path("<stage>", "<job>")
    return [
        f"`{data}/`: {_code(*contracts.DATA_FILES)}, one folder per data block",
        f"`{_rel(contracts.run_dir('<run id>'))}/`: {_code(*contracts.RUN_FILES)}, one folder per training run;"
        f" `metrics.json` records the sha256 of {_code(*contracts.RUN_DIGESTS)}. A run id ends in the digest of"
        " its whole spec: two specs never share a folder, and a spec two configs plan is trained once",
        f"`{_rel(contracts.checkpoint_dir('<run id>'))}/`: while a run trains, its checkpoint `{CHECKPOINT_NAME}`"
        f" and `{checkpoint}` (the sha256 of its bytes), beside the run's folder; removed when the run ends",
        f"`{_rel(contracts.rate_round_path('<scan id>', '<r>'))}`: a shape's learning-rate scan (`sweep.lr_grid`),"
        " round by round",
        f"`{_rel(contracts.simulation_path('<simulation id>'))}`: one file per simulation spec",
        f"`{_downloads()}/`: downloaded corpora and archives (`data.cache_dir`, `glue.cache_dir`), checked by"
        " their sha256; `clean` keeps it",
        f"`{_rel(glue.task_dir('<task>-<digest>'))}/`, `{_rel(glue.pretrained_dir('<attention>-<digest>'))}/`,"
        f" `{_rel(glue.finetuned_dir('<attention>-<task>-s<seed>-<digest>'))}/`: the GLUE stage (opt-in)",
        f"`{_rel(logs)}`, `{_rel(benchmarks)}`: one log and one timing file per job (a config's own jobs log"
        " under its name)",
    ]


def config_items() -> list[str]:
    """What one config concludes, under its own folder."""
    config = "<config>"
    figure = _rel(contracts.figure_path(config, "<figure id>", ""))
    claims = (_rel(path) for path in contracts.claims_files(config))
    return [
        f"`{_rel(contracts.table_path(config, '<table id>'))}`: the tidy tables, one row per run or sample summary; "
        f"beside each sweep table `{contracts.sweep_table('<experiment>')}.csv`, its runs' training curves "
        f"`{curves_table('<experiment>')}.csv`",
        f"`{figure}{{{'|'.join(contracts.FIGURE_SUFFIXES)}}}`: one figure, its PDF, the rows it plots, and those "
        "rows with its sweep tables' stalled runs left out",
        f"`{_rel(decide_path(config, '<figure id>'))}`: what would decide each inconclusive claim the figure shows"
        " (`decide`: its own procedure, redrawn at more seeds per shape), and beside it "
        f"`{second.look_path(config, '<figure id>').rsplit('/', 1)[-1]}`: the figure's rows at the first look",
        f"`{_rel(second.first_table_path(config, '<table id>'))}`: with two looks (config `decide.looks`), each sweep "
        f"table on the first stage's seeds alone; `{_rel(second.second_stage_path(config))}`: the fresh seeds the "
        "second stage asked for, and why",
        f"{_code(*claims)}: every claim, our number, the verdict; `{_rel(second.decisions_path(config))}`: each look "
        "and row, its statistic, the error it spent, its decision and the runs it asked for",
        f"`{_rel(sensitivity_path(config))}`: with a sensitivity block (config `sensitivity`), each pair of depths' "
        "gain in bits per byte in the rows' own runs and under each confound (tables `sweep_sens_<name>`)",
        f"`{_rel(contracts.caption_path(config, '<figure id>'))}`: each figure's caption in the report",
        f"`{_rel(contracts.report_path(config))}`: the report, `snakemake --report` of it",
        f"`{_rel(contracts.check_path(config))}`: the last passing `snakemake check` (a failing one removes it)",
        f"`{_rel(str(clean.record_path(config)))}`: the config as the workflow ran it (what `clean` reads)",
    ]


def text() -> str:
    """The whole page."""
    return "\n".join(
        [
            "Everything the workflow generates lands here (git ignores it all but this file). Every path is written",
            "once, in workflow/depthwidth/contracts.py, and this page is made from it",
            "(`python -m depthwidth.results_readme > results/README.md`).",
            "",
            "Shared by every config, each keyed by what it depends on and nothing else:",
            "",
            *map(_item, shared_items()),
            "",
            "What one config concludes, under `<config>/` (the config's `name`: `default`, `ci`, ...):",
            "",
            *map(_item, config_items()),
            "",
            "Delete a file to rebuild it (and what depends on it) with a plain `snakemake`. To remove what one config",
            "built and no other config needs: `python -m depthwidth clean --configfile <file>` (`--dry-run` lists",
            "first); `snakemake --delete-all-output` would also delete what the other configs share.",
            "",
        ]
    )


if __name__ == "__main__":
    print(text(), end="")
