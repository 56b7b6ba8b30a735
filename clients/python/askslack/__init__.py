"""askslack — ask a person in Slack from a Python agent.

A client of askslack's host HTTP API with no dependencies beyond the
standard library (Python ≥ 3.10):

- :class:`Client` — the blocking client; :class:`AsyncClient` — the same for asyncio;
- :func:`late_answers` — a session's late answers, read and acknowledged;
- the API's JSON as dataclasses (:class:`Request`, :class:`Question`, :class:`Settlement`, …);
- its errors as exceptions carrying the API's code (:class:`AskslackError`, :class:`NotFoundError`, …).
"""

from .aio import AsyncClient
from .client import AnswerLike, Client, RequestLike, Wait, __version__
from .errors import *  # noqa: F401,F403 - the codes and the exception classes
from .errors import __all__ as _errors_all
from .late import DEFAULT_WAIT_MS, AsyncLateAnswers, LateAnswers, late_answers
from .types import *  # noqa: F401,F403 - the wire types
from .types import __all__ as _types_all

__all__ = [
    "__version__",
    "Client",
    "AsyncClient",
    "RequestLike",
    "AnswerLike",
    "Wait",
    "late_answers",
    "LateAnswers",
    "AsyncLateAnswers",
    "DEFAULT_WAIT_MS",
    *_types_all,
    *_errors_all,
]
