"""Client: a blocking client of askslack's host API (standard library only)."""

from __future__ import annotations

import http.client
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import timedelta
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _http
from .errors import ASK_ABORTED, INTERNAL, UNAVAILABLE, AskslackError, error_for
from .types import (
    AckResult,
    Answer,
    AnswerItem,
    AnswerResult,
    AskResult,
    Projection,
    Request,
    Status,
    SteeredMessage,
    _ask_result,
)

__all__ = ["Client", "RequestLike", "AnswerLike", "Wait", "__version__"]

__version__ = "0.1.0"

#: An ask: a :class:`~askslack.types.Request`, or its wire JSON as a mapping (``{"callId": …, "agent": …, "questions": […]}``).
RequestLike = Union[Request, Mapping[str, Any]]
#: An answer: an :class:`~askslack.types.Answer`, its items, or its wire JSON.
AnswerLike = Union[Answer, Sequence[AnswerItem], Mapping[str, Any]]
#: A window: seconds, or a timedelta.
Wait = Union[float, int, timedelta]

# Backoff between re-attaches (seconds); an attempt longer than the maximum was attached.
_REATTACH_MIN = 0.2
_REATTACH_MAX = 5.0
# The longest long poll the bot holds (its maxWait).
_MAX_WAIT_MS = 300_000


def _seg(s: str) -> str:
    return urllib.parse.quote(str(s), safe="")


def _wait_query(wait_ms: Optional[float]) -> str:
    if wait_ms is None or wait_ms <= 0:
        return ""
    return f"?waitMs={min(int(wait_ms), _MAX_WAIT_MS)}"


def _seconds(w: Wait) -> float:
    return w.total_seconds() if isinstance(w, timedelta) else float(w)


def request_json(request: RequestLike, wait: Optional[Wait] = None) -> Dict[str, Any]:
    """The wire JSON of an ask; ``wait`` (seconds) sets ``timeoutMs``."""
    if isinstance(request, Request):
        body = request.to_json()
    elif isinstance(request, Mapping):
        body = dict(request)
    else:
        raise TypeError(f"askslack: an ask is a Request or a mapping, not {type(request).__name__}")
    if not body.get("callId"):
        raise ValueError("askslack: the ask has no callId")
    if wait is not None:
        body["timeoutMs"] = round(_seconds(wait) * 1000)
    return body


def answer_json(body: AnswerLike) -> Dict[str, Any]:
    if isinstance(body, Answer):
        return body.to_json()
    if isinstance(body, Mapping):
        return dict(body)
    if isinstance(body, Sequence) and not isinstance(body, (str, bytes)):
        return Answer(answers=list(body)).to_json()
    raise TypeError(f"askslack: an answer is an Answer, a list of AnswerItem or a mapping, not {type(body).__name__}")


def aborted_error(call_id: str) -> AskslackError:
    """The error a cancelled ask raises."""
    return error_for(ASK_ABORTED, f"the ask {call_id} was withdrawn: the caller aborted it")


def _describe(err: BaseException) -> str:
    if isinstance(err, urllib.error.URLError) and not isinstance(err, urllib.error.HTTPError):
        reason = err.reason
        return f"{type(reason).__name__}: {reason}" if isinstance(reason, BaseException) else str(reason)
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


class Client:
    """A client of askslack's host API.

    :param url: where the bot listens (``ASKSLACK_URL``), e.g. ``http://127.0.0.1:8080``.
    :param token: a bearer token (one of the bot's ``ASKSLACK_API_TOKENS`` for an
        agent, ``ASKSLACK_ANSWER_TOKENS`` for an answer surface); None for a
        loopback bot without tokens.
    :param timeout: seconds to connect, and to read the response of a call
        that does not wait. A long poll may take its ``wait_ms`` on top; a
        blocking ask has no read timeout at all (a person takes as long as they
        take, and the bot withdraws a question whose blocking request closes).
    :param reattach: seconds :meth:`ask` keeps re-sending the same request
        (same ``callId``, which re-attaches to the open question) through an
        unbroken run of transient failures: the bot unreachable, a connection
        reset or cut short, a replica draining (``UNAVAILABLE``), 502/503/504
        from a proxy. An attempt that stayed connected for a while starts a
        fresh run. 0 disables.
    :param withdraw_timeout: seconds the ``DELETE`` that withdraws a cancelled ask may take.
    :param ssl_context: for an ``https://`` bot with a private CA.
    :param proxies: ``{"http": …, "https": …}``; None reads the environment's
        (``http_proxy``, ``no_proxy``), ``{}`` uses none.

    Every failure the API reports raises an :class:`~askslack.errors.AskslackError`
    subclass carrying the API's ``code`` and the HTTP ``status``; an
    unreachable bot raises ``UNAVAILABLE``. A client holds no connections:
    share one between threads freely.
    """

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        timeout: float = 30.0,
        *,
        reattach: float = 120.0,
        withdraw_timeout: float = 10.0,
        ssl_context: Optional[ssl.SSLContext] = None,
        proxies: Optional[Mapping[str, str]] = None,
    ) -> None:
        if not url:
            raise ValueError("askslack: Client needs the bot's url")
        self.url = url.rstrip("/")
        self._token = token or None
        self.timeout = timeout
        self.reattach = reattach
        self.withdraw_timeout = withdraw_timeout
        self._opener = _http.build_opener(ssl_context, proxies)

    @classmethod
    def from_env(cls, **kw: Any) -> "Client":
        """A client of ``ASKSLACK_URL`` (default ``http://127.0.0.1:8080``) with ``ASKSLACK_TOKEN``."""
        return cls(os.environ.get("ASKSLACK_URL") or "http://127.0.0.1:8080", os.environ.get("ASKSLACK_TOKEN") or None, **kw)

    def __repr__(self) -> str:
        return f"Client({self.url!r}, token={'…' if self._token else None})"

    # --- asks -----------------------------------------------------------------

    def ask(self, request: RequestLike, wait: Optional[Wait] = None, *, cancel: Optional[threading.Event] = None) -> AskResult:
        """``POST /v1/asks``: ask and wait.

        Returns the :class:`~askslack.types.Settlement` (``answers``,
        ``respondent``) once a person answers, or :class:`~askslack.types.Pending`
        when a timed window closes first.

        :param wait: makes the ask timed: the window in seconds (or a
            timedelta), sent as ``timeoutMs``; None keeps the request's own
            ``timeout_ms`` (untimed when it has none). A timed ask needs
            ``agent.session_id``: that is where its late answer goes.
        :param cancel: when this event is set, the request is cut, the
            question withdrawn (``DELETE``: the Slack message says the agent
            withdrew it) and :class:`~askslack.errors.AskAbortedError` raised.
            An event already set posts nothing.

        On a transient failure (see ``reattach``) it re-sends the same
        request, which re-attaches to the open question. A request that merely
        goes away does not withdraw the question: the bot keeps it for its
        re-attach grace (``ASKSLACK_REATTACH_GRACE``).
        """
        body = request_json(request, wait)
        call_id = str(body["callId"])
        if cancel is not None and cancel.is_set():
            raise aborted_error(call_id)
        watch = _http.Watch(cancel) if cancel is not None else None
        backoff = _REATTACH_MIN
        failing_since: Optional[float] = None
        try:
            while True:
                began = time.monotonic()
                try:
                    data = self._do("POST", "/v1/asks", body, read_timeout=None, attempt=watch.attempt() if watch else None)
                    return _ask_result(data)
                except AskslackError as err:
                    if cancel is not None and cancel.is_set():
                        self._withdraw(call_id)
                        raise aborted_error(call_id) from err
                    now = time.monotonic()
                    if now - began > _REATTACH_MAX:
                        # It was attached for a while (a long wait cut by a
                        # proxy's idle timeout, a replica draining): a new
                        # run, counted from now — not from when the attempt
                        # began, or a wait longer than `reattach` would
                        # never be re-attached.
                        failing_since = now
                        backoff = _REATTACH_MIN
                    elif failing_since is None:
                        failing_since = began
                    if err.code != UNAVAILABLE or now + backoff > failing_since + self.reattach:
                        raise
                if cancel is not None:
                    if cancel.wait(backoff):
                        self._withdraw(call_id)
                        raise aborted_error(call_id)
                else:
                    time.sleep(backoff)
                backoff = min(backoff * 2, _REATTACH_MAX)
        finally:
            if watch is not None:
                watch.close()

    def start(self, request: RequestLike) -> Status:
        """``POST /v1/asks`` with ``Prefer: respond-async``: the bot stores and
        posts the question and answers at once with its status (``202``); the
        question lives until answered, withdrawn or retention. Follow it with
        :meth:`get` (``wait_ms``, ``version``)."""
        body = request_json(request)
        return Status.from_json(self._do("POST", "/v1/asks", body, prefer="respond-async"))

    def get(self, call_id: str, wait_ms: Optional[int] = None, *, version: Optional[int] = None) -> Status:
        """``GET /v1/asks/{callId}``: the ask's state now, or — with ``wait_ms``
        (≤ 300 000) — once its version changes (from ``version`` when given: a
        change made since returns at once), in any state. When the wait passes
        with no change it returns the status as it is."""
        q = _wait_query(wait_ms)
        if q and version is not None:
            q += f"&version={int(version)}"
        return Status.from_json(self._do("GET", f"/v1/asks/{_seg(call_id)}{q}", wait_ms=wait_ms))

    def abort(self, call_id: str, *, reason: Optional[str] = None) -> Status:
        """``DELETE /v1/asks/{callId}``: withdraw the question (the Slack message
        says the agent withdrew it; a blocking ask on it raises ``ASK_ABORTED``).
        Withdrawing twice is not an error; an answered ask raises
        ``ALREADY_SETTLED``. ``reason="answered-elsewhere"``: the agent's own
        prompt was answered first, and the message says so."""
        q = f"?reason={urllib.parse.quote(reason, safe='')}" if reason else ""
        return Status.from_json(self._do("DELETE", f"/v1/asks/{_seg(call_id)}{q}"))

    def answer(self, call_id: str, body: AnswerLike) -> AnswerResult:
        """``POST /v1/asks/{callId}/answer`` (answer surfaces: ``ASKSLACK_ANSWER_TOKENS``):
        answer from another UI. In the window (or untimed) it settles the ask;
        after the window it queues a late answer for the agent (``continued``,
        ``message_id``). The respondent is the token's name; ``body``'s
        ``respondent`` is kept as its claim. Errors: ``BAD_ANSWER``,
        ``NOT_FOUND``, ``ALREADY_SETTLED``, ``REPLY_QUEUED``, ``ASK_ABORTED``,
        ``FORBIDDEN`` (an agent's token)."""
        return AnswerResult.from_json(self._do("POST", f"/v1/asks/{_seg(call_id)}/answer", answer_json(body)))

    # --- sessions ---------------------------------------------------------------

    def messages(self, session_id: str, wait_ms: Optional[int] = None, *, caller: Optional[str] = None) -> List[SteeredMessage]:
        """``GET /v1/sessions/{sessionId}/messages``: the late answers waiting
        for the session's agent, oldest first. With ``wait_ms`` (≤ 300 000) it
        long-polls until one is waiting or the time passes (then ``[]``). A
        message stays until acknowledged (:meth:`ack`). ``caller``: an answer
        surface or operator reads that agent caller's session."""
        path = f"/v1/sessions/{_seg(session_id)}/messages{_wait_query(wait_ms)}"
        data = self._do("GET", _with_caller(path, caller), wait_ms=wait_ms)
        msgs = data.get("messages") if isinstance(data, Mapping) else None
        return [SteeredMessage.from_json(m) for m in (msgs or [])]

    def ack(self, session_id: str, message: Union[SteeredMessage, str]) -> AckResult:
        """``POST /v1/sessions/{sessionId}/messages/{id}/ack``: the agent
        admitted the message; the question becomes settled. Acknowledging twice
        is not an error."""
        mid = message.id if isinstance(message, SteeredMessage) else message
        return AckResult.from_json(self._do("POST", f"/v1/sessions/{_seg(session_id)}/messages/{_seg(mid)}/ack"))

    def projection(self, session_id: str, *, caller: Optional[str] = None) -> Projection:
        """``GET /v1/sessions/{sessionId}/questions``: the session's timed questions, ``active`` and ``settled``."""
        return Projection.from_json(self._do("GET", _with_caller(f"/v1/sessions/{_seg(session_id)}/questions", caller)))

    # --- plumbing ----------------------------------------------------------------

    def _withdraw(self, call_id: str) -> None:
        """Best-effort withdrawal after a cancel: errors are ignored (the ask
        may be answered, or never stored — then the cut request withdraws it
        once the bot's re-attach grace passes)."""
        try:
            self._do("DELETE", f"/v1/asks/{_seg(call_id)}", read_timeout=self.withdraw_timeout, connect_timeout=self.withdraw_timeout)
        except AskslackError:
            pass

    def _do(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        prefer: Optional[str] = None,
        wait_ms: Optional[float] = None,
        read_timeout: Any = _http._KEEP,
        connect_timeout: Optional[float] = None,
        attempt: Optional[_http.Attempt] = None,
    ) -> Any:
        url = self.url + path
        headers = {"Accept": "application/json", "User-Agent": f"askslack-python/{__version__}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if prefer:
            headers["Prefer"] = prefer
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        if read_timeout is _http._KEEP and wait_ms:
            read_timeout = self.timeout + min(float(wait_ms), _MAX_WAIT_MS) / 1000
        req.askslack_read_timeout = read_timeout  # type: ignore[attr-defined]
        req.askslack_attempt = attempt if attempt is not None else _http.current_attempt.get()  # type: ignore[attr-defined]
        status: int
        try:
            with self._opener.open(req, timeout=connect_timeout if connect_timeout is not None else self.timeout) as resp:
                status = resp.status
                raw = resp.read()
        except urllib.error.HTTPError as e:
            status = e.code
            try:
                raw = e.read()
            except (OSError, http.client.HTTPException):
                raw = b""
            finally:
                e.close()
        except (OSError, http.client.HTTPException) as e:
            # URLError (refused, DNS), a reset, a cut response, a timeout.
            raise error_for(UNAVAILABLE, f"askslack unreachable: {method} {url}: {_describe(e)}") from e
        text = raw.decode("utf-8", errors="replace")
        try:
            parsed: Any = json.loads(text) if text.strip() else None
        except ValueError:
            parsed = None
        if not 200 <= status <= 299:
            eb = parsed.get("error") if isinstance(parsed, Mapping) else None
            if isinstance(eb, Mapping) and isinstance(eb.get("code"), str):
                msg = eb.get("message")
                raise error_for(eb["code"], msg if isinstance(msg, str) and msg else eb["code"], status)
            code = UNAVAILABLE if status in (502, 503, 504) else INTERNAL
            raise error_for(code, f"askslack: {method} {path}: HTTP {status}: {text.strip()[:500]}", status)
        if parsed is None:
            raise error_for(INTERNAL, f"askslack: {method} {path}: HTTP {status} with a body that is not JSON", status)
        return parsed


def _with_caller(path: str, caller: Optional[str]) -> str:
    if not caller:
        return path
    return path + ("&" if "?" in path else "?") + "caller=" + urllib.parse.quote(caller, safe="")
