"""kioku as a systemd service: the unit (units.py, with what the MCP servers need of it,
mcp_needs.py), the system install as a recipe of root commands (recipe.py), what the
install warns of and starts (install.py), and sd_notify (notify.py), the daemon's side of
the unit's `Type=notify` and `WatchdogSec=`. Nothing here prints: `kioku service install`
and the setup wizard do.
"""
