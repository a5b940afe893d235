"""Handlers a capture attaches to torch's loggers: each record handed to a callback, and the
mutation-analysis fallback warning recorded and kept off the console."""

from __future__ import annotations

import logging
from typing import Any

from tritoninspect.capture import compat


class LogHandler(logging.Handler):
    """Hands every record of the logger it is attached to to `callback`."""

    def __init__(self, callback: Any) -> None:
        super().__init__(logging.DEBUG)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        self.callback(record)


class FallbackFilter(logging.Filter):
    """Records the mutation-analysis fallback warning and keeps it off the
    console: the report states it per kernel, with its cause."""

    def __init__(self, callback: Any) -> None:
        super().__init__()
        self.callback = callback

    def filter(self, record: logging.LogRecord) -> bool:
        if compat.dynamo.MUTATION_FALLBACK_TEXT in record.getMessage():
            self.callback(record)
            return False
        return True
