"""Words of the cron target that its light front (__init__) and its parts share."""

# How status words a job whose original line in the user's crontab runs too.
ADOPT_NOTE = "your own line it adopts still runs too (apply turns it off)"
