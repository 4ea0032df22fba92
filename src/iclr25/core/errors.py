"""Errors a user can cause and fix: the CLI turns them into one line and exit code 2."""


class UsageError(ValueError):
    """Bad input from a user: unknown name, bad config value, empty seed list."""


class UnknownNameError(UsageError, KeyError):
    """A name that is not registered; the message lists the nearest valid names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def unknown_name(kind: str, name: str, valid: list[str]) -> UnknownNameError:
    """Build the error for an unknown `kind` called `name`, suggesting the closest of `valid`."""
    import difflib

    close = difflib.get_close_matches(name, valid, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return UnknownNameError(f"unknown {kind} {name!r}{hint} (valid: {', '.join(valid)})")
