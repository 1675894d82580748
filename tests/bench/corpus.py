# ruff: noqa: RUF001 (Japanese text uses full-width punctuation)
"""A deterministic synthetic chat history for benchmarks: many persons, two languages, groups.

Each person talks about a few topics of their own (English or Japanese, some both);
user turns are short, assistant turns longer, as in real chats. About a tenth of the
sessions are group chats where several members speak. `queries()` draws searches
from a person's own topics, so a benchmark measures real matches, not empty results.

Nothing here imports kioku: bench_store.py and bench_hermes.py both build on it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

EN_TOPICS: dict[str, list[str]] = {
    "database": [
        "schema",
        "migration",
        "index",
        "query planner",
        "orders table",
        "backfill",
        "foreign key",
        "replica",
        "vacuum",
        "deadlock",
        "partition",
        "connection pool",
    ],
    "travel": [
        "flight",
        "hotel",
        "itinerary",
        "train pass",
        "luggage",
        "visa",
        "museum",
        "day trip",
        "ferry",
        "hostel",
        "layover",
        "guidebook",
    ],
    "cooking": [
        "recipe",
        "sourdough",
        "oven",
        "marinade",
        "braise",
        "knife",
        "spice rack",
        "stock",
        "pastry",
        "fermentation",
        "cast iron",
        "dumplings",
    ],
    "finance": [
        "budget",
        "mortgage",
        "pension",
        "tax return",
        "invoice",
        "savings account",
        "index fund",
        "receipt",
        "expense report",
        "dividend",
        "interest rate",
    ],
    "homelab": [
        "backup",
        "raid",
        "container",
        "reverse proxy",
        "certificate",
        "firewall",
        "router",
        "nas",
        "snapshot",
        "uptime",
        "dns record",
        "vpn",
    ],
    "health": [
        "running plan",
        "sleep",
        "physio",
        "blood pressure",
        "stretching",
        "diet",
        "appointment",
        "vitamin",
        "knee",
        "posture",
        "marathon",
        "yoga",
    ],
    "writing": [
        "chapter",
        "outline",
        "draft",
        "editor",
        "deadline",
        "blog post",
        "newsletter",
        "character arc",
        "plot twist",
        "manuscript",
        "proofreading",
        "publisher",
    ],
}
EN_USER = [
    "Can you help me with the {a} for the {b}?",
    "I planned the {a} yesterday but the {b} keeps failing.",
    "What did we decide about the {a} and the {b}?",
    "Remind me how the {a} works again, I forgot after the {b} change.",
    "Quick question on {a}: should I worry about the {b}?",
    "We are planning a new {a} next week, any tips on {b}?",
]
EN_ASSISTANT = [
    "For the {a}, start small: check the {b} first, then adjust one thing at a time so you "
    "can see which change helped. Write down what you tried.",
    "The usual approach is to keep the {a} separate from the {b}. That way a problem in one "
    "does not spill into the other, and you can test them independently.",
    "You mentioned the {a} last time. If the {b} is the bottleneck, measure it before "
    "changing anything else; most of the time the fix is simpler than it looks.",
    "Here is a plan: first the {a}, then the {b}, then a short review. Keep notes of the "
    "numbers so that next month you can compare.",
]
JA_TOPICS: dict[str, list[str]] = {
    "料理": [
        "抹茶",
        "出汁",
        "味噌汁",
        "肉じゃが",
        "炊飯器",
        "天ぷら",
        "お弁当",
        "焼き魚",
        "漬物",
        "唐揚げ",
        "茶碗蒸し",
        "作り置き",
    ],
    "旅行": [
        "京都",
        "温泉",
        "新幹線",
        "旅館",
        "お土産",
        "神社",
        "紅葉",
        "北海道",
        "沖縄",
        "観光地",
        "宿泊",
        "乗り換え",
    ],
    "開発": [
        "設計",
        "データベース",
        "インデックス",
        "移行",
        "検索",
        "テスト",
        "障害",
        "環境構築",
        "性能",
        "監視",
        "認証",
        "バックアップ",
    ],
    "家計": [
        "家計簿",
        "確定申告",
        "医療費控除",
        "ふるさと納税",
        "保険",
        "貯金",
        "住宅ローン",
        "領収書",
        "年末調整",
        "光熱費",
        "予算",
        "通帳",
    ],
    "学校": [
        "運動会",
        "遠足",
        "宿題",
        "授業参観",
        "給食",
        "持ち物",
        "保護者会",
        "発表会",
        "通知表",
        "部活",
        "夏休み",
        "自由研究",
    ],
}
JA_USER = [
    "{a}について相談したい。{b}はどうすればいい？",
    "昨日{a}のことを考えてたんだけど、{b}が気になる",
    "{a}の話どうなった？{b}も決めないと",
    "前に話した{a}、{b}と一緒に進めたい",
    "{a}と{b}、どっちを先にやるべき？",
]
JA_ASSISTANT = [
    "{a}なら、まず{b}を確認するのがおすすめです。一つずつ変えて、どれが効いたか記録しておくと次回が楽になります。",
    "前回の{a}の件ですね。{b}が原因なら、先に状況を測ってから手を入れましょう。たいていは思ったより簡単に直ります。",
    "{a}と{b}は分けて考えると整理しやすいです。片方の問題がもう片方に広がらず、別々に確かめられます。",
    "手順としては、{a}、次に{b}、最後に振り返りです。数字を残しておけば来月比べられます。",
]
PLATFORMS = ["telegram", "discord", "slack", "cli"]
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Person:
    id: str
    lang: str
    topics: tuple[str, ...]


@dataclass
class CorpusSession:
    """One session: a DM of `person`, or a group chat where `members` speak."""

    external_id: str
    platform: str
    chat: str
    kind: str
    person: str | None
    started_at: datetime
    turns: list[tuple[str, str | None, str, datetime]] = field(default_factory=list)

    def rows(self) -> Iterator[dict[str, str]]:
        """The session in `kioku import` jsonl form (a group becomes its first speaker's)."""
        owner = self.person or next(s for _, s, _, _ in self.turns if s)
        for role, _, text, ts in self.turns:
            yield {"person": owner, "platform": self.platform, "chat": self.chat,
                   "session": self.external_id, "role": role, "content": text,
                   "ts": ts.isoformat()}  # fmt: skip


def persons(count: int, seed: int = 7) -> list[Person]:
    """The same persons (ids, language, topics) for every corpus and query seed."""
    rng = random.Random(seed)
    people = []
    for n in range(count):
        lang = "ja" if n % 3 == 0 else "en"
        pool = sorted(JA_TOPICS if lang == "ja" else EN_TOPICS)
        people.append(Person(f"p{n:04d}", lang, tuple(rng.sample(pool, 3))))
    return people


def _text(rng: random.Random, person: Person, templates: list[str]) -> str:
    topics = JA_TOPICS if person.lang == "ja" else EN_TOPICS
    words = topics[rng.choice(person.topics)]
    a, b = rng.sample(words, 2)
    extra = f" #{rng.randrange(10_000)}" if rng.random() < 0.3 else ""
    return rng.choice(templates).format(a=a, b=b) + extra


def generate(turns: int, *, people: int = 500, seed: int = 7) -> Iterator[CorpusSession]:
    """Sessions holding `turns` turns in total, oldest first."""
    rng = random.Random(seed)
    everyone = persons(people)
    groups = [rng.sample(everyone, 6) for _ in range(max(1, people // 20))]
    made, number = 0, 0
    clock = EPOCH
    while made < turns:
        number += 1
        clock += timedelta(minutes=rng.randrange(1, 30))
        length = min(turns - made, rng.randrange(4, 24))
        if rng.random() < 0.1:
            g = rng.randrange(len(groups))
            session = CorpusSession(f"g{g}-{number}", rng.choice(PLATFORMS[:3]), f"group{g}",
                                    "group", None, clock)  # fmt: skip
            members = groups[g]
        else:
            who = rng.choice(everyone)
            session = CorpusSession(f"s{number}", rng.choice(PLATFORMS), f"chat-{who.id}", "dm",
                                    who.id, clock)  # fmt: skip
            members = [who]
        for n in range(length):
            speaker = rng.choice(members)
            ts = clock + timedelta(seconds=40 * n)
            if n % 2 == 0:
                user = JA_USER if speaker.lang == "ja" else EN_USER
                session.turns.append(("user", speaker.id, _text(rng, speaker, user), ts))
            else:
                reply = JA_ASSISTANT if speaker.lang == "ja" else EN_ASSISTANT
                session.turns.append(("assistant", None, _text(rng, speaker, reply), ts))
        made += length
        yield session


def queries(count: int, *, people: int = 500, seed: int = 11) -> list[tuple[str, str, str]]:
    """(person, query, lang): half English, half Japanese, from the person's own topics."""
    rng = random.Random(seed)
    everyone = persons(people)
    by_lang = {lang: [p for p in everyone if p.lang == lang] for lang in ("en", "ja")}
    asked = []
    for n in range(count):
        lang = "en" if n % 2 == 0 else "ja"
        person = rng.choice(by_lang[lang])
        words = (JA_TOPICS if lang == "ja" else EN_TOPICS)[rng.choice(person.topics)]
        a, b = rng.sample(words, 2)
        if lang == "en":
            query = rng.choice([f"{a} {b}", f"what did we decide about the {a}?", f"{b}"])
        else:
            query = rng.choice([f"{a}の{b}", f"{a}の話どうなった？", f"{b}"])
        asked.append((person.id, query, lang))
    return asked
