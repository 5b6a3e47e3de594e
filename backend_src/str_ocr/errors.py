"""The one error a request can cause: the caller's mistake, told in words that say what to change."""


class InputError(ValueError):
    """A request the model cannot read; the message tells the caller what to change (served as INVALID_ARG)."""
