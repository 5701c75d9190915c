"""The cron language on its own (no jobs): expressions, launchd calendars both ways, sentences, firing times."""
