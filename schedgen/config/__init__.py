"""jobs.toml into the immutable model: the model, single values, defaults, the loader and its schema."""
