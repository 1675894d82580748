"""Precision and recall of the notes' near-duplicate check on a hand-labelled set.

Each line of `tests/fixtures/notes_duplicates.jsonl` is an existing entry, a new one,
whether the new one only repeats the old (`duplicate`) and why. The check was tuned on
the `dev` part only; the `held-out` part (written with it, before any tuning) and the
`fresh` part (written after the check was frozen, run once) show how it does on text it
was not tuned on. Precision matters most: a false "duplicate" refuses a new fact.

    .venv/bin/python tests/bench/bench_note_duplicates.py [--errors] [--split dev]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory.notes.repeats import repeats

SPLITS = ("dev", "held-out", "fresh")
PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "notes_duplicates.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--errors", action="store_true", help="list every pair judged wrong")
    parser.add_argument("--split", choices=SPLITS, help="errors of one part only")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    started = time.perf_counter()
    judged = [(pair, repeats(pair["new"], pair["existing"])) for pair in pairs]
    per_pair_us = (time.perf_counter() - started) / len(pairs) * 1e6
    print(f"{len(pairs)} pairs, {per_pair_us:.0f} µs per pair (first sight of each text)")
    print(
        f"{'part':<14}{'lang':<6}{'pairs':>6}{'dups':>6}{'TP':>5}{'FP':>5}{'FN':>5}"
        f"{'precision':>11}{'recall':>8}"
    )
    for split in SPLITS:
        for lang in ("en", "ja", "all"):
            chosen = [
                (pair, said)
                for pair, said in judged
                if pair["split"] == split and lang in (pair["lang"], "all")
            ]
            tp = sum(said and pair["duplicate"] for pair, said in chosen)
            fp = sum(said and not pair["duplicate"] for pair, said in chosen)
            fn = sum(not said and pair["duplicate"] for pair, said in chosen)
            dups = sum(pair["duplicate"] for pair, _ in chosen)
            precision = tp / (tp + fp) if tp + fp else 1.0
            recall = tp / dups if dups else 1.0
            print(
                f"{split:<14}{lang:<6}{len(chosen):>6}{dups:>6}{tp:>5}{fp:>5}{fn:>5}"
                f"{precision:>11.3f}{recall:>8.3f}"
            )
    if args.errors:
        for pair, said in judged:
            if said != pair["duplicate"] and args.split in (None, pair["split"]):
                kind = "FALSE DUPLICATE" if said else "missed"
                print(
                    f"{kind:<16}{pair['id']:<8}{pair['existing']!r} -> {pair['new']!r}"
                    f"  ({pair['why']})"
                )


if __name__ == "__main__":
    main()
