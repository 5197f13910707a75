"""The receiver's one error: a request refused, with its HTTP status and a line for the sender."""


class ReceiverError(Exception):
    """A request the receiver refuses whole (nothing of it is appended).

    Args:
        status: The HTTP status to answer (400, 401, 403, 413, 415).
        message: Why, in one line the sender's logs can show.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


__all__ = ["ReceiverError"]
