"""The memory providers that ship with kioku, each loaded by name only when enabled."""
