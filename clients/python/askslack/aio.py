"""AsyncClient: the same API as :class:`~askslack.client.Client` for asyncio.

It runs the blocking client in threads: each call gets a daemon thread of its
own rather than a worker of asyncio's default executor (what
``asyncio.to_thread`` uses), because a blocking ask holds its thread for as
long as a person takes and a few of them would starve every other
``to_thread`` user of the process. Threads are cheap next to a person's
answer; the event loop never blocks.

Cancelling a call (``task.cancel()``, ``asyncio.wait_for``, a ``TaskGroup``
failing) cuts its HTTP request at once. Cancelling :meth:`AsyncClient.ask`
also withdraws the question (``DELETE``: the Slack message says the agent
withdrew it) before ``CancelledError`` propagates.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any, Callable, List, Mapping, Optional, Tuple, TypeVar, Union

from . import _http
from .client import AnswerLike, Client, RequestLike, Wait, request_json
from .types import AckResult, AnswerResult, AskResult, Projection, Status, SteeredMessage

__all__ = ["AsyncClient"]

T = TypeVar("T")


def _spawn(fn: Callable[..., T], args: Tuple[Any, ...], kwargs: Mapping[str, Any], attempt: Optional[_http.Attempt]) -> "asyncio.Future[T]":
    """Runs fn in a daemon thread of its own; the future resolves with its outcome."""
    loop = asyncio.get_running_loop()
    fut: "asyncio.Future[T]" = loop.create_future()
    ctx = contextvars.copy_context()

    def deliver(ok: bool, value: Any) -> None:
        if fut.done():
            return  # the awaiting task was cancelled
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def run() -> None:
        if attempt is not None:
            ctx.run(_http.current_attempt.set, attempt)
        value: Any
        try:
            value, ok = ctx.run(fn, *args, **kwargs), True
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
            value, ok = e, False
        try:
            loop.call_soon_threadsafe(deliver, ok, value)
        except RuntimeError:
            pass  # the loop is closed: nobody waits any more

    threading.Thread(target=run, name=f"askslack-{getattr(fn, '__name__', 'call')}", daemon=True).start()
    return fut


class AsyncClient:
    """A client of askslack's host API for asyncio; see :class:`~askslack.client.Client`
    for the parameters and each method's semantics. ``sync`` is the blocking
    client underneath."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 30.0, **kw: Any) -> None:
        self.sync = Client(url, token, timeout, **kw)

    @classmethod
    def from_env(cls, **kw: Any) -> "AsyncClient":
        """A client of ``ASKSLACK_URL`` (default ``http://127.0.0.1:8080``) with ``ASKSLACK_TOKEN``."""
        c = cls.__new__(cls)
        c.sync = Client.from_env(**kw)
        return c

    @property
    def url(self) -> str:
        return self.sync.url

    def __repr__(self) -> str:
        return "Async" + repr(self.sync)

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        attempt = _http.Attempt()
        try:
            return await _spawn(fn, args, kwargs, attempt)
        except asyncio.CancelledError:
            attempt.cancel()  # the thread's request ends now
            raise

    async def ask(self, request: RequestLike, wait: Optional[Wait] = None) -> AskResult:
        """``POST /v1/asks``: ask and wait (see :meth:`Client.ask`). Returns the
        Settlement, or Pending when a timed window (``wait`` seconds, or the
        request's ``timeout_ms``) closes first; re-attaches on transient
        failures. Cancelling the task withdraws the question, then re-raises
        ``CancelledError``."""
        body = request_json(request, wait)
        cancel = threading.Event()
        fut = _spawn(self.sync.ask, (body,), {"cancel": cancel}, None)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            cancel.set()
            try:
                # Let the withdrawal land before the cancellation goes on.
                await asyncio.wait_for(asyncio.shield(fut), 2 * self.sync.withdraw_timeout + 1)
            except BaseException:  # noqa: BLE001 - ASK_ABORTED, or cancelled again
                pass
            raise

    async def start(self, request: RequestLike) -> Status:
        """``POST /v1/asks`` with ``Prefer: respond-async`` (see :meth:`Client.start`)."""
        return await self._call(self.sync.start, request)

    async def get(self, call_id: str, wait_ms: Optional[int] = None, *, version: Optional[int] = None) -> Status:
        """``GET /v1/asks/{callId}``, long-polling with ``wait_ms`` (see :meth:`Client.get`)."""
        return await self._call(self.sync.get, call_id, wait_ms, version=version)

    async def abort(self, call_id: str, *, reason: Optional[str] = None) -> Status:
        """``DELETE /v1/asks/{callId}``: withdraw the question (see :meth:`Client.abort`)."""
        return await self._call(self.sync.abort, call_id, reason=reason)

    async def answer(self, call_id: str, body: AnswerLike) -> AnswerResult:
        """``POST /v1/asks/{callId}/answer`` for answer surfaces (see :meth:`Client.answer`)."""
        return await self._call(self.sync.answer, call_id, body)

    async def messages(self, session_id: str, wait_ms: Optional[int] = None, *, caller: Optional[str] = None) -> List[SteeredMessage]:
        """``GET /v1/sessions/{sessionId}/messages``: late answers, long-polling with ``wait_ms``."""
        return await self._call(self.sync.messages, session_id, wait_ms, caller=caller)

    async def ack(self, session_id: str, message: Union[SteeredMessage, str]) -> AckResult:
        """``POST /v1/sessions/{sessionId}/messages/{id}/ack``: the agent admitted the message."""
        return await self._call(self.sync.ack, session_id, message)

    async def projection(self, session_id: str, *, caller: Optional[str] = None) -> Projection:
        """``GET /v1/sessions/{sessionId}/questions``: the session's timed questions."""
        return await self._call(self.sync.projection, session_id, caller=caller)
