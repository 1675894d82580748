"""`kioku memory tidy` through the real entry point against the fake model: `--dry-run`
prints the diff and writes nothing, a run saves the tidied file, no model is a clear refusal."""

from __future__ import annotations

from pathlib import Path

from memory.notes.format import parse_entries
from tests.fakes.anthropic_api import FakeAnthropic
from tests.helpers.cli_batch import Job, kioku_batch_async

ENTRIES = ("Likes green tea", "Drinks green tea every morning", "Lives in Tokyo")
MERGE = {
    "operations": [
        {
            "action": "replace",
            "target": "memory",
            "old_text": "Likes",
            "content": "Green tea daily",
        },
        {"action": "remove", "target": "memory", "old_text": "Drinks green tea"},
    ]
}


async def test_dry_run_prints_the_diff_and_writes_nothing_then_a_run_saves_it(
    home: Path, tmp_path: Path
) -> None:
    folder = home / "people" / "owner"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("\n§\n".join(ENTRIES) + "\n", encoding="utf-8")
    async with FakeAnthropic() as api:
        for _ in range(2):  # the dry run, then the real one
            api.reply_tool_use("memory", MERGE)
            api.reply_text("done")
        model = {
            "KIOKU_LLM__API_KEY": "sk-test",
            "KIOKU_LLM__BASE_URL": api.base_url,
            "KIOKU_LLM__MAX_RETRIES": "0",
        }
        jobs = [
            Job("dry", ["memory", "tidy", "--dry-run"], home, model),
            Job("run", ["memory", "tidy"], home, model),
            Job("no model", ["memory", "tidy"], home),
        ]
        ran = await kioku_batch_async(jobs, tmp_path / "batch")
        second_brief = api.requests[2].body.decode()

    dry = ran["dry"]
    assert dry.code == 0, dry.stderr
    assert "--- MEMORY.md (before)\n+++ MEMORY.md (tidied)\n" in dry.stdout
    assert "-Drinks green tea every morning\n" in dry.stdout and "+Green tea daily\n" in dry.stdout
    assert "MEMORY.md: dry run: nothing was written." in dry.stdout
    assert "USER.md: nothing to tidy." in dry.stdout
    assert "Drinks green tea every morning" in second_brief  # the dry run left the file as it was

    assert ran["run"].code == 0, ran["run"].stderr
    assert "MEMORY.md: tidied and saved as one change." in ran["run"].stdout
    saved = parse_entries((folder / "MEMORY.md").read_text(encoding="utf-8"))
    assert saved == ["Green tea daily", "Lives in Tokyo"]

    refused = ran["no model"]
    assert refused.code == 1 and "No model is configured yet" in refused.stderr
    refused.assert_clean()
