"""Errors a user can cause: the CLI turns each into one line on stderr and exit code 2."""


class UserError(Exception):
    """Something the user gave is unusable (a missing file, a malformed signature catalog, ...)."""
