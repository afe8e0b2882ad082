"""Python tools plugin."""
