"""The skills tools (`skills_list`, `skill_view`, `skill_manage`) and the prompt's skills index.

Skills are personal, so a group conversation sees only the owner's shared skills and
cannot write any: `skill_manage` is not offered there at all, and `skills_list` and
`skill_view` act as if nobody's own skills existed. In a direct message the tools act
for the person of the conversation and never see another person's skills.
"""

from __future__ import annotations

from typing import Any

from agent.live import SkillsIndex
from agent.tools.context import Services, ToolContext
from agent.tools.registry import Tool, ToolError
from memory.skills.format import SUPPORT_DIRS, SkillError
from memory.skills.library import ListedSkill, SkillsLibrary
from memory.skills.manage import ACTIONS, SkillRequest

AGENT = "agent"


def library(services: Services) -> SkillsLibrary:
    return SkillsLibrary(services.home, services.settings.skills)


def skills_index(services: Services) -> SkillsIndex:
    """The `SkillsIndex` for `Agent(...)`: own and shared skills (only shared in groups)."""
    return library(services).index


def _person(ctx: ToolContext) -> str | None:
    """Whose own skills this call may see: nobody's in a group."""
    return None if ctx.is_group else ctx.speaker


# -- skills_list -------------------------------------------------------------------------------

LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "description": "only skills of this category"},
    },
}
LIST_DESCRIPTION = (
    "List the skills you can use here: name, description, and whether it is this person's own "
    "or shared. Read one with skill_view before following it."
)


async def list_handler(arguments: dict[str, Any], ctx: ToolContext) -> str:
    category = arguments.get("category")
    listing = await library(ctx.services).listing(_person(ctx), category)
    where = " in category " + repr(category) if category else ""
    lines = [f"{len(listing.skills)} skill(s){where}:" if listing.skills else f"No skills{where}."]
    lines += [_list_line(listed) for listed in listing.skills]
    own_problems = [p for p in listing.problems if p.scope == "personal"]
    for problem in own_problems:
        lines.append(
            f"Unusable: {problem.folder.name} — {problem.reason}. Fix it with skill_manage edit "
            "(a whole new SKILL.md) or delete it."
        )
    shared_problems = len(listing.problems) - len(own_problems)
    if shared_problems:
        lines.append(
            f"{shared_problems} shared skill folder(s) could not be read; the owner sees why "
            "in `kioku skills list`."
        )
    if ctx.is_group:
        lines.append("In a group only the shared skills are available.")
    elif not listing.skills and not category:
        lines.append(
            "After a task that took several steps, save the procedure with skill_manage create."
        )
    return "\n".join(lines)


def _list_line(listed: ListedSkill) -> str:
    doc = listed.skill.doc
    owner = "own" if listed.skill.scope == "personal" else "shared"
    category = f", {doc.category}" if doc.category else ""
    return f"- {doc.name} ({owner}{category}): {' '.join(doc.description.split())}"


# -- skill_view --------------------------------------------------------------------------------

VIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "the skill's name, as in the index"},
        "file": {
            "type": "string",
            "description": "a supporting file to read instead of SKILL.md, e.g. references/api.md",
        },
    },
    "required": ["name"],
}
VIEW_DESCRIPTION = (
    "Read a skill before you follow it: returns its SKILL.md (or, with file, one of its "
    "supporting files) and the list of its files."
)


async def view_handler(arguments: dict[str, Any], ctx: ToolContext) -> str:
    try:
        view = await library(ctx.services).view(
            _person(ctx), arguments["name"], arguments.get("file")
        )
    except SkillError as exc:
        raise ToolError(str(exc)) from None
    owner = "this person's own" if view.skill.scope == "personal" else "shared, read-only"
    header = f"{view.skill.name}/{view.file} ({owner}; files: {', '.join(view.files)})"
    return f"{header}\n\n{view.content}"


# -- skill_manage ------------------------------------------------------------------------------

MANAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"enum": list(ACTIONS)},
        "name": {"type": "string", "description": "lowercase, e.g. 'deploy-blog'"},
        "content": {"type": "string", "description": "the whole SKILL.md (create, edit)"},
        "old_string": {"type": "string", "description": "exact text to replace, once (patch)"},
        "new_string": {"type": "string", "description": "its replacement (patch)"},
        "file_path": {
            "type": "string",
            "description": "a supporting file (write_file, remove_file; patch: instead of "
            "SKILL.md), under " + ", ".join(d + "/" for d in SUPPORT_DIRS),
        },
        "file_content": {"type": "string", "description": "the file's text (write_file)"},
    },
    "required": ["action", "name"],
}
MANAGE_DESCRIPTION = (
    "Save and improve this person's skills: procedures that worked, to follow next time. "
    "create: content is the whole SKILL.md — YAML front matter between '---' lines with name "
    "(equal to the skill's name) and description (one line: what it does, when to use it), "
    "then the steps in markdown. patch: replace one exact, unique old_string with new_string. "
    "edit: rewrite the whole SKILL.md. delete: remove the skill. write_file / remove_file: a "
    "supporting file. Skills are for repeatable procedures; one-off facts go in memory. "
    "Shared skills are read-only: to adapt one, create a personal skill of the same name."
)


async def manage_handler(arguments: dict[str, Any], ctx: ToolContext) -> str:
    if ctx.is_group or ctx.speaker is None:
        raise ToolError("Skills are personal: they can be changed only in a direct message.")
    approval = ctx.services.settings.skills.write_approval
    try:
        request = SkillRequest.from_mapping(arguments)
        result = await library(ctx.services).manage(ctx.speaker, request, AGENT, approval)
    except SkillError as exc:
        raise ToolError(str(exc)) from None
    return result.message


LIST_TOOL = Tool("skills_list", LIST_DESCRIPTION, LIST_SCHEMA, list_handler)
VIEW_TOOL = Tool("skill_view", VIEW_DESCRIPTION, VIEW_SCHEMA, view_handler, sequential=True)
MANAGE_TOOL = Tool(
    "skill_manage", MANAGE_DESCRIPTION, MANAGE_SCHEMA, manage_handler, where="dm", sequential=True
)
TOOLS = (LIST_TOOL, VIEW_TOOL, MANAGE_TOOL)
