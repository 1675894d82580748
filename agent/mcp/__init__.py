"""Tools from Model Context Protocol servers the owner configures.

The manager is the tool registry's `ToolSource` for them. Only `connection` and the
modules it alone imports (`session`, `listing`, `results`) import the `mcp` SDK; the
manager loads `connection` only when at least one server is enabled, so a daemon
without MCP servers pays nothing.
"""
