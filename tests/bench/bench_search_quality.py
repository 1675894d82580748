"""Session-search quality on the labelled set, through the real `kioku` command.

Imports the set into a fresh KIOKU_HOME with `kioku import`, asks every question with
one `kioku search --queries FILE --json`, and prints recall@1, recall@5, recall@10 and
MRR per language, per LoCoMo category (multi-hop, temporal, open-domain, single-hop,
adversarial) when the set has them, and overall; then each question that missed at 5
with what came back instead.

    .venv/bin/python tests/bench/bench_search_quality.py [--set DIR] [--limit N]

`--set` takes any folder holding `sessions.jsonl` and `questions.jsonl` in the same
format as tests/data/search_eval (for a held-out set).

With `--embed-python PYTHON` (a venv holding the model, see embed_server.py) or
`--embed-url URL`, it then runs the same questions with `local_vectors` on and prints
R@1/R@5/R@10 per slice for lexical and fused search (`fused_search.py`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import fused_search
from search_eval import (
    DEFAULT_SET,
    EvalSetError,
    format_failures,
    format_table,
    load_set,
    run_kioku_search,
    score,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="labelled set folder")
    parser.add_argument(
        "--limit", type=int, default=10, help="sessions asked for per question (10: recall@10)"
    )
    fused_search.add_arguments(parser)
    args = parser.parse_args()
    try:
        eval_set = load_set(args.set)
    except (OSError, EvalSetError) as exc:
        print(f"cannot read the labelled set: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kioku-search-eval-") as home:
        run = run_kioku_search(eval_set, Path(home) / "kioku", limit=args.limit)
    scores = score(eval_set.questions, run.rankings(), eval_set.owners)
    turns = len(eval_set.messages)
    print(
        f"set: {args.set}  sessions: {len(eval_set.owners)}  turns: {turns}  "
        f"questions: {len(eval_set.questions)}  limit: {args.limit}"
    )
    print(
        f"kioku import: {run.import_seconds:.2f}s   "
        f"kioku search --queries: {run.search_seconds:.2f}s for {len(eval_set.questions)} "
        "questions (process start included)"
    )
    print()
    print(format_table({"kioku": scores}))
    print()
    print(format_failures(scores, run.results, eval_set.owners))
    if fused_search.wanted(args):
        print()
        fused_search.print_fused(args, eval_set, run if args.limit >= 10 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
