"""Tools from Model Context Protocol servers the owner configures.

Nothing here imports the `mcp` SDK at module level except `connection`, which the
manager loads only when at least one server is enabled: a daemon without MCP servers
pays nothing for the SDK.
"""
