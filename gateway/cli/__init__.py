"""The `kioku` command: one module per sub-app; they print and map errors to exit codes."""
