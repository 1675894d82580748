"""A deterministic chat history whose words follow Zipf's law, as real chat does.

`corpus.py` gives each person a few topics, so a query word is rare across the whole
store. Real histories are not like that: one person talks about everything, and an
everyday word ("work", "tomorrow", "dinner") is in a tenth of all turns. This corpus
is that case, the hard one for search: one person (the owner) holds every turn, in
DMs on four platforms and in group chats they speak in; words are drawn from a
vocabulary by Zipf's law (rank r with weight 1/r); every tenth message is Japanese;
a few rare tokens (ticket numbers, as people paste them) are in a handful of turns
each. `query_set()` draws four classes of queries from what was generated: one
common word (in 10-20% of turns), two common words, a common Japanese word, a rare
token.

Nothing here imports kioku: bench_search_speed.py feeds it to kioku and to Hermes.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

OWNER = "owner"
FRIENDS = tuple(f"friend{n}" for n in range(5))
PLATFORMS = ("telegram", "discord", "slack", "cli")
TURNS_PER_SESSION = 20
GROUP_EVERY = 10  # every tenth session is a group chat
JAPANESE_EVERY = 10  # every tenth message is Japanese
RARE_TOKENS = 200
RARE_COPIES = 4


def _listed(text: str) -> list[str]:
    """The words of a multi-line string, each once, in order."""
    return list(dict.fromkeys(text.split()))


EN_WORDS = _listed("""
work time today tomorrow good think know need want thing going people week really
meeting dinner home call look make day night morning help email project plan back
right still coffee lunch weekend place idea book train office file phone friend
family kids school doctor money car trip house music game movie show kitchen garden
server code bug test deploy release backup disk error update version config laptop
password account team client report budget deadline review draft design price order
list note photo video message chat group recipe bread cheese pasta salad soup rice
chicken fish tea beer wine water walk run bike gym park beach city street shop store
market bank card bill rent tax insurance appointment dentist flight hotel ticket bus
station airport weather rain snow cold warm sunny wind birthday party gift wedding
holiday vacation summer winter spring autumn month year hour minute early late
quick slow easy hard nice great small big long short new old first last next
fine happy tired busy sick better worse cheap expensive open closed ready done
start finish move change try keep leave bring send read write watch listen learn
teach cook clean fix buy sell pay save spend remember forget decide choose agree
answer question problem reason story news article paper letter package box bag
key door window room floor wall table chair bed couch lamp screen keyboard mouse
printer cable charger battery network router wifi signal storage folder database
query index schema migration script function library package module branch commit
merge issue ticket sprint standup roadmap feature user customer support sales
contract invoice payment salary interview offer manager colleague neighbour uncle
aunt cousin brother sister mother father daughter son baby dog cat vet food walk
""")
EN_FILLER = _listed("the a to and I you it is of in that for on with was this we my so")
JA_WORDS = _listed("""
仕事 今日 明日 会議 電車 料理 天気 週末 予定 買い物 散歩 映画 音楽 写真 友達 家族
病院 学校 旅行 お店 抹茶 京都 東京 駅 会社 家 部屋 時間 朝 夜 昼ご飯 晩ご飯 お茶
コーヒー パン ケーキ ラーメン 寿司 カレー 野菜 果物 雨 雪 風 暑い 寒い 忙しい 楽しい
大変 簡単 新しい 古い 大きい 小さい 電話 メール 手紙 本 新聞 テレビ パソコン スマホ
サーバー バックアップ 設定 更新 予約 誕生日 休み 夏休み 引っ越し 掃除 洗濯 運動 ジム
""")
JA_PARTICLES = ("は", "が", "を", "に", "で", "と", "の", "も")


@dataclass(frozen=True)
class Turn:
    role: str
    speaker: str | None
    text: str
    ts: datetime


@dataclass
class Session:
    external_id: str
    platform: str
    chat: str
    kind: str  # "dm" or "group"
    turns: list[Turn]


def _zipf(words: list[str]) -> list[float]:
    return [1 / rank for rank in range(1, len(words) + 1)]


class _Writer:
    """Draws turns: English words by Zipf's law with filler, Japanese every tenth."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.en_weights = _zipf(EN_WORDS)
        self.ja_weights = _zipf(JA_WORDS)
        self.count = 0
        self.rare = [f"zx{self.rng.randrange(10**6):06d}" for _ in range(RARE_TOKENS)]
        self.rare_left = {token: RARE_COPIES for token in self.rare}

    def text(self, role: str) -> str:
        self.count += 1
        length = self.rng.randint(4, 12) if role == "user" else self.rng.randint(12, 30)
        if self.count % JAPANESE_EVERY == 0:
            words = self.rng.choices(JA_WORDS, self.ja_weights, k=max(3, length // 2))
            particles = self.rng.choices(JA_PARTICLES, k=len(words))
            return "".join(w + p for w, p in zip(words, particles, strict=True)) + "。"
        words = self.rng.choices(EN_WORDS, self.en_weights, k=length)
        for index in range(0, length, 3):
            words.insert(index, self.rng.choice(EN_FILLER))
        if self.rng.random() < 0.002 and self.rare_left:
            token = self.rng.choice(list(self.rare_left))
            self.rare_left[token] -= 1
            if not self.rare_left[token]:
                del self.rare_left[token]
            words.append(token)
        return " ".join(words).capitalize() + "."


def generate(turns: int, *, seed: int = 5) -> Iterator[Session]:
    """Sessions of `TURNS_PER_SESSION` turns until `turns` are made (the last may be short)."""
    writer = _Writer(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    made = 0
    number = 0
    while made < turns:
        group = number % GROUP_EVERY == GROUP_EVERY - 1
        platform = PLATFORMS[number % len(PLATFORMS)]
        chat = f"g{number % 7}" if group else f"dm-{platform}"
        when = start + timedelta(hours=3 * number)
        session_turns = []
        for index in range(min(TURNS_PER_SESSION, turns - made)):
            role = "user" if index % 2 == 0 else "assistant"
            speaker = (OWNER if index % 4 == 0 else FRIENDS[number % 5]) if group else OWNER
            session_turns.append(
                Turn(
                    role,
                    speaker if role == "user" else None,
                    writer.text(role),
                    when + timedelta(seconds=30 * index),
                )
            )
        made += len(session_turns)
        kind = "group" if group else "dm"
        yield Session(f"z{number:07d}", platform, chat, kind, session_turns)
        number += 1


def query_set(sessions: list[Session], per_class: int = 25, seed: int = 13) -> dict[str, list[str]]:
    """Queries by class, drawn from what `sessions` hold (see the module docstring)."""
    rng = random.Random(seed)
    documents = Counter()
    japanese = Counter()
    rare = Counter()
    turns = 0
    for session in sessions:
        for turn in session.turns:
            turns += 1
            words = set(turn.text.rstrip(".").lower().split())
            documents.update(w for w in words if w in _EN_SET)
            rare.update(w for w in words if w.startswith("zx"))
            japanese.update(w for w in JA_WORDS if w in turn.text)
    # Sorted: the counts' order follows set iteration, which string hashing varies per run.
    common = sorted(w for w, n in documents.items() if 0.10 <= n / turns <= 0.20)
    if len(common) < 2:
        common = [w for w, _ in documents.most_common(6)]
    ja_common = [w for w, _ in japanese.most_common(8)]
    rare_tokens = sorted(rare) or ["zx000000"]
    return {
        "one common word": [rng.choice(common) for _ in range(per_class)],
        "two common words": [" ".join(rng.sample(common, 2)) for _ in range(per_class)],
        "Japanese word": [rng.choice(ja_common) for _ in range(per_class)],
        "rare token": [rng.choice(rare_tokens) for _ in range(per_class)],
    }


_EN_SET = frozenset(EN_WORDS)
