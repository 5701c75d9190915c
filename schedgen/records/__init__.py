"""What the wrappers leave behind (run manifests, queue folders, locks), read back."""
