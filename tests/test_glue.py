"""The GLUE stage (issue 38): fetch, parse, pretrain, fine-tune, score, table, figure and claim, offline.

Fixture zips in GLUE's layout are built here and served on 127.0.0.1 (tests/glue_fixtures.py); the end-to-end
test runs the real workflow on a tiny config in a copy of the checkout."""

from __future__ import annotations

import io
import json
import math
import time
import zipfile
from pathlib import Path

import claim_rules
import pandas as pd
import pytest
import yaml
from claim_rules import evidence, needs
from conftest import BUILD_SECONDS, REPO, copy_workflow, plan_of, run_snakemake
from depthwidth import check
from depthwidth.claims import glue as claims_glue
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE
from depthwidth.cli import main as cli_main
from depthwidth.glue import metrics, tasks
from depthwidth.glue.contracts import SOURCES, TABLE_COLUMNS
from depthwidth.plan.config import ConfigError, merged, read, validate
from depthwidth.plots import noci_glue
from depthwidth.spec import load_schema
from glue_fixtures import cola_tsv, glue_zip, rte_tsv, serving, sha256


def tiny_config(base: str, files: dict[str, bytes], **glue) -> dict:
    """A tiny GLUE config on the committed corpus slice, its tasks served at `base`."""
    sources = {task: {"url": f"{base}/{name}", "checksum": sha256(files[name])} for task, name in NAMES.items()}
    block = {
        "sources": sources,
        "model": {"n_layer": 2, "d_model": 16, "n_head": 2},
        "pretrain": {
            "recipe": {"n_ctx": 32, "batch_size": 8, "token_budget": 2560, "lr": 0.003, "eval_interval": 5,
                       "eval_batches": 2, "checkpoint_interval": 0},
        },
        "finetune": {"seeds": [0, 1], "epochs": 1, "batch_size": 8},
    }  # fmt: skip
    data = {"name": "slice", "corpus": "text", "paths": ["tests/data/corpus"], "val_fraction": 0.25, "vocab_size": 300}
    return {"name": "glue-tiny", "data": data, "glue": {**block, **glue}}


NAMES = {"cola": "CoLA.zip", "rte": "RTE.zip"}


def test_the_stage_runs_end_to_end_through_the_workflow(tmp_path):
    work = copy_workflow(tmp_path)
    files = {name: glue_zip(task) for task, name in NAMES.items()}
    with serving(files) as base:
        (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(tiny_config(base, files)))
        start = time.time()
        run_snakemake("--cores", "2", "--configfile", "config/tiny.yaml", cwd=work, check=True)
        BUILD_SECONDS["GLUE fixture build (test_glue)"] = time.time() - start
    plan = plan_of(work / "config" / "tiny.yaml")
    glue = plan.glue
    assert len(glue.pretrained) == 2 and len(glue.finetuned) == 2 * 2 * 2  # kinds x tasks x seeds
    table = pd.read_csv(work / plan.table_file("glue"))
    assert list(table.columns) == list(TABLE_COLUMNS) and len(table) == 8
    assert set(table["n_dev"]) == {24} and set(table["n_train"]) == {36}
    assert (table[["tp", "fp", "tn", "fn"]].sum(axis=1) == table["n_dev"]).all()
    figure = pd.read_csv(work / "results/glue-tiny/figures/noci_glue.csv")
    assert set(zip(figure["task"], figure["metric"])) == {("cola", "mcc"), ("cola", "f1"), ("rte", "accuracy")}
    claims = pd.read_csv(work / "results/glue-tiny/claims.csv").set_index("id")
    row = claims.loc["noci_glue"]
    assert row["verdict"] in ("holds", "does not hold", "inconclusive") and row["figure"] == "noci_glue"
    assert "cola mcc: shaped" in row["our_value"] and "rte accuracy: shaped" in row["our_value"]
    # the deciding task's shaped - standard in numbers: 2 fine-tuning seeds a model give it an interval
    assert row["part"] in ("cola: shaped - standard", "rte: shaped - standard") and row["seeds"] == 2
    assert row["low"] <= row["statistic"] <= row["high"] and row["margin"] == 0, row
    assert (work / "results/glue-tiny/figures/noci_glue.png").stat().st_size > 0
    again = run_snakemake("-n", "--configfile", "config/tiny.yaml", cwd=work, check=True)  # every step is cached
    assert "Nothing to be done" in again.stdout + again.stderr
    run_snakemake("--cores", "1", "check", "--configfile", "config/tiny.yaml", cwd=work, check=True)
    report = (work / "results/glue-tiny/check.txt").read_text()
    # 21 of them the GLUE stage's; decisions.csv, empty (no figure of sweep tables: no look), is one
    assert ": 0 problems" in report and "checked 31 artifacts" in report, report
    run_snakemake("--configfile", "config/tiny.yaml", "--report", "results/glue-tiny/report.html", cwd=work, check=True)
    html = (work / "results/glue-tiny/report.html").read_text(errors="replace")
    assert "noci_glue.png" in html and "claims.csv" in html
    check_catches_tampering(work, plan)


def check_catches_tampering(work: Path, plan) -> None:
    """`check` names a fine-tuning whose score is not its confusion counts', a table row that is not its job's,
    and a model.pt that is not the one its pretraining recorded."""
    glue = plan.glue
    fid, job = next(iter(glue.finetuned.items()))
    metrics_path = work / job.folder / "metrics.json"
    metrics = json.loads(metrics_path.read_text())
    metrics_path.write_text(json.dumps({**metrics, "mcc": metrics["mcc"] + 0.25}))
    pretrained = next(iter(glue.pretrained.values()))
    (work / pretrained.folder / "model.pt").write_bytes(b"not the weights")
    table_path = work / plan.table_file("glue")
    table = pd.read_csv(table_path)
    table.loc[table["finetune_id"] == fid, "accuracy"] = 0.99
    table.to_csv(table_path, index=False)
    problems = check.check(work / "results", plan).problems
    assert any(f"finetuned/{fid}/metrics.json: mcc " in p and "its confusion counts give" in p for p in problems)
    assert any(f"tables/glue.csv: {fid}: mcc " in p for p in problems)  # the row no longer matches its job
    assert any(f"tables/glue.csv: {fid}: accuracy 0.99" in p for p in problems)
    assert any(f"pretrained/{pretrained.id}/model.pt: differs from the model_sha256" in p for p in problems)
    assert len(problems) == 4, problems


# --- the scores, against hand-computed confusion matrices -------------------------------------------------


def test_the_scores_match_hand_computed_confusion_matrices():
    labels = [1] * 7 + [0] * 5  # 7 positives, 5 negatives
    predictions = [1] * 6 + [0] + [1] * 2 + [0] * 3  # tp 6, fn 1, fp 2, tn 3
    c = metrics.confusion(labels, predictions)
    assert c == {"tp": 6, "fp": 2, "tn": 3, "fn": 1}
    # MCC = (6*3 - 2*1) / sqrt(8*7*5*4) = 16 / sqrt(1120); F1 = 12 / 15; accuracy = 9 / 12
    assert metrics.mcc(c) == pytest.approx(0.47809144373375745, abs=1e-12)
    assert metrics.f1(c) == pytest.approx(0.8) and metrics.accuracy(c) == pytest.approx(0.75)


def test_the_scores_at_their_edges():
    inverse = metrics.confusion([1, 1, 0, 0, 1], [0, 0, 1, 1, 0])
    assert metrics.mcc(inverse) == pytest.approx(-1.0) and metrics.f1(inverse) == 0 and metrics.accuracy(inverse) == 0
    perfect = metrics.confusion([1, 0, 1, 0], [1, 0, 1, 0])
    assert metrics.mcc(perfect) == pytest.approx(1.0) and metrics.f1(perfect) == 1 and metrics.accuracy(perfect) == 1
    constant = metrics.confusion([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], [1] * 10)  # a constant classifier: chance
    assert constant == {"tp": 4, "fp": 6, "tn": 0, "fn": 0}
    assert metrics.mcc(constant) == 0.0 and metrics.f1(constant) == pytest.approx(8 / 14)
    assert metrics.accuracy(constant) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="2 labels but 3 predictions"):
        metrics.confusion([0, 1], [0, 1, 1])


# --- the TSVs ------------------------------------------------------------------------------------------


def test_the_tsvs_parse_in_glues_layout():
    cola = tasks.parse_tsv("cola", "gj04\t1\t\tThe man ran.\ngj04\t0\t*\tRan man the.\n", "x")
    assert cola == [{"a": "The man ran.", "b": None, "label": 1}, {"a": "Ran man the.", "b": None, "label": 0}]
    rte = tasks.parse_tsv(
        "rte", "index\tsentence1\tsentence2\tlabel\n0\tA b.\tB.\tnot_entailment\n1\tC.\tD.\tentailment\n", "x"
    )
    assert [row["label"] for row in rte] == [1, 0] and rte[0]["b"] == "B."


@pytest.mark.parametrize(
    "task, text, message",
    [
        ("cola", "gj04\t1\t\tFine.\ngj04\t1\tNo sentence.\n", "f.tsv line 2: expected 4 tab-separated fields, found 3"),
        (
            "cola",
            "gj04\t1\t\tFine.\ngj04\t1\t\tFine.\ngj04\tyes\t\tBad label.\n",
            "f.tsv line 3: label 'yes' is none of 0, 1",
        ),
        ("rte", "0\tA.\tB.\tentailment\n", "f.tsv line 1: expected the header 'index sentence1 sentence2 label'"),
        (
            "rte",
            "index\tsentence1\tsentence2\tlabel\n0\tA.\tB.\tcontradiction\n",
            "f.tsv line 2: label 'contradiction'",
        ),
        ("rte", "index\tsentence1\tsentence2\tlabel\n0\tA.\t \tentailment\n", "f.tsv line 2: an empty sentence"),
        ("cola", "", "f.tsv: no rows"),
    ],
)
def test_a_malformed_row_names_the_file_and_line(task, text, message):
    with pytest.raises(ValueError) as info:
        tasks.parse_tsv(task, text, "f.tsv")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


# --- glue-fetch: every failure one line, nothing half-written ------------------------------------------


def fetch(capsys, tmp_path: Path, task: str, body: bytes, checksum: str | None = None) -> tuple[int, list[str], str]:
    """Exit code and stderr lines of `glue-fetch` of `body` served as the task's zip, and its address."""
    name = NAMES[task]
    with serving({name: body}) as base:
        spec = {"task": task, "url": f"{base}/{name}", "checksum": checksum or sha256(body)}
        spec["cache_dir"] = str(tmp_path / "cache")
        code = cli_main(
            ["glue-fetch", "--spec-json", json.dumps(spec), "--out", str(tmp_path / "out"), "--no-progress"]
        )
    return code, capsys.readouterr().err.splitlines(), spec["url"]


def files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_fetch_writes_both_splits_and_their_meta(tmp_path, capsys):
    code, err, url = fetch(capsys, tmp_path, "rte", glue_zip("rte"))
    assert (code, err) == (0, [])
    assert files_under(tmp_path / "out") == ["dev.jsonl", "meta.json", "train.jsonl"]
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert {split: meta["splits"][split]["rows"] for split in ("train", "dev")} == {"train": 36, "dev": 24}
    assert meta["splits"]["dev"]["label_counts"] == [12, 12] and meta["url"] == url
    assert tasks.read_split(tmp_path / "out", "dev")[0] == json.loads(rte_tsv_first_row())


def rte_tsv_first_row() -> str:
    _, first = rte_tsv(24, 2).splitlines()[:2]
    _, a, b, label = first.split("\t")
    return json.dumps({"a": a, "b": b, "label": int(label == "not_entailment")})


def test_a_wrong_checksum_is_one_line_naming_the_task_and_leaves_nothing(tmp_path, capsys):
    body, wrong = glue_zip("cola"), "sha256:" + "0" * 64
    code, err, url = fetch(capsys, tmp_path, "cola", body, wrong)
    assert code == 1 and err == [
        f"depthwidth glue-fetch: error: glue.sources.cola.url {url}: its sha256 is {sha256(body)[7:]}, "
        f"glue.sources.cola.checksum expects {wrong}"
    ]
    assert files_under(tmp_path / "cache") == [] and files_under(tmp_path / "out") == []


def test_a_truncated_zip_is_one_line_and_leaves_no_member(tmp_path, capsys):
    whole = glue_zip("rte")
    code, err, url = fetch(capsys, tmp_path, "rte", whole[: len(whole) * 2 // 3])  # its checksum: of the broken file
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"depthwidth glue-fetch: error: glue.sources.rte.url {url}: RTE.zip is not a readable zip")
    assert files_under(tmp_path / "cache") == ["RTE.zip"] and files_under(tmp_path / "out") == []


def test_a_malformed_tsv_row_is_one_line_naming_file_and_line_and_writes_nothing(tmp_path, capsys):
    rows = cola_tsv(36, 1).splitlines()
    rows[6] = "gj04\t1\tA sentence without its original-label field."
    code, err, _ = fetch(capsys, tmp_path, "cola", glue_zip("cola", train="\n".join(rows) + "\n"))
    assert code == 1 and err == [
        "depthwidth glue-fetch: error: CoLA.zip:CoLA/train.tsv line 7: expected 4 tab-separated fields, found 3"
    ]
    assert files_under(tmp_path / "out") == []


def test_an_archive_without_a_split_names_the_member(tmp_path, capsys):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("CoLA/train.tsv", cola_tsv(5, 1))
    code, err, _ = fetch(capsys, tmp_path, "cola", buffer.getvalue())
    assert code == 1 and len(err) == 1
    assert err[0].startswith("depthwidth glue-fetch: error: glue.sources.cola: 'CoLA/dev.tsv' is not in the archive")
    assert files_under(tmp_path / "out") == []


# --- the claim rule, on made-up tables -----------------------------------------------------------------


def figure_rows(tmp_path: Path, scores: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    """The figure's rows (plots.noci_glue.data) of a made-up table: (task, attention) -> headline score per seed."""
    rows = []
    for (task, attention), values in scores.items():
        for seed, value in enumerate(values):
            metric = {"mcc": value, "f1": 0.5, "accuracy": 0.5} if task == "cola" else {"accuracy": value}
            rows.append({"task": task, "attention": attention, "seed": seed, "mcc": 0.0, "f1": 0.0, **metric})
    path = tmp_path / "glue.csv"
    pd.DataFrame(rows).reindex(columns=list(TABLE_COLUMNS)).to_csv(path, index=False)
    return noci_glue.data(glue=path)


GLUE = "noci_glue"


def scores(cola_shaped, cola_standard, rte_shaped, rte_standard) -> dict:
    return {
        ("cola", "shaped"): cola_shaped,
        ("cola", "standard"): cola_standard,
        ("rte", "shaped"): rte_shaped,
        ("rte", "standard"): rte_standard,
    }


def tasks_of(e) -> dict[str, tuple]:
    """Each task's (metric, shaped mean, standard mean, shaped - standard, its verdict, both at chance)."""
    return {t.task: (t.metric, t.shaped.mean, t.standard.mean, t.part.value, t.part.verdict, t.chance) for t in e.tasks}


def test_the_claim_holds_when_shaped_beats_standard_on_every_task(tmp_path):
    frame = figure_rows(
        tmp_path, scores([0.30, 0.32, 0.31], [0.10, 0.12, 0.11], [0.60, 0.62, 0.61], [0.52, 0.53, 0.55])
    )
    found = evidence(GLUE, frame)
    assert found.verdict == HOLDS and found.needs == () and found.seeds == 3
    assert tasks_of(found) == {
        "cola": ("mcc", pytest.approx(0.31), pytest.approx(0.11), pytest.approx(0.2), HOLDS, False),
        "rte": ("accuracy", pytest.approx(0.61), pytest.approx(0.5333, abs=1e-4), pytest.approx(0.0767, abs=1e-4),
                HOLDS, False),
    }  # fmt: skip
    assert all(t.part.low > 0 and t.part.margin == 0 for t in found.tasks)  # each interval above 0
    assert {t.part.unit for t in found.tasks} == {""}  # a difference of scores, no % of the loss
    # CoLA's F1 beside its headline score, stated, never read
    assert sorted((o.task, o.metric, o.attention) for o in found.others) == [
        ("cola", "f1", "shaped"),
        ("cola", "f1", "standard"),
    ]


def test_the_claim_fails_when_standard_beats_shaped_on_a_task(tmp_path):
    frame = figure_rows(
        tmp_path, scores([0.30, 0.32, 0.31], [0.10, 0.12, 0.11], [0.52, 0.53, 0.55], [0.60, 0.62, 0.61])
    )
    found = evidence(GLUE, frame)
    assert found.verdict == FAILS and found.needs == ()
    said = tasks_of(found)
    assert said["cola"][3:5] == (pytest.approx(0.2), HOLDS)
    assert said["rte"][3:5] == (pytest.approx(-0.0767, abs=1e-4), FAILS) and found.tasks[1].part.high <= 0


def test_the_claim_is_inconclusive_when_both_sit_at_chance(tmp_path):
    """A large shaped - standard difference cannot decide it while both models' intervals hold chance: each task is
    inconclusive, and what would decide it is a model that learns the task, not more seeds."""
    frame = figure_rows(tmp_path, scores([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.30, 0.70, 0.80], [0.20, 0.60, 0.40]))
    found = evidence(GLUE, frame)
    assert found.verdict == INCONCLUSIVE
    assert [(t.task, t.chance, t.part.verdict) for t in found.tasks] == [
        ("cola", True, INCONCLUSIVE),
        ("rte", True, INCONCLUSIVE),
    ]
    assert [(n.kind, n.numbers["task"]) for n in found.needs] == [("glue_chance", "cola"), ("glue_chance", "rte")]


def test_a_task_at_chance_in_words(tmp_path):
    """Golden: each task at chance says so with its chance level, and the needs say what would decide it."""
    frame = figure_rows(tmp_path, scores([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.30, 0.70, 0.80], [0.20, 0.60, 0.40]))
    said = claim_rules.text(GLUE, frame)
    assert "; ".join(said.value).count("no effect can show") == 2
    assert "both at chance (MCC 0)" in said.value[0] and "both at chance (50% accuracy)" in said.value[1]
    assert said.needs[0] == (
        "cola: models that learn the task (both sit at chance): a deeper or longer pretraining, not more seeds"
    )


def test_the_claim_is_inconclusive_when_the_difference_straddles_zero_and_says_how_many_seeds(tmp_path):
    """CoLA's difference +0.013 straddles 0: the seeds per model that would resolve it are the runs' factor
    ((half-width / difference)^2) times the seeds now; RTE holds and asks for nothing."""
    frame = figure_rows(
        tmp_path, scores([0.20, 0.40, 0.30], [0.25, 0.35, 0.26], [0.60, 0.62, 0.61], [0.52, 0.53, 0.55])
    )
    found = evidence(GLUE, frame)
    assert found.verdict == INCONCLUSIVE and not any(t.chance for t in found.tasks)
    cola = found.tasks[0]
    assert cola.part.verdict == INCONCLUSIVE and cola.part.low < 0 < cola.part.high
    assert cola.part.value == pytest.approx(0.3 - (0.25 + 0.35 + 0.26) / 3)
    factor = ((cola.part.high - cola.part.low) / 2 / cola.part.value) ** 2
    assert cola.seeds_needed == math.ceil(3 * factor) and cola.seeds_needed > 3
    assert [n.kind for n in found.needs] == ["glue_resolve"]
    resolve = needs(found)["glue_resolve"]
    assert resolve == {"task": "cola", "seeds": cola.seeds_needed, "difference": pytest.approx(0.0133, abs=1e-4)}


def test_one_seed_a_side_is_inconclusive(tmp_path):
    frame = figure_rows(tmp_path, scores([0.3], [0.1], [0.6], [0.5]))
    found = evidence(GLUE, frame)
    assert found.verdict == INCONCLUSIVE and found.seeds == 1
    assert all(math.isnan(t.part.low) and t.part.verdict == INCONCLUSIVE for t in found.tasks)
    assert [(n.kind, n.numbers["task"]) for n in found.needs] == [("glue_seeds", "cola"), ("glue_seeds", "rte")]


def test_the_welch_interval_matches_a_hand_computation(tmp_path):
    frame = figure_rows(tmp_path, scores([0.1, 0.3], [0.0, 0.0, 0.3], [0.6, 0.6], [0.5, 0.5]))
    rows = frame[(frame["task"] == "cola") & (frame["metric"] == "mcc")].set_index("attention")
    diff, low, high = claims_glue.difference(rows.loc["shaped"], rows.loc["standard"])
    # shaped: mean 0.2, var 0.02 / 2 = 0.01; standard: mean 0.1, var 0.03 / 3 = 0.01; se = sqrt(0.02)
    # Welch dof = 0.02^2 / (0.01^2 / 1 + 0.01^2 / 2) = 2.667; t(0.975, 8/3) = 3.41977 (scipy.stats.t.ppf)
    se = math.sqrt(0.02)
    assert diff == pytest.approx(0.1)
    assert (low, high) == pytest.approx((0.1 - 3.41977 * se, 0.1 + 3.41977 * se), abs=2e-4)


# --- the plan ------------------------------------------------------------------------------------------


def test_plan_prices_the_glue_block_and_the_default_config_plans_none(capsys):
    plan = plan_of(REPO / "config" / "glue.yaml")
    assert plan.glue.block["model"]["n_layer"] == 24  # Noci's depth
    assert sorted(job.spec["model"]["attention"] for job in plan.glue.pretrained.values()) == ["shaped", "standard"]
    assert plan.tables == ["glue"] and list(plan.figures) == ["noci_glue"]
    assert plan_of(REPO / "config" / "config.yaml").glue is None
    assert cli_main(["plan", "--configfile", "config/glue.yaml", "--no-calibration"]) == 0
    out = capsys.readouterr().out
    assert "GLUE: downloads cola, rte (1.07 MB, once, checked by sha256)" in out
    assert "GLUE pretrainings: 2 jobs, 8,000,000 tokens" in out  # 2 x the budget (the epoch cap: once prepared)
    # CoLA: 8551 rows x 3 epochs x 40 / 3 tokens a row; RTE: 2490 x 3 x min(128, 350 / 3), per seed and model
    cola, rte = 8551 * 3 * 40 / 3, 2490 * 3 * 350 / 3
    assert f"GLUE fine-tunings: 12 jobs, {6 * int(cola) + 6 * int(rte):,} tokens" in out


def test_a_glue_block_is_checked_by_key():
    config = read(REPO / "config" / "glue.yaml")
    with pytest.raises(ConfigError, match="config key 'glue.model.n_head': 5 does not divide d_model = 64"):
        validate(merged(config, {"glue": {"model": {"n_head": 5}}}))
    with pytest.raises(ConfigError, match="config key 'glue.sources.rte.checksum': 'sha256:abc': a sha256 checksum"):
        validate(merged(config, {"glue": {"sources": {"rte": {"url": "http://x/RTE.zip", "checksum": "sha256:abc"}}}}))
    with pytest.raises(ConfigError, match="config key 'glue.finetune.pooling'"):
        validate(merged(config, {"glue": {"finetune": {"pooling": "first"}}}))
    with pytest.raises(ConfigError, match="config key 'name': 'pretrained' names a folder the GLUE stage shares"):
        validate({**read(REPO / "config" / "ci.yaml"), "name": "pretrained"})
    assert validate(config)["glue"]["sources"]["cola"] == SOURCES["cola"]  # the schema's defaults: the contracts'
    schema = load_schema()["properties"]["glue"]["properties"]
    assert tuple(schema["tasks"]["items"]["enum"]) == tuple(SOURCES) == tuple(tasks.TASKS)
    assert {task: schema["sources"]["properties"][task]["default"] for task in SOURCES} == SOURCES


# --- pretraining and fine-tuning, in process ---------------------------------------------------------


def pretrain_spec(data_dir: Path, attention: str = "shaped", checkpoint_interval: int = 0) -> dict:
    from depthwidth.spec import complete

    model = {"vocab_size": 512, "n_ctx": 16, "n_layer": 2, "d_model": 16, "n_head": 2, "attention": attention}
    recipe = {"batch_size": 4, "token_budget": 6 * 64, "lr": 0.003, "eval_batches": 1}
    return complete("train_spec", {"data": str(data_dir), "seed": 0, "model": model, "recipe": {**recipe,
                    "checkpoint_interval": checkpoint_interval}})  # fmt: skip


def test_an_interrupted_pretraining_resumes_to_the_same_weights(slice_data, tmp_path, monkeypatch, capsys):
    import torch
    from depthwidth.glue import pretrain

    spec = pretrain_spec(slice_data, checkpoint_interval=2)
    whole = pretrain.pretrain(spec, tmp_path / "whole", threads=1, progress=False)
    real_steps = pretrain.run_steps

    def killed_after_first_checkpoint(run, state, save, bar):
        def save_then_die(s):
            save(s)
            raise KeyboardInterrupt

        return real_steps(run, state, save_then_die, bar)

    monkeypatch.setattr(pretrain, "run_steps", killed_after_first_checkpoint)
    with pytest.raises(KeyboardInterrupt):
        pretrain.pretrain(spec, tmp_path / "resumed", threads=1, progress=False)
    assert not (tmp_path / "resumed" / "model.pt").exists()  # no weights before the run ends
    monkeypatch.setattr(pretrain, "run_steps", real_steps)
    resumed = pretrain.pretrain(spec, tmp_path / "resumed", threads=1, progress=False)
    assert "resuming from step 2" in capsys.readouterr().err
    assert resumed["model_sha256"] == whole["model_sha256"] and resumed["final_val_loss"] == whole["final_val_loss"]
    assert not (tmp_path / "resumed.ckpt" / "checkpoint.pt").exists()  # the checkpoint has served
    weights = torch.load(tmp_path / "whole" / "model.pt", weights_only=True)
    assert weights["blocks.0.attn.qkv.weight"].shape == (48, 16) and "lm_head.weight" in weights


def test_padding_changes_no_pooled_state_and_a_fine_tuning_repeats_exactly(slice_data, tmp_path):
    import torch
    from depthwidth.glue import finetune, pretrain

    pretrain.pretrain(pretrain_spec(slice_data), tmp_path / "pre", threads=1, progress=False)
    gpt, _ = pretrain.load_pretrained(tmp_path / "pre", torch.device("cpu"))
    for pooling in finetune.POOLINGS:
        torch.manual_seed(0)
        model = finetune.Classifier(gpt, 2, pooling).eval()
        encoded = [[5, 6, 7], [8, 9, 10, 11, 12, 13]]
        idx, lengths = finetune.batch_of(encoded, [0, 1], "cpu")
        with torch.no_grad():
            together = model(idx, lengths)
            alone = model(torch.tensor([encoded[0]]), torch.tensor([3]))
        assert torch.allclose(together[0], alone[0], atol=1e-6), pooling  # row 0 padded by 3 tokens
    task = tmp_path / "task"
    task.mkdir()
    for split, text in (("train", cola_tsv(20, 1)), ("dev", cola_tsv(12, 2))):
        rows = tasks.parse_tsv("cola", text, split)
        (task / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (task / "meta.json").write_text("{}")
    recipe = {"lr": 0.001, "epochs": 2, "batch_size": 8, "weight_decay": 0.01, "warmup_frac": 0.1, "pooling": "last",
              "max_train_rows": 16}  # fmt: skip
    spec = {"task": "cola", "attention": "shaped", "seed": 3, "pretrained": str(tmp_path / "pre"), "recipe": recipe,
            "tokenizer": str(slice_data / "tokenizer.json"), "task_data": str(task)}  # fmt: skip
    first = finetune.finetune(spec, tmp_path / "a", threads=1, progress=False)
    second = finetune.finetune(spec, tmp_path / "b", threads=1, progress=False)
    assert first["n_train"] == 16 and first["n_dev"] == 12 and first["steps"] == 2 * 2
    same = ("confusion", "mcc", "f1", "accuracy", "final_train_loss", "pretrained_sha256")
    assert {key: first[key] for key in same} == {key: second[key] for key in same}
    # its kernels, recorded as a training run's are (numerics.py): in-process, this machine's own
    assert (first["numerics"]["path"], first["numerics"]["machine_bound"]) == ("native", True)
    with pytest.raises(ValueError, match="spec key 'recipe.epochs': missing"):
        finetune.check_spec({**spec, "recipe": {k: v for k, v in recipe.items() if k != "epochs"}})
    with pytest.raises(FileNotFoundError, match="spec key 'tokenizer': .*nothing.json: file not found"):
        finetune.finetune({**spec, "tokenizer": str(tmp_path / "nothing.json")}, tmp_path / "c", threads=1)
    (tmp_path / "pre" / "model.pt").write_bytes(b"other weights")
    with pytest.raises(ValueError, match="model.pt: its sha256 is not the one .*metrics.json records"):
        finetune.finetune(spec, tmp_path / "c", threads=1)


def test_a_failed_fetch_through_the_workflow_logs_one_line_and_leaves_no_rows(tmp_path):
    work = copy_workflow(tmp_path)
    files = {name: glue_zip(task) for task, name in NAMES.items()}
    with serving(files) as base:
        config = tiny_config(base, files)
        config["glue"]["sources"]["rte"]["checksum"] = "sha256:" + "1" * 64
        (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(config))
        fetch_job = plan_of(work / "config" / "tiny.yaml").glue.tasks["rte"]
        result = run_snakemake(
            "--cores", "1", f"{fetch_job.folder}/meta.json", "--configfile", "config/tiny.yaml", cwd=work
        )
    assert result.returncode != 0
    log = (work / f"results/logs/glue_data/{fetch_job.id}.log").read_text().splitlines()
    assert len(log) == 1 and log[0].startswith("depthwidth glue-fetch: error: glue.sources.rte.url http://127.0.0.1:")
    assert "glue.sources.rte.checksum expects sha256:1111" in log[0]
    assert not (work / fetch_job.folder).exists() or files_under(work / fetch_job.folder) == []


def test_a_large_tsv_is_parsed_and_written_a_line_at_a_time(tmp_path, monkeypatch):
    """Issue 55, case 12: glue-fetch held 11.2 times a TSV in memory (1.40 GB for 126 MB: a 2.1 GB member under
    the 16 GiB unpack cap would fill this machine). The peak of Python's allocations while an 8 MB CoLA train.tsv
    is parsed and written (the fetch itself left out) stays under a tenth of the file."""
    import tracemalloc

    tsv = {"train": tmp_path / "train.tsv", "dev": tmp_path / "dev.tsv"}
    tsv["train"].write_text(cola_tsv(200_000, 3)), tsv["dev"].write_text(cola_tsv(24, 2))
    monkeypatch.setattr(tasks, "fetch_task", lambda spec, progress: tsv)
    spec = {"task": "cola", "url": "http://127.0.0.1/CoLA.zip", "checksum": "sha256:" + "0" * 64, "cache_dir": "-"}
    tracemalloc.start()
    try:
        meta = tasks.prepare(spec, tmp_path / "out")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = tsv["train"].stat().st_size
    assert meta["splits"]["train"]["rows"] == 200_000 and size > 7e6
    assert peak < size / 10, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB TSV"
