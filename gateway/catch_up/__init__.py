"""What was said while kioku was away, and what was changed after: catch-up and edits."""
