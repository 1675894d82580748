"""The gateway's slash commands as Discord application commands (`discord.app_commands`).

Each command of the menu becomes one slash command; one that takes an argument gets one
optional string option. They are registered globally (the bot's DMs and every server;
Discord's clients may take a while to show a change) or, with `discord.command_guilds`,
in those servers only, where they show at once. Discord rate-limits command upserts, so
each scope is compared with what Discord holds and rewritten only when it differs; a
failure is a warning, and the adapter keeps serving messages.

An invocation becomes an `Inbound` whose text is `/name argument`, as if typed. Discord
wants an answer within 3 s, so it is deferred at once, ephemeral ("kioku is thinking…",
seen by the asker only). Each reply the gateway sends to that interaction then reaches
the asker alone: the first fills in the deferred answer, the next ones are ephemeral
followups — so a `/link` code or a `/web` link is never shown to a channel. The token
answers for 15 minutes; a reply Discord no longer takes through it goes to the person's
DMs instead, never to the channel.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import discord
import structlog
from discord import app_commands

from adapters.base import Inbound, MenuCommand
from config.platform_settings import DiscordSettings

log = structlog.get_logger("kioku.discord")

PLATFORM = "discord"
DESCRIPTION_LIMIT = 100
_NOT_NAME = re.compile(r"[^-_a-z0-9]+")
# Interactions remembered so a late reply still reaches the asker privately (by DM).
KEEP_SECONDS = 24 * 3600.0
KEEP_AT_MOST = 1000
# An interaction's message id for the gateway names its asker, so that a reply can find
# them by DM even after the interaction itself is forgotten (never the channel).
INTERACTION_ID = "interaction:{user}:{interaction}"
# Discord's answer to a token that has expired (401 Invalid Webhook Token) or an
# interaction it no longer knows (404).
_TOKEN_GONE = (401, 404)

NOT_HERE = "kioku does not answer here. Ask it in a direct message."
NO_CHANNEL = (
    "kioku could not tell which channel this came from; try again, or send it as a message."
)
UNKNOWN = "kioku has no /{name} now; /help lists its commands."
UNREADABLE = "kioku could not read that command (its commands are being updated); try again soon."

Deliver = Callable[[Inbound], Awaitable[None]]


def option_name(argument: str) -> str:
    """The option's name from the argument's help (`[cancel ID]` → `cancel_id`), as Discord
    allows: 1-32 of `-_a-z0-9`."""
    name = _NOT_NAME.sub("_", argument.lower()).strip("_-")[:32]
    return name or "argument"


def clip(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """One line of at most `limit` characters, cut at a word with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    return line[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:—-") + "…"


def option_description(command: MenuCommand) -> str:
    return clip(f"{command.argument.strip('[]')}: {command.summary}")


def _shape(payload: dict[str, Any], scope_is_global: bool) -> tuple[Any, ...]:
    """What of a command Discord shows and kioku sets, comparable between what kioku
    would register and what Discord returns (which adds ids and versions)."""
    options = tuple(
        (o["name"], o.get("description", ""), o["type"], bool(o.get("required", False)))
        for o in payload.get("options") or ()
    )
    contexts = payload.get("contexts"), payload.get("integration_types")
    installs = tuple(tuple(sorted(v)) if v is not None else None for v in contexts)
    return (
        payload["name"],
        payload.get("description", ""),
        payload.get("type", 1),
        options,
        installs if scope_is_global else None,
    )


@dataclass
class _Asked:
    """An interaction kioku deferred, until its replies are sent or it is forgotten."""

    interaction: discord.Interaction
    user_id: int
    at: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    filled: bool = False
    """The deferred answer holds the first reply; later ones are followups."""
    by_dm: bool = False
    """The token no longer answers (expired, or the client it belongs to was replaced)."""


class _Tree(app_commands.CommandTree):
    """A command tree whose failures (a command Discord still shows but kioku no longer
    has, options of an older registration) are warnings answered to the asker."""

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        name = (interaction.data or {}).get("name", "?")
        log.warning("discord_command_refused", command=name, error=repr(error))
        if interaction.response.is_done():
            return
        if isinstance(error, app_commands.CommandNotFound):
            text = UNKNOWN.format(name=name)
        else:
            text = UNREADABLE
        try:
            await interaction.response.send_message(text, ephemeral=True)
        except discord.HTTPException as exc:
            log.warning("discord_interaction_unanswered", command=name, error=repr(exc))


class ApplicationCommands:
    """The menu's commands on one client at a time, and the interactions awaiting replies."""

    def __init__(
        self, menu: Sequence[MenuCommand], settings: DiscordSettings, deliver: Deliver
    ) -> None:
        self.menu = tuple(menu)
        self.settings = settings
        self.deliver = deliver
        self._asked: OrderedDict[str, _Asked] = OrderedDict()

    # -- registering ----------------------------------------------------------------------

    def attach(self, client: discord.Client) -> app_commands.CommandTree:
        """A tree holding every command, global or in each `command_guilds` server; only
        commands run in kioku's own DMs and in servers (not in other people's DMs)."""
        tree = _Tree(
            client,
            allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True),
            allowed_installs=app_commands.AppInstallationType(guild=True),
        )
        guilds = [discord.Object(int(guild)) for guild in self.settings.command_guilds]
        for item in self.menu:
            if guilds:
                tree.add_command(self._command(item), guilds=guilds)
            else:
                tree.add_command(self._command(item))
        return tree

    def _command(self, item: MenuCommand) -> app_commands.Command[Any, ..., None]:
        name = item.name

        if item.argument:

            async def run(interaction: discord.Interaction, argument: str | None = None) -> None:
                await self._invoked(interaction, name, argument or "")

            run = app_commands.describe(argument=option_description(item))(run)
            run = app_commands.rename(argument=option_name(item.argument))(run)
            callback: Callable[..., Awaitable[None]] = run
        else:

            async def bare(interaction: discord.Interaction) -> None:
                await self._invoked(interaction, name, "")

            callback = bare
        return app_commands.Command(
            name=name, description=clip(item.summary or name), callback=callback
        )

    async def sync(self, client: discord.Client, tree: app_commands.CommandTree) -> None:
        """Make each scope hold exactly kioku's commands: global, each `command_guilds`
        server, and every other server the bot is in (where none belong, so a server
        taken off the list loses its copies)."""
        listed = [int(guild) for guild in self.settings.command_guilds]
        others = [guild.id for guild in client.guilds if guild.id not in listed]
        scopes: list[discord.Object | None] = [None]
        scopes += [discord.Object(guild) for guild in [*listed, *others]]
        for scope in scopes:
            where = "global" if scope is None else str(scope.id)
            try:
                await self._sync_scope(client, tree, scope, where)
            except discord.Forbidden as exc:
                log.warning(
                    "discord_commands_not_registered",
                    scope=where,
                    error=str(exc),
                    fix="invite kioku to that server with the applications.commands scope "
                    "(docs/discord.md), or take it off discord.command_guilds",
                )
            except Exception as exc:  # never fatal: messages are served all the same
                log.warning("discord_commands_not_registered", scope=where, error=repr(exc))

    async def _sync_scope(
        self,
        client: discord.Client,
        tree: app_commands.CommandTree,
        scope: discord.Object | None,
        where: str,
    ) -> None:
        app = client.application_id
        if app is None:
            raise app_commands.MissingApplicationID
        scope_is_global = scope is None
        wanted = [c.to_dict(tree) for c in tree.get_commands(guild=scope)]
        # The raw list: discord.py's AppCommand drops the contexts it does not model.
        if scope is None:
            held = await client.http.get_global_commands(app)
        else:
            held = await client.http.get_guild_commands(app, scope.id)
        if Counter(_shape(c, scope_is_global) for c in wanted) == Counter(
            _shape(dict(c), scope_is_global) for c in held
        ):
            log.info("discord_commands_current", scope=where, commands=len(wanted))
            return
        await tree.sync(guild=scope)
        log.info("discord_commands_registered", scope=where, commands=len(wanted))

    # -- receiving ------------------------------------------------------------------------

    async def _invoked(self, interaction: discord.Interaction, name: str, argument: str) -> None:
        """Defer within Discord's 3 s, remember the interaction, hand the command over."""
        place = _place(interaction, self.settings)
        if isinstance(place, str):
            log.info("discord_command_not_here", command=name, guild=str(interaction.guild_id))
            try:
                await interaction.response.send_message(place, ephemeral=True)
            except discord.HTTPException as exc:
                log.warning("discord_interaction_unanswered", command=name, error=repr(exc))
            return
        try:
            await interaction.response.defer(ephemeral=True, thinking=True)
        except discord.HTTPException as exc:
            # Too late (over 3 s) or already answered: the asker sees Discord's own notice.
            log.warning("discord_interaction_expired", command=name, error=repr(exc))
            return
        chat, thread = place
        user = interaction.user
        text = f"/{name} {argument.strip()}".strip()
        inbound = Inbound(
            PLATFORM,
            chat,
            f"{PLATFORM}:{user.id}",
            text,
            interaction.guild_id is None,
            thread=thread,
            sender_name=name_of(user),
            addressed=True,
            message_id=INTERACTION_ID.format(user=user.id, interaction=interaction.id),
            received_at=interaction.created_at,
            kept_by_platform=False,
        )
        self._remember(inbound.message_id, interaction)
        try:
            await self.deliver(inbound)
        except Exception:
            log.exception("discord_deliver_failed", chat=chat, message=inbound.message_id)

    def _remember(self, key: str, interaction: discord.Interaction) -> None:
        now = asyncio.get_running_loop().time()
        self._asked[key] = _Asked(interaction, interaction.user.id, now)
        self._asked.move_to_end(key)
        while self._asked:
            oldest = next(iter(self._asked.values()))
            if len(self._asked) <= KEEP_AT_MOST and now - oldest.at <= KEEP_SECONDS:
                break
            self._asked.popitem(last=False)

    # -- answering ------------------------------------------------------------------------

    def owns(self, message_id: str | None) -> bool:
        """Whether a reply to `message_id` answers an interaction (and must stay private),
        remembered or not."""
        return message_id is not None and message_id.startswith("interaction:")

    def client_replaced(self) -> None:
        """Interactions hold the old client's connection: their replies go by DM now."""
        for asked in self._asked.values():
            asked.by_dm = True

    async def answer(
        self,
        client: discord.Client,
        interaction_id: str,
        chunks: list[str],
        mentions: discord.AllowedMentions,
    ) -> None:
        """Send `chunks` to the asker alone: through the interaction's token while it
        answers, else in the person's DMs."""
        asked = self._asked.get(interaction_id)
        if asked is None:  # forgotten (over a day, or a thousand since): the asker's DMs
            user_id = int(interaction_id.split(":")[1])
            await _by_dm(client, user_id, interaction_id, chunks, mentions)
            return
        left = list(chunks)
        async with asked.lock:
            if not asked.by_dm:
                try:
                    await _through_token(asked, left, mentions)
                    return
                except discord.HTTPException as exc:
                    if exc.status not in _TOKEN_GONE:
                        raise
                    log.warning(
                        "discord_interaction_token_gone", interaction=interaction_id, error=str(exc)
                    )
                    asked.by_dm = True
            await _by_dm(client, asked.user_id, interaction_id, left, mentions)


async def _by_dm(
    client: discord.Client,
    user_id: int,
    interaction_id: str,
    chunks: list[str],
    mentions: discord.AllowedMentions,
) -> None:
    channel = await client.create_dm(discord.Object(user_id))
    log.info("discord_answer_by_dm", interaction=interaction_id, chunks=len(chunks))
    for chunk in chunks:
        await channel.send(chunk, allowed_mentions=mentions)


async def _through_token(asked: _Asked, left: list[str], mentions: discord.AllowedMentions) -> None:
    """Fill in the deferred answer, then follow up; `left` loses each chunk sent."""
    interaction = asked.interaction
    while left:
        if not asked.filled:
            await interaction.edit_original_response(content=left[0], allowed_mentions=mentions)
            asked.filled = True
        else:
            await interaction.followup.send(left[0], ephemeral=True, allowed_mentions=mentions)
        left.pop(0)


def name_of(user: discord.User | discord.Member) -> str | None:
    """The name kioku calls them by; None when Discord sent no usable one."""
    name = user.display_name
    return name if isinstance(name, str) else None


def _place(interaction: discord.Interaction, settings: DiscordSettings) -> tuple[str, str] | str:
    """(chat, thread) as for a message there, or why kioku does not answer there: another
    people's DM (a user-installed app), a server or channel off the allow lists."""
    channel = interaction.channel
    if channel is None:
        return NO_CHANNEL
    if interaction.guild_id is None:
        return NOT_HERE if interaction.context.private_channel else (str(channel.id), "")
    if settings.guilds and str(interaction.guild_id) not in settings.guilds:
        return NOT_HERE
    chat, thread = str(channel.id), ""
    if isinstance(channel, discord.Thread):
        chat, thread = str(channel.parent_id), str(channel.id)
    if settings.channels and not {chat, thread} & set(settings.channels):
        return NOT_HERE
    return chat, thread
