"""Skill folders and SKILL.md texts for tests."""

from __future__ import annotations

from pathlib import Path


def skill_md(
    name: str = "deploy-blog",
    description: str = "How to deploy the blog to the NUC",
    body: str = "# Deploy\n\n1. git push\n2. ssh nuc 'make deploy'\n",
    extra: str = "",
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}"


def put(source: Path, relative: str, text: str | None = None, **files: str) -> Path:
    """A skill folder `source/relative` with a SKILL.md and the given supporting files."""
    folder = source / relative
    folder.mkdir(parents=True)
    name = folder.name
    (folder / "SKILL.md").write_text(text or skill_md(name, description=f"about {name}"))
    for path, content in files.items():
        target = folder / path.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    return folder


def hermes_tree(source: Path) -> Path:
    """Hermes Agent's layout: category folders, hidden bookkeeping, one flat skill."""
    put(source, "github/github-issues", references__api="GET /repos/{o}/{r}/issues\n")
    put(source, "github/github-auth")
    put(source, "devops/docker/compose-up")
    put(source, "note-taking")
    (source / ".hub").mkdir()
    put(source / ".hub", "hub-skill")
    (source / ".bundled_manifest").write_text("{}")
    return source
