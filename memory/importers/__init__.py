"""History and notes brought in from elsewhere: kioku's jsonl and a Hermes Agent home."""
