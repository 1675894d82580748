"""/skills: what kioku has learned how to do. In a direct message the sender's own
skills and the shared ones; in a group the shared ones alone, which is what the group's
sessions can use.
"""

from __future__ import annotations

from gateway.commands.context import Context
from memory.skills.library import SkillsLibrary


async def skills_mine(context: Context[str]) -> str:
    return await _listing(context, context.person)


async def skills_shared(context: Context[str | None]) -> str:
    return await _listing(context, None)


async def _listing(context: Context[str] | Context[str | None], person: str | None) -> str:
    library = SkillsLibrary(context.services.home, context.settings.skills)
    listing = await library.listing(person)
    if not listing.skills:
        return "No skills yet: kioku writes them as it learns how to do things for you."
    whose = "Shared skills" if person is None else "Your skills"
    lines = [f"{whose}:"]
    for listed in listing.skills:
        shared = " (shared)" if listed.skill.scope == "shared" and person else ""
        lines.append(f"- {listed.skill.name}{shared}: {listed.skill.doc.description}")
    return "\n".join(lines)
