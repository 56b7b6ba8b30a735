"""askslack's host API JSON as dataclasses.

Field names are snake_case here and camelCase on the wire (``call_id`` is
``callId``); ``to_json()`` builds the wire form (``None`` fields left out) and
``from_json()`` reads it, ignoring fields it does not know. The results the
bot returns keep the JSON they were read from in ``raw``, so a field added
by a newer bot is not lost.

Times are RFC 3339 strings as the bot sends them (``"2026-01-01T00:00:00.123456789Z"``);
:func:`parse_time` turns one into an aware :class:`datetime.datetime`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Literal, Mapping, Optional, Union

__all__ = [
    "State",
    "Option",
    "Intent",
    "Question",
    "Agent",
    "Permission",
    "EditableField",
    "Request",
    "AnswerItem",
    "Claimant",
    "Respondent",
    "Answer",
    "AnswerBody",
    "Settlement",
    "Pending",
    "AskResult",
    "is_pending",
    "Source",
    "SteeredMessage",
    "Status",
    "AnswerResult",
    "AckResult",
    "PendingQuestion",
    "SettledQuestion",
    "Projection",
    "parse_time",
]

JSON = Dict[str, Any]

#: The state of one ask: ``open`` (the caller may still get the answer),
#: ``continued`` (a timed window closed: the answer arrives as a late answer),
#: ``settled`` or ``aborted`` (withdrawn).
State = Literal["open", "continued", "settled", "aborted"]


def _compact(d: Mapping[str, Any]) -> JSON:
    return {k: v for k, v in d.items() if v is not None}


def _str(d: Mapping[str, Any], key: str) -> Optional[str]:
    v = d.get(key)
    return v if isinstance(v, str) and v != "" else None


def _list(d: Mapping[str, Any], key: str) -> List[Any]:
    v = d.get(key)
    return list(v) if isinstance(v, list) else []


def _as_dict(d: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise TypeError(f"askslack: {what}: expected a JSON object, got {type(d).__name__}")
    return d


# --- what an agent sends ---------------------------------------------------


@dataclass
class Option:
    """One selectable answer (seed 000's ``AskUserQuestionOption``, with seed 004's ``preview``)."""

    label: str
    description: Optional[str] = None
    #: Preview content (a snippet, a mockup) shown on request, never in the label.
    preview: Optional[str] = None

    def to_json(self) -> JSON:
        return _compact({"label": self.label, "description": self.description, "preview": self.preview})

    @classmethod
    def from_json(cls, d: Any) -> "Option":
        d = _as_dict(d, "option")
        return cls(label=d.get("label", ""), description=_str(d, "description"), preview=_str(d, "preview"))


@dataclass
class Intent:
    """A presentation intent (``AskUserQuestionIntent``); the only kind is ``"plan-review"``."""

    kind: str = "plan-review"
    #: The option label that approves the plan; every other option declines it.
    approve: Optional[str] = None
    #: The logged tool invocation whose arguments hold the plan.
    call_id: Optional[str] = None

    def to_json(self) -> JSON:
        return _compact({"kind": self.kind, "approve": self.approve, "callId": self.call_id})

    @classmethod
    def from_json(cls, d: Any) -> "Intent":
        d = _as_dict(d, "intent")
        return cls(kind=d.get("kind", ""), approve=_str(d, "approve"), call_id=_str(d, "callId"))


@dataclass
class Question:
    """One question of an ask (``AskUserQuestionItem``)."""

    #: Caller-chosen id, echoed in the answer.
    id: str
    question: str
    options: List[Option] = field(default_factory=list)
    #: A short heading.
    header: Optional[str] = None
    #: Supporting detail (markdown), kept out of the option labels.
    detail: Optional[str] = None
    multi_select: bool = False
    intent: Optional[Intent] = None

    def to_json(self) -> JSON:
        d: JSON = {"id": self.id, "question": self.question}
        if self.detail is not None:
            d["detail"] = self.detail
        if self.header is not None:
            d["header"] = self.header
        if self.options:
            d["options"] = [o.to_json() for o in self.options]
        if self.multi_select:
            d["multiSelect"] = True
        if self.intent is not None:
            d["intent"] = self.intent.to_json()
        return d

    @classmethod
    def from_json(cls, d: Any) -> "Question":
        d = _as_dict(d, "question")
        intent = d.get("intent")
        return cls(
            id=d.get("id", ""),
            question=d.get("question", ""),
            options=[Option.from_json(o) for o in _list(d, "options")],
            header=_str(d, "header"),
            detail=_str(d, "detail"),
            multi_select=bool(d.get("multiSelect", False)),
            intent=Intent.from_json(intent) if intent else None,
        )


@dataclass
class Agent:
    """The asking agent."""

    id: str
    #: The session whose queue receives late answers (required for a timed ask).
    session_id: Optional[str] = None
    #: Set for an agent owned by another agent, which may not ask a human (``DELEGATED_CALLER``).
    owner_id: Optional[str] = None
    #: The end user the agent acts for.
    principal: Optional[str] = None
    #: The issuing task (seed 004's ``sourceTaskId``).
    source_task_id: Optional[str] = None

    def to_json(self) -> JSON:
        return _compact(
            {
                "id": self.id,
                "sessionId": self.session_id,
                "ownerId": self.owner_id,
                "principal": self.principal,
                "sourceTaskId": self.source_task_id,
            }
        )

    @classmethod
    def from_json(cls, d: Any) -> "Agent":
        d = _as_dict(d, "agent")
        return cls(
            id=d.get("id", ""),
            session_id=_str(d, "sessionId"),
            owner_id=_str(d, "ownerId"),
            principal=_str(d, "principal"),
            source_task_id=_str(d, "sourceTaskId"),
        )


@dataclass
class EditableField:
    """A field of a tool's input a person may change before allowing it ("Edit & allow…").

    List fields only when the agent runs the edited input: ``name`` is the
    field's key in the tool's input, ``value`` what the agent gave (at most
    3,000 characters).
    """

    name: str
    value: str
    label: Optional[str] = None
    multiline: bool = False
    #: ``"command"`` or ``"path"`` when the field is also the permission's command or path (the
    #: same value): the bot then judges an edit of it, by standing rules and quorum, as the call it makes.
    of: Optional[str] = None

    def to_json(self) -> JSON:
        d = _compact({"name": self.name, "label": self.label, "value": self.value, "of": self.of})
        if self.multiline:
            d["multiline"] = True
        return d


@dataclass
class Permission:
    """What a tool-permission ask is about, for standing rules.

    Only an ask with exactly one question, id ``"permission"``, offering
    ``"Allow"`` and ``"Deny"``, may carry one (else ``BAD_REQUEST``).
    """

    #: The agent's tool name: ``Bash``, ``Edit``, ``mcp__server__tool``.
    tool: str
    #: The shell command a Bash-like tool runs (not together with ``path``).
    command: Optional[str] = None
    #: The file an Edit-like tool touches.
    path: Optional[str] = None
    #: The base name of the agent's working directory.
    repo: Optional[str] = None
    #: Fields of the tool's input a person may edit before allowing it; the
    #: answer's ``edited`` then holds the values they changed.
    editable: List[EditableField] = field(default_factory=list)

    def to_json(self) -> JSON:
        d = _compact({"tool": self.tool, "command": self.command, "path": self.path, "repo": self.repo})
        if self.editable:
            d["editable"] = [f.to_json() for f in self.editable]
        return d


@dataclass
class Request:
    """The body of ``POST /v1/asks``.

    ``call_id`` is the idempotency key: sending the same one again re-attaches
    to the same question and never posts twice. It defaults to a fresh UUID.
    """

    agent: Agent
    questions: List[Question]
    call_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    #: Makes the ask timed: when the window closes the result is :class:`Pending`.
    #: A timed ask needs ``agent.session_id`` (where its late answer goes).
    timeout_ms: Optional[int] = None
    #: ``"terminal"``: the agent withdraws the question and asks in its terminal when the window closes.
    on_timeout: Optional[str] = None
    #: A Slack channel id overriding the bot's ``ASKSLACK_CHANNEL``.
    channel: Optional[str] = None
    #: ``"channel"``, ``"dm"`` or ``"both"``, overriding ``ASKSLACK_DELIVERY``.
    delivery: Optional[str] = None
    #: How many distinct people must approve a plan or a permission (never below ``ASKSLACK_QUORUM``).
    approvals: Optional[int] = None
    #: Slack user or user group ids whose approvals count.
    approvers: Optional[List[str]] = None
    permission: Optional[Permission] = None

    def to_json(self) -> JSON:
        d: JSON = {
            "callId": self.call_id,
            "agent": self.agent.to_json(),
            "questions": [q.to_json() for q in self.questions],
        }
        extra = _compact(
            {
                "timeoutMs": self.timeout_ms,
                "onTimeout": self.on_timeout,
                "channel": self.channel,
                "delivery": self.delivery,
                "approvals": self.approvals,
                "approvers": list(self.approvers) if self.approvers is not None else None,
                "permission": self.permission.to_json() if self.permission is not None else None,
            }
        )
        d.update(extra)
        return d


# --- answers ----------------------------------------------------------------


@dataclass
class AnswerItem:
    """The answer to one question (``AskUserQuestionAnswerItem``)."""

    #: The answered question's id.
    id: str
    #: Chosen option labels (never typed text).
    selected: List[str] = field(default_factory=list)
    #: Free text typed in "Other…".
    custom: Optional[str] = None
    #: On a tool permission allowed with changes ("Edit & allow…"): the new
    #: values of the fields the person changed, by name. Run the call with them.
    edited: Optional[Dict[str, str]] = None

    def to_json(self) -> JSON:
        d: JSON = {"id": self.id, "selected": list(self.selected)}
        if self.custom is not None:
            d["custom"] = self.custom
        if self.edited:
            d["edited"] = dict(self.edited)
        return d

    @classmethod
    def from_json(cls, d: Any) -> "AnswerItem":
        d = _as_dict(d, "answer")
        raw = d.get("edited")
        edited = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) and raw else None
        return cls(id=d.get("id", ""), selected=[str(s) for s in _list(d, "selected")], custom=_str(d, "custom"), edited=edited)


@dataclass
class Claimant:
    """Who an answer surface says gave an answer (shown as "alice via console", never taken as an identity)."""

    user_id: Optional[str] = None
    user_name: Optional[str] = None

    def to_json(self) -> JSON:
        return _compact({"userId": self.user_id, "userName": self.user_name})

    @classmethod
    def from_json(cls, d: Any) -> "Claimant":
        d = _as_dict(d, "claim")
        return cls(user_id=_str(d, "userId"), user_name=_str(d, "userName"))


@dataclass
class Respondent:
    """Who answered, when and through which surface."""

    #: ``"slack"``, ``"web"`` (the answer page), ``"api"`` (an answer surface) or ``"rule"``.
    surface: str
    #: RFC 3339 time of the answer (see :func:`parse_time`).
    at: str
    #: The Slack user id (a click, the answer page).
    user_id: Optional[str] = None
    #: The Slack user name, or the answer surface's token name.
    user_name: Optional[str] = None
    #: The Slack message that took the answer.
    channel: Optional[str] = None
    message_ts: Optional[str] = None
    #: Who an answer surface says answered.
    claim: Optional[Claimant] = None
    #: The standing rule that answered (surface ``"rule"``), as the bot sends it.
    rule: Optional[JSON] = None

    @classmethod
    def from_json(cls, d: Any) -> "Respondent":
        d = _as_dict(d, "respondent")
        claim, rule = d.get("claim"), d.get("rule")
        return cls(
            surface=d.get("surface", ""),
            at=d.get("at", ""),
            user_id=_str(d, "userId"),
            user_name=_str(d, "userName"),
            channel=_str(d, "channel"),
            message_ts=_str(d, "messageTs"),
            claim=Claimant.from_json(claim) if claim else None,
            rule=dict(rule) if isinstance(rule, Mapping) else None,
        )


@dataclass
class Answer:
    """The body of ``POST /v1/asks/{callId}/answer``: answers from another UI.

    ``respondent`` is kept as the answer surface's claim of who answered; the
    respondent of record is the surface itself (its token's name).
    """

    answers: List[AnswerItem]
    respondent: Optional[Claimant] = None

    def to_json(self) -> JSON:
        d: JSON = {"answers": [a.to_json() for a in self.answers]}
        if self.respondent is not None:
            d["respondent"] = self.respondent.to_json()
        return d


#: Alias of :class:`Answer`, the name the TypeScript client uses.
AnswerBody = Answer


def _item(answers: List[AnswerItem], question_id: str) -> Optional[AnswerItem]:
    for a in answers:
        if a.id == question_id:
            return a
    return None


@dataclass
class Settlement:
    """A blocking ask's answer: the seed's answer batch plus who gave it."""

    answers: List[AnswerItem]
    respondent: Respondent
    #: On an ask that needed a quorum: everyone who approved, in order.
    approvers: List[Respondent] = field(default_factory=list)
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @property
    def pending(self) -> bool:
        """False: this ask was answered."""
        return False

    def answer(self, question_id: str) -> Optional[AnswerItem]:
        """The answer to the question with this id, or None."""
        return _item(self.answers, question_id)

    @classmethod
    def from_json(cls, d: Any) -> "Settlement":
        d = _as_dict(d, "settlement")
        return cls(
            answers=[AnswerItem.from_json(a) for a in _list(d, "answers")],
            respondent=Respondent.from_json(d.get("respondent") or {}),
            approvers=[Respondent.from_json(r) for r in _list(d, "approvers")],
            raw=dict(d),
        )


@dataclass
class Pending:
    """A timed ask whose window closed unanswered: the answer, if one comes,
    arrives as a late answer in the session's queue (:func:`askslack.late_answers`)."""

    call_id: str
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @property
    def pending(self) -> bool:
        """True: nobody answered in the window."""
        return True

    @classmethod
    def from_json(cls, d: Any) -> "Pending":
        d = _as_dict(d, "pending result")
        return cls(call_id=d.get("callId", ""), raw=dict(d))


#: What a blocking ask returns: the answer, or :class:`Pending` when a timed window closed first.
AskResult = Union[Settlement, Pending]


def is_pending(result: AskResult) -> bool:
    """True when an ask result is the pending one (same as ``isinstance(result, Pending)``)."""
    return isinstance(result, Pending)


def _ask_result(d: Any) -> AskResult:
    d = _as_dict(d, "ask result")
    if d.get("pending") is True:
        return Pending.from_json(d)
    return Settlement.from_json(d)


# --- late answers -------------------------------------------------------------


@dataclass
class Source:
    """What a steered message answers: always ``kind="user-question"``."""

    kind: str
    call_id: str

    @classmethod
    def from_json(cls, d: Any) -> "Source":
        d = _as_dict(d, "source")
        return cls(kind=d.get("kind", ""), call_id=d.get("callId", ""))


@dataclass
class SteeredMessage:
    """A late answer, delivered to the agent as a user message whose source names the call."""

    #: ``reply:<callId>``; acknowledge it with this id.
    id: str
    call_id: str
    source: Source
    answers: List[AnswerItem]
    respondent: Respondent
    #: The answer rendered for a model: labels quoted, typed text fenced as untrusted data.
    text: str
    #: RFC 3339 time the late answer arrived.
    queued_at: str
    approvers: List[Respondent] = field(default_factory=list)
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    def answer(self, question_id: str) -> Optional[AnswerItem]:
        """The answer to the question with this id, or None."""
        return _item(self.answers, question_id)

    @classmethod
    def from_json(cls, d: Any) -> "SteeredMessage":
        d = _as_dict(d, "message")
        call_id = d.get("callId", "")
        src = d.get("source")
        return cls(
            id=d.get("id", ""),
            call_id=call_id,
            source=Source.from_json(src) if src else Source("user-question", call_id),
            answers=[AnswerItem.from_json(a) for a in _list(d, "answers")],
            respondent=Respondent.from_json(d.get("respondent") or {}),
            text=d.get("text", ""),
            queued_at=d.get("queuedAt", ""),
            approvers=[Respondent.from_json(r) for r in _list(d, "approvers")],
            raw=dict(d),
        )


# --- status and the rest ----------------------------------------------------------


@dataclass
class Status:
    """``GET /v1/asks/{callId}`` (also what ``start`` and ``abort`` return)."""

    call_id: str
    state: str
    agent: Agent
    questions: List[Question]
    #: RFC 3339 time the ask was made.
    created: str
    #: Bumped on every change; pass it to ``get(..., version=)`` to wait for the next one.
    version: int
    #: When the timed window closes (RFC 3339).
    deadline: Optional[str] = None
    #: Set once settled.
    answers: Optional[List[AnswerItem]] = None
    respondent: Optional[Respondent] = None
    #: A late answer waiting for the agent to admit it.
    reply: Optional[SteeredMessage] = None
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @property
    def settlement(self) -> Optional[Settlement]:
        """The answer as a :class:`Settlement` once settled, else None."""
        if self.answers is None or self.respondent is None:
            return None
        return Settlement(answers=self.answers, respondent=self.respondent)

    @classmethod
    def from_json(cls, d: Any) -> "Status":
        d = _as_dict(d, "status")
        resp, reply = d.get("respondent"), d.get("reply")
        answers = d.get("answers")
        return cls(
            call_id=d.get("callId", ""),
            state=d.get("state", ""),
            agent=Agent.from_json(d.get("agent") or {}),
            questions=[Question.from_json(q) for q in _list(d, "questions")],
            created=d.get("created", ""),
            version=int(d.get("version", 0)),
            deadline=_str(d, "deadline"),
            answers=[AnswerItem.from_json(a) for a in answers] if isinstance(answers, list) else None,
            respondent=Respondent.from_json(resp) if resp else None,
            reply=SteeredMessage.from_json(reply) if reply else None,
            raw=dict(d),
        )


@dataclass
class AnswerResult:
    """What ``answer`` returns: ``continued`` is true when the answer was queued as a late answer."""

    state: str
    continued: bool
    #: Set when the answer was queued as a steered message (``reply:<callId>``).
    message_id: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Any) -> "AnswerResult":
        d = _as_dict(d, "answer result")
        return cls(state=d.get("state", ""), continued=bool(d.get("continued")), message_id=_str(d, "messageId"), raw=dict(d))


@dataclass
class AckResult:
    """What ``ack`` returns."""

    acked: bool
    call_id: str
    state: str
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Any) -> "AckResult":
        d = _as_dict(d, "ack result")
        return cls(acked=bool(d.get("acked")), call_id=d.get("callId", ""), state=d.get("state", ""), raw=dict(d))


@dataclass
class PendingQuestion:
    """A timed call that can still take an answer (``PendingUserQuestion``)."""

    call_id: str
    questions: List[Question]
    #: ``"open"`` or ``"continued"``.
    state: str

    @classmethod
    def from_json(cls, d: Any) -> "PendingQuestion":
        d = _as_dict(d, "pending question")
        return cls(call_id=d.get("callId", ""), questions=[Question.from_json(q) for q in _list(d, "questions")], state=d.get("state", ""))


@dataclass
class SettledQuestion:
    """A timed call and the answers it settled with (``SettledUserQuestion``)."""

    call_id: str
    answers: List[AnswerItem]

    @classmethod
    def from_json(cls, d: Any) -> "SettledQuestion":
        d = _as_dict(d, "settled question")
        return cls(call_id=d.get("callId", ""), answers=[AnswerItem.from_json(a) for a in _list(d, "answers")])


@dataclass
class Projection:
    """``GET /v1/sessions/{id}/questions``: the session's timed questions (``UserQuestionProjectionView``)."""

    #: Calls that can still take an answer, in ask order.
    active: List[PendingQuestion]
    #: Calls an answer settled, in settlement order.
    settled: List[SettledQuestion]
    raw: JSON = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Any) -> "Projection":
        d = _as_dict(d, "projection")
        return cls(
            active=[PendingQuestion.from_json(q) for q in _list(d, "active")],
            settled=[SettledQuestion.from_json(q) for q in _list(d, "settled")],
            raw=dict(d),
        )


_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|z|[+-]\d\d:\d\d)$")


def parse_time(s: str) -> datetime:
    """An RFC 3339 time as the bot writes it (nanoseconds, ``Z``) as an aware datetime.

    Python 3.10's ``datetime.fromisoformat`` takes neither ``Z`` nor more than
    six fractional digits; the fraction is cut to microseconds.
    """
    m = _TIME.match(s.strip())
    if not m:
        raise ValueError(f"not an RFC 3339 time: {s!r}")
    base, frac, zone = m.groups()
    dt = datetime.strptime(base, "%Y-%m-%dT%H:%M:%S")
    if frac:
        dt = dt.replace(microsecond=int(frac[:6].ljust(6, "0")))
    if zone in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return dt.replace(tzinfo=tz)
