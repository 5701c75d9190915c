"""Pure: a config in, the desired artifacts out (wrappers, plists, the crontab block); templates in the top-level templates/ folder."""
