"""What dating notes costs: the prompt characters the entries' months add, and the time a
session start spends comparing the files with the journal and reading the months.

Two realistic, nearly full files (MEMORY.md 87 %, USER.md 81 % of the default caps),
written through `PersonNotes` so each entry has a journal row, are rendered as the
frozen snapshot with months and without (the same files), and the session-start path
(`PersonNotes.render_snapshot`: the hand-edit check, the months, the render) is timed.

    .venv/bin/python tests/bench/bench_note_months.py [--runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from config.settings import NotesSettings  # noqa: E402
from memory.notes.format import TARGETS  # noqa: E402
from memory.notes.journal import NotesJournal  # noqa: E402
from memory.notes.origin import NoteOrigin  # noqa: E402
from memory.notes.person_notes import PersonNotes  # noqa: E402
from memory.notes.render import MONTHS_NOTE, render_snapshot  # noqa: E402
from memory.store.database import Store  # noqa: E402

MEMORY = [
    "Home server: Intel NUC 11, Debian 12, 32 GB RAM; kioku runs there under systemd.",
    "Project 'tea-shop': a Django 5 site for his sister's shop in Kyoto; deploys with Ansible.",
    "tea-shop DB is PostgreSQL 16 on the NUC; nightly pg_dump to the Synology NAS at 02:00.",
    "Prefers uv over pip and ruff over black; Python 3.12 everywhere he can.",
    "Decided 2026-10: move the shop's images to Cloudflare R2 instead of the NAS.",
    "Backups: restic to Backblaze B2, weekly prune on Sundays; keys in 1Password item 'restic'.",
    "Works on a ThinkPad X1 Carbon Gen 11 with Fedora 41 and Sway; uses Neovim with lazy.nvim.",
    "Home network: OPNsense router, VLAN 20 for IoT, Pi-hole on a Raspberry Pi 4.",
    "Runs Home Assistant in Docker on the NUC; Zigbee via a Sonoff dongle.",
    "Wants the shop's order emails in Japanese and English; uses Django's i18n.",
    "Monitoring: Uptime Kuma on the NUC pings the shop every minute; alerts go to Telegram.",
    "CI: GitHub Actions, tests with pytest and playwright; main is protected.",
    "Learning Rust with 'Rust for Rustaceans'; side project is a CLI for his weather station.",
    "Weather station: Ecowitt GW2000 pushing to a small FastAPI app on the NUC.",
    "姉の店の新メニューは毎月第一月曜に更新する。写真は本人が撮る。",
    "Avoid suggesting Kubernetes: he finds it too heavy for one NUC.",
    "Git: signs commits with an SSH key; conventional commit messages.",
    "The shop's domain is at Gandi; DNS moved to Cloudflare in 2026-09, proxied off for mail.",
    "Mail for the shop: Fastmail, with SPF, DKIM and DMARC set; he checks DMARC reports monthly.",
    "The NAS is a Synology DS920+ with 2x8 TB in SHR; snapshots hourly, kept 2 weeks.",
    "Tried Nextcloud in 2025 and dropped it: too slow on the NUC. Uses Syncthing instead.",
    "Plans to replace the NUC with a Minisforum MS-01 next spring if the shop grows.",
    "Keeps infrastructure notes in a private Git repo 'homelab' with Ansible roles per host.",
    "Shop payments through Stripe; webhooks hit /stripe/hook on the Django site.",
]
USER = [
    "Name: Kenji Watanabe; goes by Ken. Lives in Osaka, grew up in Kyoto.",
    "Site reliability engineer at a logistics company; on call one week in four.",
    "Prefers short answers with the command first, explanation after.",
    "Writes to me in English on Slack and in Japanese on Telegram; answer in the language he uses.",
    "Time zone Asia/Tokyo; usually free after 21:00 on weekdays.",
    "Dislikes emoji in answers; fine with tables.",
    "Vegetarian; allergic to buckwheat (soba).",
    "Has a cat named Mochi and a sister, Aya, who runs the tea shop.",
    "Likes concrete numbers: sizes in MB, times in ms.",
    "趣味はロードバイクと写真。週末は琵琶湖を走ることが多い。",
    "Wants reminders for the shop's monthly menu update on the first Monday.",
    "Uses a YubiKey for SSH and GitHub; never paste tokens into chats.",
    "Reads Hacker News in the morning; interested in SQLite and home-lab setups.",
    "Prefers examples in Python or shell; explain Rust only when he asks.",
    "Keyboard: a Japanese layout at work, US layout at home.",
    "Does not want weekend work reminders unless he asks for them.",
    "Birthday 14 March; his sister's is 2 August.",
    "Uses metric units; temperatures in Celsius.",
]


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        async with await Store.open(home / "state.db") as store:
            notes = PersonNotes(home, "ken", NotesSettings(), NotesJournal(store))
            for target, entries in (("memory", MEMORY), ("user", USER)):
                for entry in entries:
                    result = await notes.add(target, entry, origin=NoteOrigin("memory tool"))
                    assert result.ok, result.message
            states = {target: await notes.read(target) for target in TARGETS}
            plain = render_snapshot(states)
            dated = await notes.render_snapshot()
            timings = []
            for _ in range(runs):
                started = time.perf_counter()
                await notes.render_snapshot()
                timings.append((time.perf_counter() - started) * 1000)
    entries = sum(len(state.entries) for state in states.values())
    added = len(dated) - len(plain)
    print("| figure | value |\n|---|---|")
    for state in states.values():
        print(f"| {state.file_name} | {state.usage}, {len(state.entries)} entries |")
    print(f"| snapshot without months | {len(plain):,} chars |")
    print(f"| snapshot with months | {len(dated):,} chars |")
    print(f"| added | {added:,} chars ({added * 100 / len(plain):.1f} %), {entries} entries |")
    print(f"| added per entry | {added / entries:.1f} chars |")
    print(f"| the intro's sentence explaining them, once | {len(MONTHS_NOTE)} chars |")
    print(f"| session start (check + months + render), p50 | {statistics.median(timings):.2f} ms |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(main(parser.parse_args().runs))
