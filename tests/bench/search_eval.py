"""The labelled search set and how to score a ranking against it.

Shared by `bench_search_quality.py` (prints the figures), `bench_hermes.py` (the same
set through Hermes Agent) and `tests/memory/search/test_quality.py` (fails on regressions).
A set is a folder with `sessions.jsonl` (kioku's import format, one message a line)
and `questions.jsonl` (`{"id", "person", "lang", "query", "answers"}`); a question
with no answers only checks isolation: its asker has no session on the topic, but
someone else does, and none of theirs may come back.

Scores are hit rates: recall@k is the share of questions with at least one of their
answer sessions in the first k results; MRR averages 1/rank of the first answer. They
are given per language, per LoCoMo category when the set has them, and overall.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

DEFAULT_SET = Path(__file__).resolve().parents[1] / "data" / "search_eval"
KIOKU = Path(sys.executable).with_name("kioku")
LANGS = ("en", "ja")
# LoCoMo's question categories (its `category` field), as its paper names them.
LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


class EvalSetError(ValueError):
    """A labelled set that cannot be scored as written (the message says where)."""


@dataclass(frozen=True)
class Question:
    id: str
    person: str
    lang: str
    query: str
    answers: tuple[str, ...]
    category: str = ""


@dataclass(frozen=True)
class EvalSet:
    """The sessions file, its messages, the questions, and who owns each session."""

    sessions_file: Path
    messages: list[dict[str, Any]]
    questions: list[Question]
    owners: dict[str, str]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalSetError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise EvalSetError(f"{path}:{number}: expected a JSON object")
        rows.append(row)
    return rows


def load_set(directory: Path = DEFAULT_SET) -> EvalSet:
    """Read and check a labelled set: every answer must be a session of its asker.

    A folder in the LoCoMo layout (`import.jsonl` and `queries.jsonl`, as
    ../shared/data/locomo-dev) is read too: its questions are English, their answers
    the `evidence_sessions`, their slice the `category`; a question without evidence
    sessions is left out.
    """
    if (directory / "import.jsonl").exists() and (directory / "queries.jsonl").exists():
        return _load_locomo(directory)
    sessions_file = directory / "sessions.jsonl"
    messages = _read_jsonl(sessions_file)
    owners: dict[str, str] = {}
    for number, row in enumerate(messages, 1):
        missing = {"person", "platform", "chat", "session", "role", "content", "ts"} - set(row)
        if missing:
            raise EvalSetError(f"{sessions_file}: message {number} lacks {sorted(missing)}")
        if datetime.fromisoformat(row["ts"]).tzinfo is None:
            raise EvalSetError(f"{sessions_file}: message {number} has a ts without timezone")
        owner = owners.setdefault(row["session"], row["person"])
        if owner != row["person"]:
            raise EvalSetError(
                f"session {row['session']} has messages of both {owner} and {row['person']}"
            )
    rows = _read_jsonl(directory / "questions.jsonl")
    return EvalSet(sessions_file, messages, _questions(rows, owners), owners)


def _load_locomo(directory: Path) -> EvalSet:
    sessions_file = directory / "import.jsonl"
    messages = _read_jsonl(sessions_file)
    owners = {row["session"]: row["person"] for row in messages}
    rows = [
        {
            **row,
            "lang": "en",
            "answers": row["evidence_sessions"],
            "category": _category(row.get("category")),
        }
        for row in _read_jsonl(directory / "queries.jsonl")
        if row.get("evidence_sessions")
    ]
    return EvalSet(sessions_file, messages, _questions(rows, owners), owners)


def _category(code: Any) -> str:
    if code is None:
        return ""
    if code not in LOCOMO_CATEGORIES:
        raise EvalSetError(f"category {code!r} is not one of {sorted(LOCOMO_CATEGORIES)}")
    return LOCOMO_CATEGORIES[code]


def _questions(rows: list[dict[str, Any]], owners: Mapping[str, str]) -> list[Question]:
    questions = []
    for row in rows:
        question = Question(
            id=str(row["id"]),
            person=row["person"],
            lang=row["lang"],
            query=row["query"],
            answers=tuple(row["answers"]),
            category=row.get("category", ""),
        )
        if question.lang not in LANGS:
            raise EvalSetError(f"question {question.id}: lang must be one of {LANGS}")
        for answer in question.answers:
            if owners.get(answer) != question.person:
                raise EvalSetError(
                    f"question {question.id}: answer {answer!r} is not a session of "
                    f"{question.person}"
                )
        questions.append(question)
    return questions


@dataclass
class Group:
    """Hit counts for one slice of the questions (a language, a category, or all of them)."""

    name: str
    count: int = 0
    hits_at_1: int = 0
    hits_at_5: int = 0
    hits_at_10: int = 0
    reciprocal_ranks: float = 0.0

    @property
    def recall_at_1(self) -> float:
        return self.hits_at_1 / self.count if self.count else 0.0

    @property
    def recall_at_5(self) -> float:
        return self.hits_at_5 / self.count if self.count else 0.0

    @property
    def recall_at_10(self) -> float:
        return self.hits_at_10 / self.count if self.count else 0.0

    @property
    def mrr(self) -> float:
        return self.reciprocal_ranks / self.count if self.count else 0.0


@dataclass(frozen=True)
class Leak:
    """A result that belongs to someone other than the person who asked."""

    question: Question
    session: str
    owner: str


@dataclass
class Scores:
    groups: dict[str, Group]
    leaks: list[Leak] = field(default_factory=list)
    misses: list[Question] = field(default_factory=list)
    below_first: list[Question] = field(default_factory=list)


def first_answer_rank(question: Question, ranked: Sequence[str]) -> int | None:
    """1-based rank of the first answer session in `ranked`, or None."""
    for rank, session in enumerate(ranked, 1):
        if session in question.answers:
            return rank
    return None


def score(
    questions: Iterable[Question], rankings: Mapping[str, Sequence[str]], owners: Mapping[str, str]
) -> Scores:
    """Recall@1/5/10 and MRR per language, per category and overall, plus isolation leaks."""
    questions = list(questions)
    categories = [c for c in LOCOMO_CATEGORIES.values() if any(q.category == c for q in questions)]
    groups = {name: Group(name) for name in (*LANGS, *categories, "all")}
    scores = Scores(groups)
    for question in questions:
        ranked = rankings.get(question.id, [])
        for session in ranked:
            owner = owners.get(session)
            if owner != question.person:
                scores.leaks.append(Leak(question, session, owner or "?"))
        if not question.answers:
            continue
        rank = first_answer_rank(question, ranked)
        for group in (groups[n] for n in (question.lang, question.category, "all") if n):
            group.count += 1
            group.hits_at_1 += rank == 1
            group.hits_at_5 += rank is not None and rank <= 5
            group.hits_at_10 += rank is not None and rank <= 10
            group.reciprocal_ranks += 1 / rank if rank else 0.0
        if rank is None or rank > 5:
            scores.misses.append(question)
        elif rank > 1:
            scores.below_first.append(question)
    return scores


def format_table(rows: Mapping[str, Scores]) -> str:
    """One line per (system, slice) with questions: n, recall@1/5/10, MRR, leaks.

    Recall@10 needs 10 results a question (the bench asks for them by default).
    """
    lines = [
        f"{'system':<22}{'slice':<13}{'n':>5}{'R@1':>8}{'R@5':>8}{'R@10':>8}{'MRR':>8}{'leaks':>7}"
    ]
    for name, scores in rows.items():
        for group in scores.groups.values():
            if not group.count and group.name != "all":
                continue
            leaks = len(scores.leaks) if group.name == "all" else ""
            lines.append(
                f"{name:<22}{group.name:<13}{group.count:>5}{group.recall_at_1:>8.3f}"
                f"{group.recall_at_5:>8.3f}{group.recall_at_10:>8.3f}{group.mrr:>8.3f}"
                f"{leaks!s:>7}"
            )
    return "\n".join(lines)


def format_failures(
    scores: Scores, results: Mapping[str, Sequence[Mapping[str, Any]]], owners: Mapping[str, str]
) -> str:
    """Each missed question with what came back instead, to show why it failed."""
    out: list[str] = []
    for title, questions in (
        ("missed at 5", scores.misses),
        ("found, but not first", scores.below_first),
    ):
        out.append(f"-- {title}: {len(questions)}")
        for question in questions:
            out.append(
                f"{question.id} [{question.lang}] {question.person}: {question.query!r} "
                f"-> want {', '.join(question.answers)}"
            )
            for rank, result in enumerate(results.get(question.id, [])[:5], 1):
                out.append(f"    {rank}. {result['session']:<12} {_snippet(result)}")
            if not results.get(question.id):
                out.append("    (no results)")
    out.append(f"-- isolation leaks: {len(scores.leaks)}")
    for leak in scores.leaks:
        out.append(
            f"{leak.question.id} {leak.question.person}: {leak.question.query!r} "
            f"returned {leak.session} of {owners.get(leak.session, '?')}"
        )
    return "\n".join(out)


def _snippet(result: Mapping[str, Any]) -> str:
    hits = result.get("hits") or []
    text = hits[0].get("snippet", "") if hits else result.get("title") or ""
    return " ".join(str(text).split())[:110]


def kioku_env(home: Path) -> dict[str, str]:
    """The environment for a `kioku` subprocess with its own home and no outside settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KIOKU_", "ANTHROPIC_"))}
    return {**env, "KIOKU_HOME": str(home), "KIOKU_LOG__FORMAT": "json"}


def run_kioku(home: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the installed `kioku` command; a non-zero exit raises with its stderr."""
    done = subprocess.run(
        [str(KIOKU), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=kioku_env(home),
    )
    if done.returncode != 0:
        raise RuntimeError(f"kioku {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done


@dataclass(frozen=True)
class KiokuRun:
    """What `kioku search --queries` answered, with the time import and search took."""

    results: dict[str, list[dict[str, Any]]]
    import_seconds: float
    search_seconds: float

    def rankings(self) -> dict[str, list[str]]:
        return {qid: [r["session"] for r in found] for qid, found in self.results.items()}


def run_kioku_search(eval_set: EvalSet, home: Path, limit: int = 5) -> KiokuRun:
    """Import the set into `home` and ask every question in one `kioku search --queries`."""
    started = time.perf_counter()
    run_kioku(home, "import", str(eval_set.sessions_file))
    imported = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        queries = Path(scratch) / "queries.jsonl"
        lines = (
            json.dumps({"person": q.person, "query": q.query, "limit": limit}, ensure_ascii=False)
            for q in eval_set.questions
        )
        queries.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        done = run_kioku(home, "search", "--queries", str(queries), "--json")
    searched = time.perf_counter()
    answers = [line for line in done.stdout.splitlines() if line.strip()]
    if len(answers) != len(eval_set.questions):
        raise RuntimeError(
            f"kioku search --queries answered {len(answers)} lines "
            f"for {len(eval_set.questions)} queries"
        )
    results = {q.id: json.loads(a) for q, a in zip(eval_set.questions, answers, strict=True)}
    return KiokuRun(results, imported - started, searched - imported)
