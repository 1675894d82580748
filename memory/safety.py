"""The content scan every text bound for a system prompt goes through (notes now, skills later).

Notes are frozen into the system prompt of every later session, so one bad entry steers the
model for weeks. Four kinds of text are refused: attempts to steer the model (injection),
to send secrets or files somewhere (exfiltration), credentials themselves, and invisible
characters that hide text from the person reading the file. Rules are anchored on attack
phrasing and on the shapes of real secrets, not on bossy English, so ordinary notes
("prefers Python", "uses ssh keys for git", "password manager is 1Password") pass.
The text is NFKC-normalised first so full-width or compatibility look-alikes do not slip by.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class SafetyCategory(StrEnum):
    INJECTION = "injection"
    EXFILTRATION = "exfiltration"
    CREDENTIAL = "credential"
    HIDDEN_TEXT = "hidden_text"


@dataclass(frozen=True)
class SafetyFinding:
    """Why a text was refused: a category, a stable rule id and a sentence for people and models.

    The reason never quotes the offending text, so it can be shown in a prompt or a log
    without leaking the secret or repeating the injection.
    """

    category: SafetyCategory
    rule: str
    reason: str

    def __str__(self) -> str:
        return f"{self.category.value}: {self.reason}"


def scan_text(text: str) -> SafetyFinding | None:
    """The first problem found in `text`, or None when it is safe to put in a prompt."""
    hidden = _hidden_character(text)
    if hidden is not None:
        return hidden
    normalised = unicodedata.normalize("NFKC", text)
    for category, rule, check in _RULES:
        reason = check(normalised)
        if reason is not None:
            return SafetyFinding(category, rule, reason)
    return None


# -- hidden text ------------------------------------------------------------------------------

_INVISIBLE = frozenset(
    [
        *(0x034F, 0x061C, 0x115F, 0x1160, 0x180E, 0x200B, 0x200E, 0x200F, 0x3164, 0xFEFF, 0xFFA0),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2065),
        *range(0x2066, 0x206A),
        *range(0xE0000, 0xE0080),
    ]
)
_JOINERS = frozenset([0x200C, 0x200D])
_VARIATION_SELECTORS = frozenset([*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])


def _hidden_character(text: str) -> SafetyFinding | None:
    """Zero-width, bidi and tag characters; joiners only where scripts or emoji need them."""
    for index, char in enumerate(text):
        code = ord(char)
        hidden = code in _INVISIBLE
        if code in _JOINERS:
            hidden = not _joiner_is_legitimate(text, index)
        elif code in _VARIATION_SELECTORS and index > 0:
            hidden = ord(text[index - 1]) in _VARIATION_SELECTORS
        if hidden:
            name = unicodedata.name(char, "unnamed format character")
            return SafetyFinding(
                SafetyCategory.HIDDEN_TEXT,
                "invisible_character",
                f"contains an invisible character (U+{code:04X} {name}) that can hide text "
                "from the person reading the notes; retype the text without it",
            )
    return None


def _joiner_is_legitimate(text: str, index: int) -> bool:
    """ZWJ/ZWNJ shape emoji sequences and scripts such as Persian or Devanagari; not ASCII words."""
    if index == 0 or index == len(text) - 1:
        return False
    before, after = text[index - 1], text[index + 1]
    if unicodedata.category(after) == "So":
        return unicodedata.category(before) in ("So", "Sk") or before == "\ufe0f"
    return all(
        not char.isascii() and unicodedata.category(char)[0] in "LM" for char in (before, after)
    )


# -- credentials ------------------------------------------------------------------------------

_TOKEN_SHAPES: list[tuple[str, str]] = [
    (r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", "a private key"),
    (r"\bsk-ant-[A-Za-z0-9_-]{20,}", "an Anthropic API key"),
    (r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", "an OpenAI-style API key"),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}", "a GitHub token"),
    (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab token"),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}", "a Slack token"),
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "an AWS access key"),
    (r"\bAIza[0-9A-Za-z_-]{35}\b", "a Google API key"),
    (r"\b\d{6,12}:[A-Za-z0-9_-]{35}\b", "a Telegram bot token"),
    (r"\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b", "a Discord bot token"),
    (r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}", "a Stripe key"),
    (r"\bhf_[A-Za-z0-9]{30,}", "a Hugging Face token"),
    (r"\bnpm_[A-Za-z0-9]{36}\b", "an npm token"),
    (r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", "a JSON Web Token"),
    (r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}", "a bearer token"),
    (
        r"(?i)\b[a-z][a-z0-9+.-]{0,30}://[^\s/:@]{1,256}:(?!\$)[^\s/@]{3,256}@",
        "a URL with a password in it",
    ),
]
_TOKEN_PATTERNS = [(re.compile(pattern), what) for pattern, what in _TOKEN_SHAPES]

_SECRET_KEY = (
    r"(?<![A-Za-z0-9])(?:passwords?|passwd|passphrase|client[\s_-]?secret|secret[\s_-]?key"
    r"|private[\s_-]?key|api[\s_-]?key|apikey|access[\s_-]?key"
    r"|(?:auth|access|refresh|bot|api|bearer)[\s_-]?token|secret|token"
    r"|パスワード|暗証番号|apiキー|アクセスキー|シークレット|トークン)"
)
_ASSIGNED = re.compile(
    _SECRET_KEY + r"\s*(?::|=>?)\s*(?P<quote>[\"'`]?)(?P<value>[^\s\"'`]{4,})", re.IGNORECASE
)
_STATED = re.compile(
    _SECRET_KEY + r"(?:\s+(?:is|was)\s+|\s*[はが]\s*)(?P<quote>[\"'`]?)(?P<value>[!-~]{4,}?)"
    r"(?P=quote)(?=\s*(?:$|[.,;!?)\]]|\s(?:and|but|for)\b|です|でした|だ|。|、))",
    re.IGNORECASE | re.MULTILINE,
)
_NOT_A_SECRET = re.compile(
    r"(?i)(?:none|null|unset|empty|redacted|hidden|required|optional|see|stored|managed|kept|in|on"
    r"|from|via|set|tbd|todo|same|changed|rotated|expired|below|above|here|there)"
)
_REFERENCE = re.compile(
    r"(?i)^(?:[$<{%*(\[~/]|\.\.?/|env:|op://|1password|bitwarden|lastpass|keepass|keychain|vault"
    r"|gopass)"
    r"|://|\.\.\.|…|^(.)\1+$"
)
_ENV_VAR_NAME = re.compile(r"[A-Z0-9]*_[A-Z0-9_]*")


def _looks_secret(value: str, quoted: bool) -> bool:
    """A value shaped like a secret rather than a word, a reference or an env-var name."""
    if _NOT_A_SECRET.fullmatch(value) or _ENV_VAR_NAME.fullmatch(value):
        return False
    if _REFERENCE.search(value):
        return False
    if quoted or len(value) >= 16:
        return True
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    mixed_case = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return has_digit or has_symbol or mixed_case


def _credential(text: str) -> str | None:
    """Why `text` counts as holding a credential, or None."""
    what = _credential_kind(text)
    if what is None:
        return None
    return (
        f"contains {what}; notes must not hold secrets — note where the secret is kept "
        'instead (for example "in 1Password, item GitHub")'
    )


def _credential_kind(text: str) -> str | None:
    for pattern, what in _TOKEN_PATTERNS:
        if pattern.search(text):
            return what
    for match in _ASSIGNED.finditer(text):
        if _looks_secret(match["value"], bool(match["quote"])):
            return "a password or secret value"
    for match in _STATED.finditer(text):
        value = match["value"]
        if _looks_secret(value, bool(match["quote"])) and (
            match["quote"] or any(c.isdigit() or not c.isalnum() for c in value)
        ):
            return "a password or secret value"
    return None


# -- exfiltration -----------------------------------------------------------------------------

_SENSITIVE_FILE = (
    r"(?:\$\{?\w*(?:key|token|secret|password|passwd|credentials?)s?\b|\.env\b"
    r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|/etc/(?:passwd|shadow)\b|\.netrc\b"
    r"|\.aws/credentials|\.pgpass\b|\.npmrc\b|\.pypirc\b|authorized_keys|\.ssh/"
    r"|\.kioku\b|\b(?:memory|user)\.md\b|\bstate\.db\b)"
)
_NET_TOOL = r"\b(?:curl|wget|nc|ncat|netcat|socat|invoke-webrequest|invoke-restmethod|iwr|irm)\b"
_SHELL_EXFIL = re.compile(
    rf"{_NET_TOOL}[^\n]{{0,300}}{_SENSITIVE_FILE}|{_SENSITIVE_FILE}[^\n]{{0,200}}\|\s*{_NET_TOOL}",
    re.IGNORECASE,
)
_SEND_VERB = re.compile(
    r"\b(?:send|post|upload|forward|e-?mail|leak|exfiltrate|transmit|copy|share|paste)\b"
    r"|送信|送って|送れ|送る|送付|アップロード|転送|投稿|共有して",
    re.IGNORECASE,
)
_SECRET_THING = re.compile(
    r"\b(?:secrets?|credentials?|api[\s_-]?keys?|access\s+keys?|tokens?|passwords?|private\s+keys?"
    r"|ssh\s+keys?|\.env|env(?:ironment)?\s+variables?|cookies?|conversations?"
    r"|chat\s+(?:history|logs?)|message\s+history|system\s+prompt|memory\s+files?"
    r"|memory\.md|user\.md|(?:all\s+)?(?:the|your|these|those)\s+(?:notes|memor(?:y|ies)))\b"
    r"|apiキー|トークン|パスワード|秘密鍵|認証情報|シークレット|クレデンシャル|環境変数"
    r"|会話履歴|チャット履歴|会話の内容|システムプロンプト",
    re.IGNORECASE,
)
_DESTINATION = re.compile(
    r"https?://|ftp://|[\w.+-]{1,64}@[\w-]{1,63}\.\w|\b\d{1,3}(?:\.\d{1,3}){3}\b|webhook|pastebin",
    re.IGNORECASE,
)


def _exfiltration(text: str) -> str | None:
    """A network command reading secrets, or one line asking to send secrets to an address."""
    if _SHELL_EXFIL.search(text):
        return "runs a network command on secret files or variables (it could send them away)"
    if any(
        _SEND_VERB.search(line) and _SECRET_THING.search(line) and _DESTINATION.search(line)
        for line in text.splitlines()
    ):
        return "asks to send secrets, files or the conversation to an outside address"
    return None


# -- injection --------------------------------------------------------------------------------

_FILLER = r"(?:[\w'\u2019-]+\s+){0,4}"
_EARLIER = r"(?:previous|prior|above|earlier|preceding|former|original|existing|system|developer)"
_ORDERS = r"(?:instructions?|prompts?|rules|guidelines|directives|guardrails|constraints|messages)"
_IGNORE = r"(?:ignore|disregard|forget|override|bypass)"

_INJECTION_EN = [
    (
        "ignore_instructions",
        rf"\b{_IGNORE}\s+{_FILLER}{_EARLIER}\s+{_ORDERS}\b"
        rf"|\b(?:ignore|disregard|forget)\s+(?:all|any|every|your)\s+(?:\w+\s+){{0,2}}"
        r"(?:instructions|directives|guidelines)\b"
        r"|\b(?:ignore|disregard|forget)\s+your\s+(?:rules|prompt|programming|training)\b",
        "tries to make the assistant ignore its instructions",
    ),
    (
        "system_prompt",
        r"\bsystem\s+prompt\s+(?:override|injection)\b|\boverride\s+(?:the\s+|your\s+)?system\s+"
        r"prompt\b|\bnew\s+system\s+prompt\b|\b(?:reveal|print|show|output|repeat|leak|dump)\s+"
        r"(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|initial\s+instructions)",
        "tries to override or reveal the system prompt",
    ),
    (
        "role_override",
        r"\byou\s+are\s+(?:now|no\s+longer)\b|\bact\s+as\s+(?:the\s+|an?\s+)?(?:system|developer"
        r"|administrator|root|unrestricted)\b|\byour\s+new\s+(?:role|instructions|persona|identity)"
        r"\b|\b(?:enter|enable|activate)\s+(?:dan|jailbreak|god)\s+mode\b",
        "tries to give the assistant a new role or identity",
    ),
    (
        "role_markup",
        r"<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?inst\]|<</?sys>>"
        r"|</?(?:system|assistant|developer)(?:\s[^>]*)?>",
        "contains chat-template role markup that can fake a system or assistant message",
    ),
    (
        "deception",
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|let)\s+the\s+(?:user|person|owner)\b"
        r"|\bwithout\s+(?:telling|informing)\s+the\s+(?:user|person|owner)\b",
        "asks the assistant to hide something from the person",
    ),
]
_INJECTION_JA = [
    (
        "ignore_instructions_ja",
        r"(?:以前|前|これまで|今まで|上記|上|先ほど|さっき|過去|元|最初|全て|すべて|全部)の?"
        r"(?:指示|命令|指令|プロンプト|ルール|制約)(?:を|は)?(?:全て|すべて|全部)?(?:無視|忘れ|破棄)"
        r"|(?:指示|命令|指令|プロンプト|制約)を(?:全て|すべて|全部)?(?:無視|忘れ)",
        "tries to make the assistant ignore its instructions",
    ),
    (
        "system_prompt_ja",
        r"システムプロンプト.{0,6}?(?:無視|上書き|変更|表示|出力|教え|見せ|開示|漏)",
        "tries to override or reveal the system prompt",
    ),
    (
        "role_override_ja",
        r"(?:あなた|君|きみ|お前)は(?:今から|これから|今後|もう)|(?:今から|これから)(?:あなた|君|お前)は",
        "tries to give the assistant a new role or identity",
    ),
    (
        "deception_ja",
        r"(?:ユーザー|ユーザ|利用者|本人)に(?:は)?(?:言わ|伝え|知らせ|教え)(?:ない|ず)",
        "asks the assistant to hide something from the person",
    ),
]


def _matcher(pattern: str, reason: str) -> Callable[[str], str | None]:
    compiled = re.compile(pattern, re.IGNORECASE)
    return lambda text: reason if compiled.search(text) else None


_RULES: list[tuple[SafetyCategory, str, Callable[[str], str | None]]] = [
    (SafetyCategory.CREDENTIAL, "credential", _credential),
    (SafetyCategory.EXFILTRATION, "exfiltration", _exfiltration),
    *[
        (SafetyCategory.INJECTION, rule, _matcher(pattern, reason))
        for rule, pattern, reason in _INJECTION_EN + _INJECTION_JA
    ],
]
