"""Hand-written crontab lines and plists turned into a jobs.toml that validates."""
