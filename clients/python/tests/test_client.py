"""End to end: the Python client against the real askslack binary and the
project's fake Slack (both built from this repository, see harness.py)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Tuple

import harness
from harness import CHANNEL, Deployment, eventually, has_controls

from askslack import (
    AckResult,
    Agent,
    AlreadySettledError,
    Answer,
    AnswerItem,
    AskAbortedError,
    AskslackError,
    AsyncClient,
    AsyncLateAnswers,
    BadRequestError,
    BadTimeoutError,
    CallConflictError,
    Claimant,
    Client,
    DelegatedCallerError,
    EmptyQuestionsError,
    ForbiddenError,
    LateAnswers,
    NoProviderError,
    NotFoundError,
    Option,
    Pending,
    EditableField,
    Permission,
    Question,
    ReplyQueuedError,
    Request,
    Settlement,
    SettledQuestion,
    Status,
    SteeredMessage,
    UnauthorizedError,
    UnavailableError,
    is_pending,
    late_answers,
    parse_time,
)

DEP: Optional[Deployment] = None
FAKE: Optional[harness.Fake] = None
URL = ""
CLIENT: Optional[Client] = None
POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="test-ask")
_ids = itertools.count(1)


def uid(what: str) -> str:
    return f"{what}-{os.getpid()}-{next(_ids)}"


def setUpModule() -> None:
    global DEP, FAKE, URL, CLIENT
    bins = harness.binaries()
    unittest.addModuleCleanup(bins.cleanup)
    DEP = Deployment(bins)
    unittest.addModuleCleanup(DEP.stop)
    unittest.addModuleCleanup(POOL.shutdown, wait=False, cancel_futures=True)
    bot_port = harness.free_port()
    FAKE = DEP.start_fake(bot_port)
    URL = DEP.start_bot(port=bot_port).url
    CLIENT = Client(URL, proxies={})


logs_on_failure = harness.logs_on_failure(lambda: DEP)


def deploy_question(qid: str = "q1") -> Question:
    return Question(qid, "Deploy to production now?", header="Deploy", options=[Option("Yes", description="ship it"), Option("No")])


def request(call_id: str, session_id: Optional[str] = None, agent_id: str = "agent-1") -> Request:
    return Request(call_id=call_id, agent=Agent(agent_id, session_id=session_id), questions=[deploy_question()])


def fake() -> harness.Fake:
    assert FAKE is not None
    return FAKE


def client() -> Client:
    assert CLIENT is not None
    return CLIENT


def wait_withdrawn(msg: Dict[str, Any]) -> Dict[str, Any]:
    """The Slack message of msg once it says the agent withdrew the question."""

    def withdrawn() -> Optional[Dict[str, Any]]:
        m = fake().current(msg)
        return m if m is not None and "withdrew" in json.dumps(m.get("blocks")) else None

    return eventually("the withdrawn message", withdrawn)


def wait_continued(msg: Dict[str, Any]) -> Dict[str, Any]:
    """The Slack message of msg once a timed window closed (updated, still answerable)."""

    def continued() -> Optional[Dict[str, Any]]:
        m = fake().current(msg)
        return m if m is not None and m["updated"] > 0 and has_controls(m) else None

    return eventually("the continued message", continued)


@logs_on_failure
class BlockingAskTest(unittest.TestCase):
    def test_click_answers_a_blocking_ask(self) -> None:
        call_id, sid = uid("click"), uid("sess")
        before = datetime.now(timezone.utc) - timedelta(seconds=5)
        pending = POOL.submit(client().ask, request(call_id, sid))
        msg = fake().wait_posted(call_id)
        self.assertEqual(msg["channel"], CHANNEL)
        self.assertTrue(has_controls(msg))
        self.assertIn("Deploy to production now?", msg["text"])
        time.sleep(0.3)  # long enough for the bot to park the request
        self.assertFalse(pending.done(), "the ask returned before anyone answered")
        fake().click(msg, "Yes")
        res = pending.result(timeout=20)
        self.assertIsInstance(res, Settlement)
        assert isinstance(res, Settlement)
        self.assertFalse(res.pending)
        self.assertFalse(is_pending(res))
        self.assertEqual(res.answers, [AnswerItem("q1", ["Yes"])])
        self.assertEqual(res.answer("q1"), AnswerItem("q1", ["Yes"]))
        self.assertIsNone(res.answer("q2"))
        who = res.respondent
        self.assertEqual((who.user_id, who.user_name, who.surface), ("U0ALICE", "alice", "slack"))
        self.assertEqual((who.channel, who.message_ts), (CHANNEL, msg["ts"]))
        at = parse_time(who.at)
        self.assertTrue(before <= at <= datetime.now(timezone.utc) + timedelta(seconds=5), at)

        st = client().get(call_id)
        self.assertEqual(st.state, "settled")
        self.assertEqual(st.call_id, call_id)
        self.assertEqual(st.agent, Agent("agent-1", session_id=sid))
        self.assertEqual(st.questions, [deploy_question()])
        self.assertEqual(st.answers, [AnswerItem("q1", ["Yes"])])
        assert st.respondent is not None and st.settlement is not None
        self.assertEqual(st.respondent.user_id, "U0ALICE")
        self.assertEqual(st.settlement.answers, res.answers)

        # The same callId again re-attaches: the settlement at once, nothing posted twice.
        again = client().ask(request(call_id, sid))
        assert isinstance(again, Settlement)
        self.assertEqual(again.answers, res.answers)
        self.assertEqual(len(fake().messages_of(call_id)), 1)

    def test_other_typed_text_through_the_modal(self) -> None:
        call_id = uid("other")
        pending = POOL.submit(client().ask, request(call_id))
        msg = fake().wait_posted(call_id)
        fake().click(msg, "Other…")
        fake().submit_text("CockroachDB, we already run it")
        res = pending.result(timeout=20)
        assert isinstance(res, Settlement)
        self.assertEqual(res.answers, [AnswerItem("q1", [], "CockroachDB, we already run it")])
        self.assertEqual(res.respondent.user_id, "U0ALICE")

    def test_a_tool_permission_ask(self) -> None:
        call_id = uid("perm")
        req = Request(
            call_id=call_id,
            agent=Agent("openai-agents", session_id=uid("sess")),
            questions=[Question("permission", "Allow run_shell?", header="Permission", detail="```\nnpm test\n```",
                                options=[Option("Allow", description="Run it as asked"), Option("Deny", description="Do not run it")])],
            permission=Permission("run_shell", command="npm test", repo="askslack"),
        )
        pending = POOL.submit(client().ask, req)
        msg = fake().wait_posted(call_id)
        fake().click(msg, "Allow")
        res = pending.result(timeout=20)
        assert isinstance(res, Settlement)
        self.assertEqual(res.answer("permission"), AnswerItem("permission", ["Allow"]))
        # The bot checks the shape: a permission needs the one "permission" question offering Allow and Deny.
        bad = Request(agent=Agent("a"), questions=[deploy_question()], permission=Permission("run_shell"))
        with self.assertRaises(BadRequestError) as cm:
            client().ask(bad)
        self.assertIn("permission", cm.exception.message)

    def test_edit_and_allow(self) -> None:
        call_id = uid("edit")
        req = Request(
            call_id=call_id,
            agent=Agent("deployer", session_id=uid("sess")),
            questions=[Question("permission", "Allow run_shell?", options=[Option("Allow"), Option("Deny")])],
            permission=Permission("run_shell", command="kubectl delete ns staging",
                                  editable=[EditableField("command", "kubectl delete ns staging", label="Command", of="command")]),
        )
        pending = POOL.submit(client().ask, req)
        msg = fake().wait_posted(call_id)
        fake().click(msg, "Edit & allow…")
        fake().submit_edit({"command": "kubectl delete ns staging-old"})
        res = pending.result(timeout=20)
        assert isinstance(res, Settlement)
        self.assertEqual(res.answer("permission"), AnswerItem("permission", ["Allow"], edited={"command": "kubectl delete ns staging-old"}))

    def test_start_then_long_poll_get(self) -> None:
        call_id = uid("async")
        st = client().start(request(call_id))
        self.assertEqual((st.call_id, st.state), (call_id, "open"))
        self.assertGreaterEqual(st.version, 1)
        self.assertIsNone(st.deadline)
        self.assertIsNone(st.answers)
        msg = fake().wait_posted(call_id)

        # Posting the question bumps the version; once that settled, a long
        # poll with nothing changing waits its time out and returns the status as it is.
        def stable() -> Optional[Tuple[Status, float]]:
            v = client().get(call_id).version
            t0 = time.monotonic()
            s = client().get(call_id, wait_ms=400, version=v)
            return (s, time.monotonic() - t0) if s.version == v else None

        seen, took = eventually("a version that stays", stable)
        self.assertGreaterEqual(took, 0.35)
        self.assertEqual(seen.state, "open")

        t0 = time.monotonic()
        polling = POOL.submit(client().get, call_id, 15_000, version=seen.version)
        time.sleep(0.2)
        self.assertFalse(polling.done())
        fake().click(msg, "No")
        done = polling.result(timeout=20)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(done.state, "settled")
        self.assertGreater(done.version, seen.version)
        self.assertEqual(done.answers, [AnswerItem("q1", ["No"])])
        assert done.respondent is not None
        self.assertEqual(done.respondent.user_name, "alice")
        # A version the caller has not seen yet returns at once.
        t0 = time.monotonic()
        self.assertEqual(client().get(call_id, wait_ms=10_000, version=seen.version).state, "settled")
        self.assertLess(time.monotonic() - t0, 5)

    def test_abort_withdraws_a_blocking_ask(self) -> None:
        call_id = uid("abort")
        pending = POOL.submit(client().ask, request(call_id))
        msg = fake().wait_posted(call_id)
        st = client().abort(call_id)
        self.assertEqual(st.state, "aborted")
        with self.assertRaises(AskAbortedError) as cm:
            pending.result(timeout=20)
        self.assertEqual((cm.exception.code, cm.exception.status), ("ASK_ABORTED", 409))
        self.assertFalse(has_controls(wait_withdrawn(msg)))
        self.assertEqual(client().abort(call_id).state, "aborted")  # twice is no error
        self.assertEqual(client().get(call_id).state, "aborted")

        # An answered ask cannot be withdrawn.
        done = uid("abort-settled")
        client().answer(client().start(request(done)).call_id, [AnswerItem("q1", ["Yes"])])
        with self.assertRaises(AlreadySettledError) as cm2:
            client().abort(done)
        self.assertEqual((cm2.exception.code, cm2.exception.status), ("ALREADY_SETTLED", 409))

    def test_cancel_event_cuts_the_request_and_withdraws(self) -> None:
        call_id = uid("cancel")
        cancel = threading.Event()
        pending = POOL.submit(client().ask, request(call_id), cancel=cancel)
        msg = fake().wait_posted(call_id)
        time.sleep(0.3)  # parked
        t0 = time.monotonic()
        cancel.set()
        with self.assertRaises(AskAbortedError) as cm:
            pending.result(timeout=20)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(cm.exception.code, "ASK_ABORTED")
        self.assertEqual(client().get(call_id).state, "aborted")
        self.assertFalse(has_controls(wait_withdrawn(msg)))

        # An event already set posts nothing.
        never = uid("cancel-early")
        with self.assertRaises(AskAbortedError):
            client().ask(request(never), cancel=cancel)
        with self.assertRaises(NotFoundError):
            client().get(never)
        self.assertIsNone(fake().message(never))


@logs_on_failure
class LateAnswerTest(unittest.TestCase):
    def test_timed_ask_goes_pending_and_the_late_click_arrives_through_late_answers(self) -> None:
        call_id, sid = uid("late-click"), uid("sess")
        t0 = time.monotonic()
        res = client().ask(request(call_id, sid), wait=1.0)
        took = time.monotonic() - t0
        self.assertIsInstance(res, Pending)
        self.assertEqual(res, Pending(call_id))
        self.assertTrue(res.pending)
        self.assertGreaterEqual(took, 0.9, "the window lasted about the wait")
        self.assertLess(took, 10)
        st = client().get(call_id)
        self.assertEqual(st.state, "continued")
        self.assertIsNotNone(st.deadline)
        proj = client().projection(sid)
        self.assertEqual([(q.call_id, q.state) for q in proj.active], [(call_id, "continued")])
        self.assertEqual(proj.active[0].questions, [deploy_question()])

        msg = wait_continued(fake().wait_posted(call_id))
        fake().click(msg, "No")

        stop = threading.Event()
        seen: List[SteeredMessage] = []
        states: List[str] = []
        late = late_answers(client(), sid, wait_ms=5_000, stop=stop)
        self.assertIsInstance(late, LateAnswers)
        for m in late:
            seen.append(m)
            states.append(client().get(m.call_id).state)  # not acknowledged while the body runs
            stop.set()  # the loop comes back once more (acknowledging m) and ends
        self.assertEqual(len(seen), 1)
        m = seen[0]
        self.assertEqual((m.id, m.call_id), (f"reply:{call_id}", call_id))
        self.assertEqual((m.source.kind, m.source.call_id), ("user-question", call_id))
        self.assertEqual(m.answers, [AnswerItem("q1", ["No"])])
        self.assertEqual((m.respondent.user_id, m.respondent.surface), ("U0ALICE", "slack"))
        self.assertIn('"No"', m.text)
        parse_time(m.queued_at)
        self.assertEqual(states, ["continued"])
        self.assertEqual(client().get(call_id).state, "settled")
        self.assertEqual(client().messages(sid), [])
        proj = client().projection(sid)
        self.assertEqual(proj.active, [])
        self.assertEqual(proj.settled, [SettledQuestion(call_id, [AnswerItem("q1", ["No"])])])

    def test_late_answer_through_the_api_read_and_acknowledged(self) -> None:
        call_id, sid = uid("late-api"), uid("sess")
        self.assertEqual(client().ask(request(call_id, sid), wait=timedelta(milliseconds=500)), Pending(call_id))
        late = late_answers(client(), sid, wait_ms=200)
        self.assertEqual(late.read(0), [])
        r = client().answer(call_id, Answer([AnswerItem("q1", ["No"])], respondent=Claimant(user_name="ops-console")))
        self.assertEqual((r.state, r.continued, r.message_id), ("continued", True, f"reply:{call_id}"))
        # A second late answer while one waits: REPLY_QUEUED.
        with self.assertRaises(ReplyQueuedError) as cm:
            client().answer(call_id, [AnswerItem("q1", ["Yes"])])
        self.assertEqual((cm.exception.code, cm.exception.status), ("REPLY_QUEUED", 409))

        [m] = late.read()
        self.assertEqual(m.id, f"reply:{call_id}")
        self.assertEqual(m.answers, [AnswerItem("q1", ["No"])])
        self.assertEqual((m.respondent.surface, m.respondent.user_name), ("api", "local"))
        assert m.respondent.claim is not None
        self.assertEqual(m.respondent.claim.user_name, "ops-console")
        # Read, not acknowledged: still continued, the reply waiting.
        st = client().get(call_id)
        self.assertEqual(st.state, "continued")
        assert st.reply is not None
        self.assertEqual(st.reply.id, m.id)
        self.assertEqual(len(late.read(0)), 1)
        # A loop left with the message has consumed it: acknowledged, never delivered again.
        for got in late:
            self.assertEqual(got.id, m.id)
            break
        self.assertEqual(client().get(call_id).state, "settled")
        self.assertEqual(late.read(0), [])
        acked = late.ack(m)
        self.assertEqual(acked, AckResult(True, call_id, "settled"))
        self.assertTrue(late.ack(m.id).acked, "acknowledging twice is no error")
        self.assertEqual(client().projection(sid).settled, [SettledQuestion(call_id, [AnswerItem("q1", ["No"])])])

    def test_stop_cuts_a_read_in_flight(self) -> None:
        stop = threading.Event()
        threading.Timer(0.3, stop.set).start()
        t0 = time.monotonic()
        self.assertEqual(list(late_answers(client(), uid("sess"), wait_ms=60_000, stop=stop)), [])
        self.assertLess(time.monotonic() - t0, 5)


@logs_on_failure
class ErrorTest(unittest.TestCase):
    def test_api_errors_raise_with_their_code(self) -> None:
        with self.assertRaises(NotFoundError) as nf:
            client().get(uid("unknown"))
        e = nf.exception
        self.assertIsInstance(e, AskslackError)
        self.assertEqual((e.code, e.status), ("NOT_FOUND", 404))
        self.assertIn("no ask with callId", e.message)
        self.assertIn("NOT_FOUND", str(e))

        # A timed ask without a session: BAD_REQUEST.
        with self.assertRaises(BadRequestError) as br:
            client().ask(Request(agent=Agent("agent-1"), questions=[deploy_question()]), wait=1)
        self.assertEqual((br.exception.code, br.exception.status), ("BAD_REQUEST", 400))
        self.assertIn("sessionId", br.exception.message)
        # A body that is not an ask: BAD_REQUEST.
        with self.assertRaises(BadRequestError):
            client().ask({"callId": uid("bad"), "agent": {"id": "a"}, "questions": "nope"})
        with self.assertRaises(EmptyQuestionsError) as eq:
            client().ask(Request(agent=Agent("agent-1"), questions=[]))
        self.assertEqual((eq.exception.code, eq.exception.status), ("EMPTY_QUESTIONS", 400))
        with self.assertRaises(BadTimeoutError) as bt:
            client().ask(request(uid("t"), uid("sess")), wait=-1)
        self.assertEqual(bt.exception.code, "BAD_TIMEOUT")
        with self.assertRaises(DelegatedCallerError) as dc:
            client().ask(Request(agent=Agent("sub", owner_id="root"), questions=[deploy_question()]))
        self.assertEqual((dc.exception.code, dc.exception.status), ("DELEGATED_CALLER", 403))
        with self.assertRaises(NotFoundError):
            client().ack(uid("sess"), "reply:nothing")
        # The same callId for a different question: CALL_CONFLICT.
        call_id = uid("conflict")
        client().start(request(call_id))
        other = Request(call_id=call_id, agent=Agent("agent-1"), questions=[Question("q1", "Something else?")])
        with self.assertRaises(CallConflictError) as cc:
            client().start(other)
        self.assertEqual((cc.exception.code, cc.exception.status), ("CALL_CONFLICT", 409))
        client().abort(call_id)

    def test_an_unreachable_bot_is_unavailable(self) -> None:
        dead = f"http://127.0.0.1:{harness.free_port()}"
        with self.assertRaises(UnavailableError) as cm:
            Client(dead, proxies={}).get("x")
        self.assertEqual((cm.exception.code, cm.exception.status), ("UNAVAILABLE", None))
        t0 = time.monotonic()
        with self.assertRaises(UnavailableError):
            Client(dead, proxies={}, reattach=0.6).ask(request(uid("dead")))
        self.assertGreaterEqual(time.monotonic() - t0, 0.15, "ask re-sent the request before giving up")

    def test_no_provider(self) -> None:
        assert DEP is not None
        lonely = DEP.start_bot(channel="")  # no ASKSLACK_CHANNEL: nothing routes an ask without a channel
        call_id = uid("noprovider")
        with self.assertRaises(NoProviderError) as cm:
            Client(lonely.url, proxies={}).ask(request(call_id))
        self.assertEqual((cm.exception.code, cm.exception.status), ("NO_PROVIDER", 503))
        self.assertIsNone(fake().message(call_id))


AGENT_SECRET = "agent-secret-0123456789"
OTHER_SECRET = "other-secret-0123456789"
CONSOLE_SECRET = "console-secret-0123456789"


@logs_on_failure
class RolesTest(unittest.TestCase):
    """A bot with tokens: agents ask, answer surfaces answer."""

    url = ""
    agent: Client
    other: Client
    console: Client

    @classmethod
    def setUpClass(cls) -> None:
        assert DEP is not None
        bot = DEP.start_bot(env={
            "ASKSLACK_API_TOKENS": f"agent-a:{AGENT_SECRET},agent-b:{OTHER_SECRET}",
            "ASKSLACK_ANSWER_TOKENS": f"console:{CONSOLE_SECRET}",
        })
        cls.url = bot.url
        cls.agent = Client(bot.url, AGENT_SECRET, proxies={})
        cls.other = Client(bot.url, OTHER_SECRET, proxies={})
        cls.console = Client(bot.url, CONSOLE_SECRET, proxies={})

    def test_no_token_is_unauthorized(self) -> None:
        for c in (Client(self.url, proxies={}), Client(self.url, "not-a-token-of-this-bot", proxies={})):
            with self.assertRaises(UnauthorizedError) as cm:
                c.projection("s1")
            self.assertEqual((cm.exception.code, cm.exception.status), ("UNAUTHORIZED", 401))

    def test_an_agent_answering_is_forbidden(self) -> None:
        call_id = uid("roles-forbidden")
        self.assertEqual(self.agent.start(request(call_id)).state, "open")
        with self.assertRaises(ForbiddenError) as cm:
            self.agent.answer(call_id, [AnswerItem("q1", ["Yes"])])
        self.assertEqual((cm.exception.code, cm.exception.status), ("FORBIDDEN", 403))
        self.assertIn("answers come from people", cm.exception.message)
        self.assertEqual(self.agent.get(call_id).state, "open")
        # An answer surface does not ask, and another agent does not see the ask.
        with self.assertRaises(ForbiddenError):
            self.console.ask(request(uid("roles-console")))
        with self.assertRaises(NotFoundError):
            self.other.get(call_id)
        with self.assertRaises(NotFoundError):
            self.other.abort(call_id)
        self.agent.abort(call_id)

    def test_an_answer_surface_answers_a_blocking_ask(self) -> None:
        call_id = uid("roles-answer")
        pending = POOL.submit(self.agent.ask, request(call_id))
        eventually("the ask stored", lambda: self.console.get(call_id))
        res = self.console.answer(call_id, Answer([AnswerItem("q1", ["No"])], respondent=Claimant("U0ALICE", "alice")))
        self.assertEqual((res.state, res.continued, res.message_id), ("settled", False, None))
        got = pending.result(timeout=20)
        assert isinstance(got, Settlement)
        self.assertEqual(got.answers, [AnswerItem("q1", ["No"])])
        self.assertEqual((got.respondent.surface, got.respondent.user_name), ("api", "console"))
        self.assertEqual(got.respondent.claim, Claimant("U0ALICE", "alice"))


@logs_on_failure
class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.client = AsyncClient(URL, proxies={})

    async def test_ask_answered_by_a_click(self) -> None:
        call_id = uid("aio-click")
        task = asyncio.create_task(self.client.ask(request(call_id)))
        msg = await asyncio.to_thread(fake().wait_posted, call_id)
        await asyncio.sleep(0.3)
        self.assertFalse(task.done())
        await asyncio.to_thread(fake().click, msg, "Yes")
        res = await asyncio.wait_for(task, 20)
        assert isinstance(res, Settlement)
        self.assertEqual(res.answers, [AnswerItem("q1", ["Yes"])])
        self.assertEqual(res.respondent.user_name, "alice")
        self.assertEqual((await self.client.get(call_id)).state, "settled")

    async def test_timed_ask_and_late_answers(self) -> None:
        call_id, sid = uid("aio-late"), uid("sess")
        res = await self.client.ask(request(call_id, sid), wait=0.8)
        self.assertEqual(res, Pending(call_id))
        msg = await asyncio.to_thread(lambda: wait_continued(fake().wait_posted(call_id)))
        stop = asyncio.Event()
        seen: List[SteeredMessage] = []
        states: List[str] = []
        late = late_answers(self.client, sid, wait_ms=5_000, stop=stop)
        self.assertIsInstance(late, AsyncLateAnswers)

        async def consume() -> None:
            async for m in late:
                seen.append(m)
                states.append((await self.client.get(m.call_id)).state)
                stop.set()

        consuming = asyncio.create_task(consume())
        await asyncio.sleep(0.2)  # the read is waiting
        await asyncio.to_thread(fake().click, msg, "Yes")
        await asyncio.wait_for(consuming, 20)
        self.assertEqual([(m.id, m.answers) for m in seen], [(f"reply:{call_id}", [AnswerItem("q1", ["Yes"])])])
        self.assertEqual(seen[0].respondent.user_id, "U0ALICE")
        self.assertEqual(states, ["continued"])
        self.assertEqual((await self.client.get(call_id)).state, "settled")
        self.assertEqual(await self.client.messages(sid), [])
        self.assertEqual((await self.client.projection(sid)).settled, [SettledQuestion(call_id, [AnswerItem("q1", ["Yes"])])])

    async def test_cancelling_ask_withdraws_the_question(self) -> None:
        call_id = uid("aio-cancel")
        task = asyncio.create_task(self.client.ask(request(call_id)))
        msg = await asyncio.to_thread(fake().wait_posted, call_id)
        await asyncio.sleep(0.3)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        # Withdrawn before the cancellation finished.
        self.assertEqual((await self.client.get(call_id)).state, "aborted")
        withdrawn = await asyncio.to_thread(wait_withdrawn, msg)
        self.assertFalse(has_controls(withdrawn))

    async def test_start_long_poll_and_errors(self) -> None:
        call_id, sid = uid("aio-start"), uid("sess")
        st = await self.client.start(Request(call_id=call_id, agent=Agent("agent-1", session_id=sid), questions=[deploy_question()]))
        self.assertEqual(st.state, "open")
        msg = await asyncio.to_thread(fake().wait_posted, call_id)
        seen = await self.client.get(call_id)
        polling = asyncio.create_task(self.client.get(call_id, wait_ms=15_000, version=seen.version))
        await asyncio.to_thread(fake().click, msg, "No")
        done = await asyncio.wait_for(polling, 20)
        self.assertEqual((done.state, done.answers), ("settled", [AnswerItem("q1", ["No"])]))
        with self.assertRaises(NotFoundError):
            await self.client.get(uid("aio-unknown"))
        with self.assertRaises(AlreadySettledError):
            await self.client.abort(call_id)
        # A cancelled long poll ends at once.
        t0 = time.monotonic()
        with self.assertRaises(asyncio.TimeoutError):
            await asyncio.wait_for(self.client.messages(sid, wait_ms=60_000), 0.3)
        self.assertLess(time.monotonic() - t0, 5)


if __name__ == "__main__":
    unittest.main()
