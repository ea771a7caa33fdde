"""The core's own extensions, registered through the same hooks as any plugin."""
