"""Unit tests of the client over a scripted HTTP server on loopback (no bot):
headers, paths, error mapping, re-attach, cancellation, and the JSON types."""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import importlib.util
import json
import pickle
import socket
import tarfile
import tempfile
import threading
import time
import unittest
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Tuple
from unittest import mock

import harness  # noqa: F401 - puts this checkout's askslack on sys.path

import askslack.client

from askslack import (
    Agent,
    AnswerItem,
    AskAbortedError,
    AskslackError,
    AsyncClient,
    BadTimeoutError,
    Client,
    InternalError,
    NoProviderError,
    Option,
    Pending,
    Permission,
    Question,
    Request,
    Settlement,
    Status,
    SteeredMessage,
    UnavailableError,
    error_for,
    late_answers,
    parse_time,
)
from askslack.types import _ask_result

RESPONDENT = {"userId": "U0ALICE", "userName": "alice", "at": "2026-01-01T00:00:00Z", "surface": "slack"}
QUESTION = {"id": "q1", "question": "Deploy?", "options": [{"label": "Yes"}, {"label": "No"}]}
ASK = {"callId": "c1", "agent": {"id": "a"}, "questions": [QUESTION]}
ANSWERED = {"answers": [{"id": "q1", "selected": ["Yes"]}], "respondent": RESPONDENT}

RESET = "reset"  # close the connection without a response
HANG = "hang"  # hold the request until the client goes away


class Call:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: Any) -> None:
        self.method, self.path, self.headers, self.body = method, path, headers, body

    def __repr__(self) -> str:
        return f"{self.method} {self.path}"


Handler = Callable[[Call], Any]


class Scripted:
    """A loopback HTTP server answering each request with handler(call):
    (status, body), RESET or HANG."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.calls: List[Call] = []
        self._hung = threading.Condition()
        self.hung_up: List[str] = []  # the methods of the held requests whose client hung up
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                call = Call(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw) if raw else None)
                outer.calls.append(call)
                out = outer.handler(call)
                if out == RESET:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if out == HANG:
                    self.connection.settimeout(30)
                    try:
                        self.connection.recv(1)  # returns when the client hangs up
                    except OSError:
                        pass
                    with outer._hung:
                        outer.hung_up.append(self.command)
                        outer._hung.notify_all()
                    self.close_connection = True
                    return
                status, body = out
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            do_GET = do_POST = do_DELETE = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def wait_hung_up(self, method: str, timeout: float = 5) -> bool:
        """Whether a held request of method was closed by its client within timeout."""
        with self._hung:
            return self._hung.wait_for(lambda: method in self.hung_up, timeout)

    def client(self, **kw: Any) -> Client:
        return Client(self.url, proxies={}, **kw)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class ScriptedTestCase(unittest.TestCase):
    def serve(self, handler: Handler) -> Scripted:
        s = Scripted(handler)
        self.addCleanup(s.close)
        return s


class RequestTest(ScriptedTestCase):
    def test_token_json_and_api_errors(self) -> None:
        s = self.serve(lambda c: (400, {"error": {"code": "BAD_TIMEOUT", "message": "timeoutMs must be positive"}}))
        c = Client(s.url + "/", token="s3cr3t-value", proxies={})
        req = Request(call_id="c1", agent=Agent("a", session_id="s1"), questions=[Question("q1", "Deploy?", options=[Option("Yes"), Option("No")])])
        with self.assertRaises(BadTimeoutError) as cm:
            c.ask(req, wait=-1)
        e = cm.exception
        self.assertEqual((e.code, e.status, e.message), ("BAD_TIMEOUT", 400, "timeoutMs must be positive"))
        self.assertEqual(len(s.calls), 1)
        call = s.calls[0]
        self.assertEqual((call.method, call.path), ("POST", "/v1/asks"))
        self.assertEqual(call.headers["authorization"], "Bearer s3cr3t-value")
        self.assertEqual(call.headers["content-type"], "application/json")
        self.assertEqual(call.body, {"callId": "c1", "agent": {"id": "a", "sessionId": "s1"}, "questions": [QUESTION], "timeoutMs": -1000})
        self.assertNotIn("s3cr3t", repr(c))

    def test_paths_are_escaped_and_waits_passed(self) -> None:
        def h(c: Call) -> Any:
            if "/messages" in c.path and c.method == "GET":
                return 200, {"messages": None}  # Go's nil slice
            return 200, {"callId": "x", "state": "open", "version": 1}

        s = self.serve(h)
        c = s.client()
        self.assertEqual(c.messages("sess/1", 1500), [])
        c.get("call 1", wait_ms=10)
        c.get("c", wait_ms=10**7, version=3)
        c.get("c", version=3)  # a version without a wait is not sent
        c.ack("s", "reply:c1")
        c.abort("c", reason="answered-elsewhere")
        c.messages("s", caller="agent-a")
        c.projection("s", caller="agent a")
        self.assertEqual([repr(x) for x in s.calls], [
            "GET /v1/sessions/sess%2F1/messages?waitMs=1500",
            "GET /v1/asks/call%201?waitMs=10",
            "GET /v1/asks/c?waitMs=300000&version=3",
            "GET /v1/asks/c",
            "POST /v1/sessions/s/messages/reply%3Ac1/ack",
            "DELETE /v1/asks/c?reason=answered-elsewhere",
            "GET /v1/sessions/s/messages?caller=agent-a",
            "GET /v1/sessions/s/questions?caller=agent%20a",
        ])
        self.assertNotIn("authorization", s.calls[0].headers)

    def test_start_prefers_respond_async(self) -> None:
        s = self.serve(lambda c: (202, {"callId": "c1", "state": "open", "agent": {"id": "a"}, "questions": [QUESTION], "created": "2026-01-01T00:00:00Z", "version": 1, "future": 1}))
        st = s.client().start(ASK)
        self.assertEqual((st.call_id, st.state, st.version), ("c1", "open", 1))
        self.assertEqual(st.raw["future"], 1)
        self.assertEqual(s.calls[0].headers["prefer"], "respond-async")
        self.assertEqual(s.calls[0].body, ASK)

    def test_unreadable_responses(self) -> None:
        s = self.serve(lambda c: (200, "not json") if c.method == "GET" else (500, "oops"))
        with self.assertRaises(InternalError) as cm:
            s.client().get("c")
        self.assertEqual((cm.exception.code, cm.exception.status), ("INTERNAL", 200))
        with self.assertRaises(InternalError) as cm2:
            s.client().abort("c")
        self.assertEqual(cm2.exception.status, 500)
        self.assertIn("oops", cm2.exception.message)


class ReattachTest(ScriptedTestCase):
    def setUp(self) -> None:
        # The backoff's schedule (200 ms doubling to 5 s) at a twentieth.
        for name, value in (("_REATTACH_MIN", 0.01), ("_REATTACH_MAX", 0.25)):
            p = mock.patch.object(askslack.client, name, value)
            p.start()
            self.addCleanup(p.stop)

    def test_reattaches_with_the_same_request_while_unavailable(self) -> None:
        n = [0]

        def h(c: Call) -> Any:
            n[0] += 1
            return (503, {"error": {"code": "UNAVAILABLE", "message": "shutting down"}}) if n[0] < 3 else (200, ANSWERED)

        s = self.serve(h)
        res = s.client().ask(ASK)
        self.assertEqual(res, Settlement([AnswerItem("q1", ["Yes"])], _ask_result(ANSWERED).respondent))  # type: ignore[union-attr]
        self.assertEqual(len(s.calls), 3)
        self.assertTrue(all(c.body == ASK for c in s.calls))
        # With re-attaching off the first failure stands; a 502 that is not the API's JSON reads UNAVAILABLE.
        once = self.serve(lambda c: (502, "<html>Bad Gateway</html>"))
        with self.assertRaises(UnavailableError) as cm:
            once.client(reattach=0).ask(ASK)
        self.assertEqual(cm.exception.status, 502)
        self.assertEqual(len(once.calls), 1)

    def test_reset_and_gateway_errors_reattach_a_500_and_no_provider_do_not(self) -> None:
        faults = [RESET, (502, "Bad Gateway"), (504, "Gateway Timeout"), (503, "Service Unavailable")]
        n = [0]

        def h(c: Call) -> Any:
            n[0] += 1
            return faults[n[0] - 1] if n[0] <= len(faults) else (200, ANSWERED)

        s = self.serve(h)
        res = s.client().ask(ASK)
        self.assertIsInstance(res, Settlement)
        self.assertEqual(len(s.calls), 5)
        finals: List[Tuple[int, Any, type]] = [(500, "oops", InternalError), (503, {"error": {"code": "NO_PROVIDER", "message": "no human"}}, NoProviderError)]
        for status, body, cls in finals:
            once = self.serve(functools.partial(lambda reply, c: reply, (status, body)))
            with self.assertRaises(cls):
                once.client().ask(ASK)
            self.assertEqual(len(once.calls), 1, f"{status} must not be retried")

    def test_an_attempt_attached_for_a_while_starts_a_fresh_run(self) -> None:
        # Each of the first two attempts stays attached longer than both the
        # backoff's maximum and the whole re-attach window, then is cut.
        n = [0]

        def h(c: Call) -> Any:
            n[0] += 1
            if n[0] <= 2:
                time.sleep(0.4)
                return RESET
            return 200, ANSWERED

        s = self.serve(h)
        self.assertIsInstance(s.client(reattach=0.3).ask(ASK), Settlement)
        self.assertEqual(len(s.calls), 3)
        # A run of quick failures still gives up once the window has passed.
        down = self.serve(lambda c: RESET)
        t0 = time.monotonic()
        with self.assertRaises(UnavailableError):
            down.client(reattach=0.2).ask(ASK)
        self.assertLess(time.monotonic() - t0, 2)
        self.assertGreater(len(down.calls), 2)

    def test_a_timed_window_that_closes_is_pending(self) -> None:
        s = self.serve(lambda c: (200, {"pending": True, "callId": "c1"}))
        res = s.client().ask(ASK, wait=1.5)
        self.assertEqual(res, Pending("c1"))
        self.assertEqual(s.calls[0].body["timeoutMs"], 1500)


class CancelTest(ScriptedTestCase):
    def test_cancel_cuts_the_request_withdraws_and_raises_ask_aborted(self) -> None:
        s = self.serve(lambda c: HANG if c.method == "POST" else (200, {"callId": "c1", "state": "aborted", "version": 3}))
        cancel = threading.Event()
        threading.Timer(0.2, cancel.set).start()
        t0 = time.monotonic()
        with self.assertRaises(AskAbortedError) as cm:
            s.client().ask(ASK, cancel=cancel)
        self.assertLess(time.monotonic() - t0, 3)
        self.assertEqual(cm.exception.code, "ASK_ABORTED")
        self.assertEqual([repr(c) for c in s.calls], ["POST /v1/asks", "DELETE /v1/asks/c1"])
        self.assertTrue(s.wait_hung_up("POST"), "the blocking request was not closed")
        # Already cancelled: nothing is posted.
        with self.assertRaises(AskAbortedError):
            s.client().ask(dict(ASK, callId="c2"), cancel=cancel)
        self.assertEqual(len(s.calls), 2)

    def test_async_cancel_withdraws_and_a_cancelled_poll_hangs_up(self) -> None:
        s = self.serve(lambda c: HANG if c.method in ("POST", "GET") else (200, {"callId": "c1", "state": "aborted", "version": 3}))

        async def main() -> None:
            ac = AsyncClient(s.url, proxies={})
            task = asyncio.ensure_future(ac.ask(ASK))
            await asyncio.sleep(0.2)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            # The DELETE went out before the cancellation finished.
            self.assertEqual([repr(c) for c in s.calls], ["POST /v1/asks", "DELETE /v1/asks/c1"])
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(ac.get("c1", wait_ms=60_000), 0.2)
            self.assertTrue(await asyncio.to_thread(s.wait_hung_up, "GET"), "the long poll was not closed")

        asyncio.run(main())


class LateAnswersTest(ScriptedTestCase):
    def msg(self, call_id: str) -> Dict[str, Any]:
        return {"id": f"reply:{call_id}", "callId": call_id, "source": {"kind": "user-question", "callId": call_id},
                "answers": [{"id": "q1", "selected": ["Yes"]}], "respondent": RESPONDENT, "text": "The user answered", "queuedAt": RESPONDENT["at"]}

    def scripted_queue(self) -> Tuple[Scripted, List[Dict[str, Any]]]:
        queue = [self.msg("c1"), self.msg("c2"), self.msg("c3")]

        def h(c: Call) -> Any:
            if c.method == "POST":
                mid = c.path.split("/")[-2].replace("%3A", ":")
                queue[:] = [m for m in queue if m["id"] != mid]
                return 200, {"acked": True, "callId": mid[6:], "state": "settled"}
            return 200, {"messages": list(queue)}

        return self.serve(h), queue

    def test_acknowledges_a_message_once_the_body_is_done_with_it_leaving_the_loop_included(self) -> None:
        s, queue = self.scripted_queue()
        c = s.client()
        seen: List[str] = []
        for m in late_answers(c, "s1", wait_ms=10):
            seen.append(m.id)
            self.assertEqual([x for x in s.calls if x.method == "POST" and m.id.replace(":", "%3A") in x.path], [])
            if m.id == "reply:c2":
                break
        self.assertEqual(seen, ["reply:c1", "reply:c2"])
        # c1 was acknowledged when the loop went on, c2 when the loop broke out
        # with it (the next read must not deliver it again); c3, never received, waits.
        self.assertEqual([m["id"] for m in queue], ["reply:c3"])
        # A body that raises had the message too.
        with self.assertRaisesRegex(RuntimeError, "failed on reply:c3"):
            for m in late_answers(c, "s1", wait_ms=10):
                raise RuntimeError(f"failed on {m.id}")
        self.assertEqual(queue, [])
        queue.append(self.msg("c4"))
        # read() and ack() leave the acknowledgement to the caller.
        late = late_answers(c, "s1", wait_ms=0)
        [m4] = late.read()
        self.assertEqual([m["id"] for m in queue], ["reply:c4"])
        self.assertEqual(late.ack(m4).state, "settled")
        self.assertEqual(late.read(0), [])

    def test_async_iterator_acknowledges_the_same_way(self) -> None:
        s, queue = self.scripted_queue()

        async def main() -> List[str]:
            ac = AsyncClient(s.url, proxies={})
            seen: List[str] = []
            stop = asyncio.Event()
            async for m in late_answers(ac, "s1", wait_ms=10, stop=stop):
                seen.append(m.id)
                if m.id == "reply:c2":
                    stop.set()
            return seen

        self.assertEqual(asyncio.run(main()), ["reply:c1", "reply:c2", "reply:c3"])
        self.assertEqual(queue, [])

    def test_async_loop_left_inside_async_with_acknowledges_at_once(self) -> None:
        s, queue = self.scripted_queue()

        async def main() -> List[str]:
            ac = AsyncClient(s.url, proxies={})
            seen: List[str] = []
            async with late_answers(ac, "s1", wait_ms=10) as late:
                async for m in late:
                    seen.append(m.id)
                    if m.id == "reply:c2":
                        break
            # Left the async with: c2 is acknowledged now, not when the generator is collected.
            self.assertEqual([m["id"] for m in queue], ["reply:c3"])
            return seen

        self.assertEqual(asyncio.run(main()), ["reply:c1", "reply:c2"])
        with self.assertRaises(TypeError):
            late_answers(s.client(), "s1", stop=asyncio.Event())  # type: ignore[call-overload]


class TypesTest(unittest.TestCase):
    def test_request_json_leaves_out_what_is_unset(self) -> None:
        r = Request(agent=Agent("a"), questions=[Question("permission", "Allow Bash?", options=[Option("Allow"), Option("Deny")])],
                    permission=Permission("Bash", command="npm test"), channel="C0X")
        d = r.to_json()
        self.assertEqual(set(d), {"callId", "agent", "questions", "channel", "permission"})
        self.assertEqual(d["permission"], {"tool": "Bash", "command": "npm test"})
        self.assertEqual(len(d["callId"]), 36)  # a fresh UUID
        self.assertNotEqual(Request(agent=Agent("a"), questions=[]).call_id, r.call_id)
        self.assertEqual(Question("q", "Q?", multi_select=True).to_json(), {"id": "q", "question": "Q?", "multiSelect": True})

    def test_responses_tolerate_nulls_and_unknown_fields(self) -> None:
        st = Status.from_json({"callId": "c", "state": "settled", "agent": {"id": "a"}, "questions": None, "created": "t", "version": 4,
                               "answers": [{"id": "q1", "selected": None, "custom": "typed"}], "respondent": dict(RESPONDENT, claim={"userName": "bob"}),
                               "message": {"channel": "C", "ts": "1"}})
        self.assertEqual(st.questions, [])
        self.assertEqual(st.answers, [AnswerItem("q1", [], "typed")])
        assert st.respondent is not None and st.respondent.claim is not None
        self.assertEqual(st.respondent.claim.user_name, "bob")
        self.assertEqual(st.raw["message"], {"channel": "C", "ts": "1"})
        self.assertIsInstance(_ask_result({"pending": True, "callId": "c"}), Pending)
        self.assertIsInstance(_ask_result(ANSWERED), Settlement)
        m = SteeredMessage.from_json({"id": "reply:c", "callId": "c", "answers": [], "respondent": RESPONDENT, "text": "", "queuedAt": ""})
        self.assertEqual(m.source.call_id, "c")

    def test_parse_time(self) -> None:
        t = parse_time("2026-12-06T00:48:58.44691635Z")
        self.assertEqual((t.microsecond, t.utcoffset().total_seconds()), (446916, 0))  # type: ignore[union-attr]
        self.assertEqual(parse_time("2026-12-06T02:48:58+02:00"), parse_time("2026-12-06T00:48:58Z"))
        with self.assertRaises(ValueError):
            parse_time("yesterday")

    def test_errors_carry_their_code_and_pickle(self) -> None:
        e = error_for("NO_PROVIDER", "no human available", 503)
        self.assertIsInstance(e, NoProviderError)
        back = pickle.loads(pickle.dumps(e))
        self.assertEqual((type(back), back.code, back.message, back.status), (NoProviderError, "NO_PROVIDER", "no human available", 503))
        unknown = error_for("SOMETHING_NEW", "later", 418)
        self.assertIs(type(unknown), AskslackError)
        self.assertEqual(str(unknown), "SOMETHING_NEW: later (HTTP 418)")


class PackagingTest(unittest.TestCase):
    """pyproject.toml's backend (_askslack_build.py) builds an installable wheel with the standard library alone."""

    def backend(self) -> Any:
        spec = importlib.util.spec_from_file_location("_askslack_build", harness.PACKAGE_DIR / "_askslack_build.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    def test_wheel_and_sdist(self) -> None:
        b = self.backend()
        self.assertEqual(b.get_requires_for_build_wheel(), [])
        with tempfile.TemporaryDirectory() as out:
            name = b.build_wheel(out)
            self.assertEqual(name, f"askslack-{askslack.__version__}-py3-none-any.whl")
            with zipfile.ZipFile(f"{out}/{name}") as z:
                names = set(z.namelist())
                for f in ("askslack/__init__.py", "askslack/client.py", "askslack/aio.py", "askslack/py.typed"):
                    self.assertIn(f, names)
                self.assertFalse([n for n in names if "__pycache__" in n or n.startswith("tests/")])
                dist = f"askslack-{askslack.__version__}.dist-info"
                meta = z.read(f"{dist}/METADATA").decode()
                self.assertIn(f"Version: {askslack.__version__}\n", meta)
                self.assertIn("Requires-Python: >=3.10\n", meta)
                for line in z.read(f"{dist}/RECORD").decode().splitlines():
                    path, digest, size = line.split(",")
                    if path.endswith("RECORD"):
                        continue
                    data = z.read(path)
                    self.assertEqual(digest, "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), path)
                    self.assertEqual(int(size), len(data))
            sdist = b.build_sdist(out)
            with tarfile.open(f"{out}/{sdist}") as t:
                members = set(t.getnames())
            base = f"askslack-{askslack.__version__}"
            for f in ("PKG-INFO", "pyproject.toml", "_askslack_build.py", "askslack/types.py"):
                self.assertIn(f"{base}/{f}", members)


if __name__ == "__main__":
    unittest.main()
