"""How results read: text for people, JSON for CI, in one place."""
