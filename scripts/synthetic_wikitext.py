"""A synthetic WikiText-shaped raw file, to measure prepare-data at WikiText-103's size without downloading it.

Distinct articles of ~3.7 KB (a ' = Article N word = ' heading, a paragraph, a ' = = Section = = '
heading, two paragraphs) of random words drawn from a Zipf law (exponent 1.05) over 200,000 random
lower-case words, so that no two articles share 8-word windows by accident, and every 500th article a
planted near copy of the previous one (its body again plus a paragraph of 30 words).

    python scripts/synthetic_wikitext.py OUT MEGABYTES [SEED]

prints the article count, the size and the planted copies (pairs of article indices, n-1 and n) on stderr.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

VOCABULARY = 200_000
ZIPF_EXPONENT = 1.05
COPY_EVERY = 500  # article n is a near copy of article n - 1 when n % COPY_EVERY == COPY_EVERY - 1


def vocabulary(rng: np.random.Generator) -> np.ndarray:
    """Random lower-case words of 2 to 9 letters."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return np.array(["".join(rng.choice(letters, size=rng.integers(2, 10))) for _ in range(VOCABULARY)], dtype=object)


def zipf_cdf() -> np.ndarray:
    """Cumulative probabilities of the words by rank."""
    weights = 1.0 / np.arange(1, VOCABULARY + 1) ** ZIPF_EXPONENT
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    return cdf


def article(rng: np.random.Generator, words: np.ndarray, cdf: np.ndarray, n: int) -> str:
    """Article n: a heading, a paragraph, a section heading and two paragraphs, in WikiText raw layout."""

    def paragraph(count: int) -> str:
        return " " + " ".join(words[np.searchsorted(cdf, rng.random(count))].tolist()) + " . \n"

    title = f" = Article {n} {words[rng.integers(VOCABULARY)]} = \n \n"
    body = [paragraph(int(rng.integers(130, 230))) for _ in range(3)]
    return title + body[0] + " \n = = Section = = \n \n" + body[1] + body[2] + " \n"


def main(out: str, megabytes: float, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    words, cdf = vocabulary(rng), zipf_cdf()
    size, n, planted, previous = 0, 0, [], ""
    with open(out, "w", encoding="utf-8") as f:
        while size < megabytes * 1e6:
            text = article(rng, words, cdf, n)
            if n % COPY_EVERY == COPY_EVERY - 1:
                extra = " ".join(words[np.searchsorted(cdf, rng.random(30))].tolist())
                text = f" = Copy of {n - 1} = \n \n" + previous.split("\n", 2)[2] + f" {extra} . \n \n"
                planted.append((n - 1, n))
            f.write(text)
            previous, size, n = text, size + len(text.encode()), n + 1
    print(f"{n} articles, {size / 1e6:.1f} MB, planted copies: {planted}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the raw text file to write")
    parser.add_argument("megabytes", type=float, help="its size in MB (1e6 bytes)")
    parser.add_argument("seed", type=int, nargs="?", default=0)
    args = parser.parse_args()
    main(args.out, args.megabytes, args.seed)
