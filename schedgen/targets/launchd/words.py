"""Words of the launchd target that its light front (__init__) and its parts share."""

# How status words a job whose original plist (the one it adopts) still runs.
ADOPT_NOTE = "your own plist it adopts still runs too (apply turns it off)"
