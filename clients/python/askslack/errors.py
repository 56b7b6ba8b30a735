"""The errors the host API reports, as exceptions.

Every failure the bot reports (``{"error":{"code","message"}}``) raises an
:class:`AskslackError` carrying that ``code`` (the seed's
``UserQuestionError`` taxonomy plus the codes askslack's API adds) and the
HTTP ``status``. Each code has its own subclass, so both styles work::

    try:
        client.get("no-such-call")
    except NotFoundError:
        ...
    except AskslackError as e:
        if e.code == UNAVAILABLE: ...

An unreachable bot (connection refused, reset, cut short) is
:class:`UnavailableError` with ``status`` None; an error response that is
not the API's JSON is ``UNAVAILABLE`` for 502/503/504 (a proxy) and
``INTERNAL`` otherwise.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
    "AskslackError",
    "error_for",
    # codes
    "EMPTY_QUESTIONS",
    "BAD_REQUEST",
    "BAD_TIMEOUT",
    "BAD_ANSWER",
    "DELEGATED_CALLER",
    "CALLER_NOT_LIVE",
    "REPLY_QUEUED",
    "ASK_ABORTED",
    "ASK_TIMED_OUT",
    "NO_PROVIDER",
    "NOT_FOUND",
    "CALL_CONFLICT",
    "NOT_CONTINUED",
    "ALREADY_SETTLED",
    "UNAVAILABLE",
    "SESSION_FULL",
    "FORBIDDEN",
    "PRINCIPAL_MISMATCH",
    "UNAUTHORIZED",
    "INTERNAL",
    # classes
    "EmptyQuestionsError",
    "BadRequestError",
    "BadTimeoutError",
    "BadAnswerError",
    "DelegatedCallerError",
    "CallerNotLiveError",
    "ReplyQueuedError",
    "AskAbortedError",
    "AskTimedOutError",
    "NoProviderError",
    "NotFoundError",
    "CallConflictError",
    "NotContinuedError",
    "AlreadySettledError",
    "UnavailableError",
    "SessionFullError",
    "ForbiddenError",
    "PrincipalMismatchError",
    "UnauthorizedError",
    "InternalError",
]

# The codes (waterfall/errors.go and the host API's own).
EMPTY_QUESTIONS = "EMPTY_QUESTIONS"  #: 400: an ask without questions
BAD_REQUEST = "BAD_REQUEST"  #: 400: malformed input (a timed ask without agent.session_id, a bad id, bad JSON)
BAD_TIMEOUT = "BAD_TIMEOUT"  #: 400: timeoutMs is not a positive integer
BAD_ANSWER = "BAD_ANSWER"  #: 400: an answer that does not fit the questions
DELEGATED_CALLER = "DELEGATED_CALLER"  #: 403: an agent owned by another agent may not ask a human
CALLER_NOT_LIVE = "CALLER_NOT_LIVE"  #: 409 (seed)
REPLY_QUEUED = "REPLY_QUEUED"  #: 409: a late answer already waits for the agent
ASK_ABORTED = "ASK_ABORTED"  #: 409: the question was withdrawn
ASK_TIMED_OUT = "ASK_TIMED_OUT"  #: the seed's timed-out code (this client returns Pending instead)
NO_PROVIDER = "NO_PROVIDER"  #: 503: no human available; proceed with your best judgment
NOT_FOUND = "NOT_FOUND"  #: 404: no such ask (or another caller's), message or rule
CALL_CONFLICT = "CALL_CONFLICT"  #: 409: the callId is taken by a different ask
NOT_CONTINUED = "NOT_CONTINUED"  #: 409 (seed)
ALREADY_SETTLED = "ALREADY_SETTLED"  #: 409: the question was already answered
UNAVAILABLE = "UNAVAILABLE"  #: 503 or unreachable: send the same request again to re-attach
SESSION_FULL = "SESSION_FULL"  #: 429: the session has too many active asks
FORBIDDEN = "FORBIDDEN"  #: 403: the caller's role may not do this (an agent answering)
PRINCIPAL_MISMATCH = "PRINCIPAL_MISMATCH"  #: 403: the ask names another principal than its caller's
UNAUTHORIZED = "UNAUTHORIZED"  #: 401: no valid bearer token
INTERNAL = "INTERNAL"  #: 500 or an unreadable response


class AskslackError(Exception):
    """A failure of askslack's host API: ``code`` (one of this module's
    constants, or a code this client does not know yet), ``message`` and the
    HTTP ``status`` (None when the bot was not reached)."""

    code: str
    message: str
    status: Optional[int]

    def __init__(self, code: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(code, message, status)
        self.code = code
        self.message = message
        self.status = status

    def __str__(self) -> str:
        s = f"{self.code}: {self.message}"
        return s if self.status is None else f"{s} (HTTP {self.status})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r}, {self.status!r})"


class EmptyQuestionsError(AskslackError):
    """``EMPTY_QUESTIONS`` (400)."""


class BadRequestError(AskslackError):
    """``BAD_REQUEST`` (400)."""


class BadTimeoutError(AskslackError):
    """``BAD_TIMEOUT`` (400)."""


class BadAnswerError(AskslackError):
    """``BAD_ANSWER`` (400)."""


class DelegatedCallerError(AskslackError):
    """``DELEGATED_CALLER`` (403)."""


class CallerNotLiveError(AskslackError):
    """``CALLER_NOT_LIVE`` (409)."""


class ReplyQueuedError(AskslackError):
    """``REPLY_QUEUED`` (409)."""


class AskAbortedError(AskslackError):
    """``ASK_ABORTED`` (409): withdrawn, by ``abort`` or a ``cancel`` event."""


class AskTimedOutError(AskslackError):
    """``ASK_TIMED_OUT``."""


class NoProviderError(AskslackError):
    """``NO_PROVIDER`` (503): nobody can answer; proceed with your best judgment."""


class NotFoundError(AskslackError):
    """``NOT_FOUND`` (404)."""


class CallConflictError(AskslackError):
    """``CALL_CONFLICT`` (409)."""


class NotContinuedError(AskslackError):
    """``NOT_CONTINUED`` (409)."""


class AlreadySettledError(AskslackError):
    """``ALREADY_SETTLED`` (409)."""


class UnavailableError(AskslackError):
    """``UNAVAILABLE``: the bot is unreachable or shutting down (503, 502, 504)."""


class SessionFullError(AskslackError):
    """``SESSION_FULL`` (429)."""


class ForbiddenError(AskslackError):
    """``FORBIDDEN`` (403)."""


class PrincipalMismatchError(AskslackError):
    """``PRINCIPAL_MISMATCH`` (403)."""


class UnauthorizedError(AskslackError):
    """``UNAUTHORIZED`` (401)."""


class InternalError(AskslackError):
    """``INTERNAL`` (500, or a response this client cannot read)."""


_BY_CODE: Dict[str, Type[AskslackError]] = {
    EMPTY_QUESTIONS: EmptyQuestionsError,
    BAD_REQUEST: BadRequestError,
    BAD_TIMEOUT: BadTimeoutError,
    BAD_ANSWER: BadAnswerError,
    DELEGATED_CALLER: DelegatedCallerError,
    CALLER_NOT_LIVE: CallerNotLiveError,
    REPLY_QUEUED: ReplyQueuedError,
    ASK_ABORTED: AskAbortedError,
    ASK_TIMED_OUT: AskTimedOutError,
    NO_PROVIDER: NoProviderError,
    NOT_FOUND: NotFoundError,
    CALL_CONFLICT: CallConflictError,
    NOT_CONTINUED: NotContinuedError,
    ALREADY_SETTLED: AlreadySettledError,
    UNAVAILABLE: UnavailableError,
    SESSION_FULL: SessionFullError,
    FORBIDDEN: ForbiddenError,
    PRINCIPAL_MISMATCH: PrincipalMismatchError,
    UNAUTHORIZED: UnauthorizedError,
    INTERNAL: InternalError,
}


def error_for(code: str, message: str, status: Optional[int] = None) -> AskslackError:
    """The exception for a code: its subclass, or :class:`AskslackError` for a code this client does not know."""
    return _BY_CODE.get(code, AskslackError)(code, message, status)
