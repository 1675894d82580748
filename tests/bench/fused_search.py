"""The fused column of `bench_search_quality.py`: `kioku search` with `local_vectors` on.

A fresh KIOKU_HOME gets the set through `kioku import`, a config.toml enabling the
provider against the embeddings server, `kioku providers backfill local_vectors`, and
then every question in one `kioku search --queries FILE --json`: the real path, the
fusion inside the command. The server is either given (`--embed-url`, an
OpenAI-compatible root ending in /v1) or started from a venv holding the model
(`--embed-python`: `embed_server.py`, all-MiniLM-L6-v2 on the CPU; see its docstring).

Figures per slice: LoCoMo's question categories (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial) when the set has them, else the languages.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from search_eval import EvalSet, KiokuRun, Question, run_kioku, run_kioku_search, score

CUTS = (1, 5, 10)
MODEL = "all-minilm-l6-v2"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embed-python", help="a python with the model installed: adds the fused column"
    )
    parser.add_argument(
        "--embed-url", help="an embeddings server's /v1 root instead: adds the fused column"
    )


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.embed_python or args.embed_url)


def print_fused(args: argparse.Namespace, eval_set: EvalSet, lexical: KiokuRun | None) -> None:
    """The fused run beside the lexical one (asked again if it asked for fewer than 10)."""
    limit = max(CUTS)
    with embeddings_server(args) as base_url:
        fused, backfill_seconds = run_fused(eval_set, base_url, limit)
    if lexical is None:
        with tempfile.TemporaryDirectory(prefix="kioku-search-eval-") as home:
            lexical = run_kioku_search(eval_set, Path(home) / "kioku", limit=limit)
    print(
        f"fused: kioku providers backfill local_vectors {backfill_seconds:.1f}s   "
        f"kioku search --queries: {fused.search_seconds:.2f}s "
        "(each query embedded by the model, process start included)"
    )
    print()
    rows = {"lexical": lexical.rankings(), "fused": fused.rankings()}
    print(recall_table(args.set, eval_set.questions, rows))
    for name, rankings in rows.items():
        leaks = score(eval_set.questions, rankings, eval_set.owners).leaks
        print(f"{name}: {len(leaks)} results of another person (isolation leaks)")


@contextmanager
def embeddings_server(args: argparse.Namespace) -> Iterator[str]:
    """The server's /v1 root: the one given, or `embed_server.py` started for the run."""
    if args.embed_url:
        yield args.embed_url
        return
    server = subprocess.Popen(
        [args.embed_python, str(Path(__file__).with_name("embed_server.py"))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("port "):
            raise SystemExit(f"the embeddings server did not start (said {line!r})")
        yield f"http://127.0.0.1:{line.split()[1]}/v1"
    finally:
        server.kill()
        server.wait()


def run_fused(eval_set: EvalSet, base_url: str, limit: int) -> tuple[KiokuRun, float]:
    """Every question through `kioku search` with `local_vectors` on; the run and the
    seconds the backfill took."""
    with tempfile.TemporaryDirectory(prefix="kioku-fused-eval-") as scratch:
        home = Path(scratch) / "kioku"
        home.mkdir()
        (home / "config.toml").write_text(
            # The bench measures the fusion, not the server's load: never fall back.
            "[providers]\nrecall_timeout = 30\n"
            "[providers.local_vectors]\n"
            f'enabled = true\nbase_url = "{base_url}"\nmodel = "{MODEL}"\ntimeout = 600\n',
            encoding="utf-8",
        )
        began = time.perf_counter()
        run_kioku(home, "import", str(eval_set.sessions_file))
        imported = time.perf_counter()
        run_kioku(home, "providers", "backfill", "local_vectors", timeout=3600)
        embedded = time.perf_counter()
        queries = Path(scratch) / "queries.jsonl"
        lines = (
            json.dumps({"person": q.person, "query": q.query, "limit": limit}, ensure_ascii=False)
            for q in eval_set.questions
        )
        queries.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        done = run_kioku(home, "search", "--queries", str(queries), "--json")
        searched = time.perf_counter()
    answers = [line for line in done.stdout.splitlines() if line.strip()]
    results = {q.id: json.loads(a) for q, a in zip(eval_set.questions, answers, strict=True)}
    return KiokuRun(results, imported - began, searched - embedded), embedded - imported


def slices(set_dir: Path, questions: Sequence[Question]) -> dict[str, list[Question]]:
    """The questions by LoCoMo category when the set has them, else by language; and all."""
    categories: dict[str, int] = {}
    queries = set_dir / "queries.jsonl"
    if queries.exists():
        for line in queries.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                categories[str(row["id"])] = int(row["category"])
    out: dict[str, list[Question]] = {}
    for question in questions:
        if question.id in categories:
            name = CATEGORIES.get(categories[question.id], str(categories[question.id]))
        else:
            name = question.lang
        out.setdefault(name, []).append(question)
    return {**dict(sorted(out.items())), "all": list(questions)}


def recall_table(
    set_dir: Path, questions: Sequence[Question], systems: Mapping[str, Mapping[str, list[str]]]
) -> str:
    """R@1, R@5, R@10 per slice, one line per system and slice."""
    parts = slices(set_dir, questions)
    head = f"{'system':<10}{'slice':<13}{'n':>5}" + "".join(f"{'R@' + str(k):>8}" for k in CUTS)
    lines = [head]
    for name, rankings in systems.items():
        for part, chosen in parts.items():
            answered = [q for q in chosen if q.answers]
            rates = [_recall(answered, rankings, k) for k in CUTS]
            lines.append(
                f"{name:<10}{part:<13}{len(answered):>5}" + "".join(f"{r:>8.3f}" for r in rates)
            )
    return "\n".join(lines)


def _recall(answered: Sequence[Question], rankings: Mapping[str, list[str]], k: int) -> float:
    if not answered:
        return 0.0
    found = sum(any(s in q.answers for s in rankings.get(q.id, [])[:k]) for q in answered)
    return found / len(answered)
