"""The HTTP transport: urllib.request with a connection that

- connects within the client's ``timeout`` but then reads with a timeout of
  its own per request (none for a blocking ask: a person takes as long as they
  take, and the bot withdraws a question whose blocking request closes);
- turns on TCP keepalive, so a connection that silently died under a long
  wait (a NAT or a proxy forgetting it) is noticed instead of waited on forever;
- hands its socket to an :class:`Attempt`, which another thread can cancel:
  that shuts the socket down and the blocked read returns at once.
"""

from __future__ import annotations

import contextvars
import functools
import http.client
import socket
import ssl
import threading
import urllib.request
from typing import Any, Mapping, Optional

# Sentinel for "no read timeout of its own: keep the connect timeout".
_KEEP: Any = object()

# The attempt of the calls made in this context (the asyncio client runs each
# call in a thread with its own attempt, so cancelling the task can cut it).
current_attempt: "contextvars.ContextVar[Optional[Attempt]]" = contextvars.ContextVar("askslack_attempt", default=None)


def _shutdown(sock: socket.socket) -> None:
    try:
        # The plain socket's shutdown, also for an SSLSocket (whose own
        # shutdown drops its SSL object under the reading thread).
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class Attempt:
    """One HTTP request that another thread may cut short."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = None
        self.cancelled = False

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            if self.cancelled:
                _shutdown(sock)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            if self._sock is not None:
                _shutdown(self._sock)


class Watch:
    """Cancels the attempts it hands out once ``event`` is set.

    A :class:`threading.Event` has no callbacks, so a daemon thread polls it
    (every 50 ms) until :meth:`close`.
    """

    POLL = 0.05

    def __init__(self, event: threading.Event) -> None:
        self._event = event
        self._lock = threading.Lock()
        self._attempt: Optional[Attempt] = None
        self._closed = threading.Event()
        threading.Thread(target=self._run, name="askslack-cancel-watch", daemon=True).start()

    def attempt(self) -> Attempt:
        a = Attempt()
        with self._lock:
            self._attempt = a
            if self._event.is_set():
                a.cancelled = True
        return a

    def _run(self) -> None:
        while not self._closed.is_set():
            if self._event.wait(self.POLL):
                with self._lock:
                    a = self._attempt
                if a is not None:
                    a.cancel()
                # Keep cancelling attempts made after the event (a retry racing it).
                self._closed.wait(self.POLL)

    def close(self) -> None:
        self._closed.set()


def _tune(sock: socket.socket, read_timeout: Any, attempt: Optional[Attempt]) -> None:
    if read_timeout is not _KEEP:
        sock.settimeout(read_timeout)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 6)):
            opt = getattr(socket, name, None)
            if opt is not None:
                sock.setsockopt(socket.IPPROTO_TCP, opt, value)
    except OSError:
        pass
    if attempt is not None:
        attempt.attach(sock)


class _Tuned:
    """A connection that refuses to connect once its attempt was cancelled
    and tunes its socket (read timeout, keepalive) once connected: mixed
    into both the plain and the TLS connection, before them."""

    sock: Any

    def __init__(self, *args: Any, read_timeout: Any = _KEEP, attempt: Optional[Attempt] = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._read_timeout = read_timeout
        self._attempt = attempt

    def connect(self) -> None:
        if self._attempt is not None and self._attempt.cancelled:
            raise ConnectionAbortedError("askslack: the request was cancelled")
        super().connect()  # type: ignore[misc]
        _tune(self.sock, self._read_timeout, self._attempt)


class _HTTPConnection(_Tuned, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_Tuned, http.client.HTTPSConnection):
    pass


def _opts(req: urllib.request.Request) -> Mapping[str, Any]:
    return {
        "read_timeout": getattr(req, "askslack_read_timeout", _KEEP),
        "attempt": getattr(req, "askslack_attempt", None),
    }


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(functools.partial(_HTTPConnection, **_opts(req)), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(functools.partial(_HTTPSConnection, **_opts(req)), req, context=self._context)  # type: ignore[attr-defined]


def build_opener(ssl_context: Optional[ssl.SSLContext], proxies: Optional[Mapping[str, str]]) -> urllib.request.OpenerDirector:
    """An opener with the connections above; ``proxies`` None reads the
    environment's (``http_proxy``, ``no_proxy``, …), ``{}`` uses none."""
    return urllib.request.build_opener(
        urllib.request.ProxyHandler(None if proxies is None else dict(proxies)),
        _HTTPHandler(),
        _HTTPSHandler(context=ssl_context),
    )
