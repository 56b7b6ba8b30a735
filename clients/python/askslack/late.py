"""late_answers: read a session's queue of late answers (steered user
messages) and acknowledge each once the agent has taken it in."""

from __future__ import annotations

import asyncio
import threading
from typing import AsyncGenerator, AsyncIterator, Iterator, List, Optional, Union, overload

from . import _http
from .aio import AsyncClient
from .client import Client
from .errors import AskAbortedError, NotFoundError
from .types import AckResult, SteeredMessage

__all__ = ["late_answers", "LateAnswers", "AsyncLateAnswers", "DEFAULT_WAIT_MS"]

#: The long-poll window of one read.
DEFAULT_WAIT_MS = 25_000


class LateAnswers:
    """A session's late answers, for the blocking :class:`~askslack.client.Client`.

    Iterate it::

        for msg in late_answers(client, session_id, stop=stop):
            agent.steer(msg.text)       # acknowledged once the body is done with it

    or call :meth:`read` and :meth:`ack` yourself.

    The iterator long-polls the queue and yields each message; it acknowledges
    a message the loop body received once the body is done with it: when the
    loop comes back for the next one, and when the loop is left with it —
    ``break``, ``return`` or an exception, which close the iterator (CPython
    closes a ``for`` loop's generator as the loop is left). So a loop that
    takes one answer and stops is correct as written: no later read delivers
    that answer again. Messages the loop never received stay queued. To keep
    a message queued when handling it fails, use :meth:`read` and
    :meth:`ack`. The iteration ends when ``stop`` is set (a read in flight is
    cut).
    """

    def __init__(self, client: Client, session_id: str, *, wait_ms: int = DEFAULT_WAIT_MS, stop: Optional[threading.Event] = None) -> None:
        self.client = client
        self.session_id = session_id
        self.wait_ms = wait_ms
        self.stop = stop

    def read(self, wait_ms: Optional[int] = None) -> List[SteeredMessage]:
        """The messages waiting now, oldest first; with ``wait_ms`` (default the
        iterator's; 0 = don't wait) waits until one arrives or the time passes
        (then ``[]``). A message stays in the queue until acknowledged."""
        return self.client.messages(self.session_id, self.wait_ms if wait_ms is None else wait_ms)

    def ack(self, message: Union[SteeredMessage, str]) -> AckResult:
        """The agent admitted the message: the question becomes settled. Idempotent."""
        return self.client.ack(self.session_id, message)

    def _read_or_stop(self) -> Optional[List[SteeredMessage]]:
        if self.stop is None:
            return self.read()
        watch = _http.Watch(self.stop)
        token = _http.current_attempt.set(watch.attempt())
        try:
            return self.read()
        except Exception:
            if self.stop.is_set():
                return None
            raise
        finally:
            _http.current_attempt.reset(token)
            watch.close()

    def __iter__(self) -> Iterator[SteeredMessage]:
        while self.stop is None or not self.stop.is_set():
            batch = self._read_or_stop()
            if batch is None:
                return
            for msg in batch:
                try:
                    yield msg
                finally:
                    # Resumed for the next message, or closed by a loop that
                    # was left: either way the body had the message.
                    self._consumed(msg)

    def _consumed(self, msg: SteeredMessage) -> None:
        try:
            self.ack(msg)
        except (NotFoundError, AskAbortedError):
            pass  # withdrawn meanwhile, or already admitted: nothing to acknowledge


class AsyncLateAnswers:
    """A session's late answers, for :class:`~askslack.aio.AsyncClient`::

        async with late_answers(client, session_id, stop=stop) as late:
            async for msg in late:
                await agent.steer(msg.text)  # acknowledged once the body is done with it

    Same semantics as :class:`LateAnswers`; the iteration ends when ``stop``
    (an :class:`asyncio.Event`) is set or the task is cancelled. Python does
    not close an async generator when an ``async for`` is left (``break``,
    ``return``, an exception) but when it is collected, later: leaving the
    ``async with`` closes this object's iterators at once, acknowledging the
    message the loop was left with.
    """

    def __init__(self, client: AsyncClient, session_id: str, *, wait_ms: int = DEFAULT_WAIT_MS, stop: Optional[asyncio.Event] = None) -> None:
        self.client = client
        self.session_id = session_id
        self.wait_ms = wait_ms
        self.stop = stop
        self._open: List[AsyncGenerator[SteeredMessage, None]] = []

    async def __aenter__(self) -> "AsyncLateAnswers":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the iterators this object gave, acknowledging a message a loop was left with."""
        while self._open:
            await self._open.pop().aclose()

    async def read(self, wait_ms: Optional[int] = None) -> List[SteeredMessage]:
        """See :meth:`LateAnswers.read`."""
        return await self.client.messages(self.session_id, self.wait_ms if wait_ms is None else wait_ms)

    async def ack(self, message: Union[SteeredMessage, str]) -> AckResult:
        """See :meth:`LateAnswers.ack`."""
        return await self.client.ack(self.session_id, message)

    async def _read_or_stop(self) -> Optional[List[SteeredMessage]]:
        if self.stop is None:
            return await self.read()
        reading = asyncio.ensure_future(self.read())
        stopping = asyncio.ensure_future(self.stop.wait())
        try:
            await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not reading.done():
                reading.cancel()
        if self.stop.is_set():
            if reading.done() and not reading.cancelled():
                reading.exception()  # retrieved: a read cut by the stop is no error
            return None
        return reading.result()

    def __aiter__(self) -> AsyncIterator[SteeredMessage]:
        it = self._iterate()
        self._open.append(it)
        return it

    async def _iterate(self) -> AsyncGenerator[SteeredMessage, None]:
        while self.stop is None or not self.stop.is_set():
            batch = await self._read_or_stop()
            if batch is None:
                return
            for msg in batch:
                try:
                    yield msg
                finally:
                    try:
                        await self.ack(msg)
                    except (NotFoundError, AskAbortedError):
                        pass  # withdrawn meanwhile, or already admitted: nothing to acknowledge


@overload
def late_answers(client: Client, session_id: str, *, wait_ms: int = ..., stop: Optional[threading.Event] = ...) -> LateAnswers: ...


@overload
def late_answers(client: AsyncClient, session_id: str, *, wait_ms: int = ..., stop: Optional[asyncio.Event] = ...) -> AsyncLateAnswers: ...


def late_answers(client: Union[Client, AsyncClient], session_id: str, *, wait_ms: int = DEFAULT_WAIT_MS, stop: Optional[Union[threading.Event, asyncio.Event]] = None) -> Union[LateAnswers, AsyncLateAnswers]:
    """The late answers of ``session_id`` (the ``agent.session_id`` the asks
    carried): a :class:`LateAnswers` to iterate with ``for`` for a
    :class:`~askslack.client.Client`, an :class:`AsyncLateAnswers` to iterate
    with ``async for`` for an :class:`~askslack.aio.AsyncClient`.

    :param wait_ms: the long-poll window of one read (≤ 300 000).
    :param stop: ends the iteration: a :class:`threading.Event` for the
        blocking client, an :class:`asyncio.Event` for the asyncio one.
    """
    if isinstance(client, AsyncClient):
        if stop is not None and not isinstance(stop, asyncio.Event):
            raise TypeError("askslack: late_answers over an AsyncClient stops on an asyncio.Event")
        return AsyncLateAnswers(client, session_id, wait_ms=wait_ms, stop=stop)
    if isinstance(client, Client):
        if stop is not None and not isinstance(stop, threading.Event):
            raise TypeError("askslack: late_answers over a Client stops on a threading.Event")
        return LateAnswers(client, session_id, wait_ms=wait_ms, stop=stop)
    raise TypeError(f"askslack: late_answers needs a Client or an AsyncClient, not {type(client).__name__}")
