"""Stage 1, the data (rules/data.smk): a real English corpus, split by groups of near copies, BPE-tokenized into
token shards."""
