"""Backups of a whole kioku home: one private `.tar.gz` with a manifest, verified and restored."""
