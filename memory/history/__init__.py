"""A person's control over their history: what may be deleted by whom, the one function
that deletes it (and makes it unreadable), the listing people choose from, and retention."""
