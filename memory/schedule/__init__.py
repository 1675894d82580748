"""Reminders and scheduled tasks: when they run (each person's time zone, cron, DST) and
the jobs and their runs as state.db keeps them, claimed before anything is sent."""
