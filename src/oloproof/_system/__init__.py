"""User-facing system API: passages, retrievals and the system decorators."""
