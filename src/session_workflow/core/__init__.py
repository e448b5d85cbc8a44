"""Shared primitives: atomic writes, bounded reads, JSON-lines logs, where state lives, text measures."""
