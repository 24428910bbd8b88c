"""The ``oloproof`` command line."""
