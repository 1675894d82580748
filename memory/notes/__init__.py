"""Memory layer 1: each person's bounded MEMORY.md and USER.md."""
