"""GLUE fine-tuning of shaped against standard Transformers (Noci et al. 2023): fetch CoLA and RTE
(`tasks`), pretrain one model per attention kind with the training engine (`pretrain`), fine-tune each with a
classification head per task and seed (`finetune`), score on dev (`metrics`), collect the scores (`table`).
Where its files lie and its table's columns: `glue.contracts` (torch-free, stdlib-only)."""
