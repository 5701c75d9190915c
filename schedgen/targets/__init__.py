"""Install targets: each knows what it wants on disk, how to read what is installed, and how to apply a plan."""
