"""Desired vs installed: the change records, the contexts targets plan and apply in, the builder."""
