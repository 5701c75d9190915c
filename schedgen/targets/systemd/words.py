"""Words of the systemd target that its light front (__init__) and its parts share."""

# How status words a job whose original timer (the one it adopts) still runs.
ADOPT_NOTE = "your own timer it adopts still runs too (apply turns it off)"
