"""What a request can end in besides its answer: the caller's mistake, told in words that say what to change, or its
client giving up on it."""


class InputError(ValueError):
    """A request the model cannot read; the message tells the caller what to change (served as INVALID_ARG)."""


class Cancelled(Exception):
    """The client gave up on its request: the rest of it is not worth reading (served as CANCELLED)."""
