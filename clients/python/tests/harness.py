"""Test harness: the real askslack binary and the project's fake Slack, built
once per run (or taken from ASKSLACK_BIN / FAKESLACK_BIN, which the Go test
in python_test.go sets) and started as child processes."""

from __future__ import annotations

import atexit
import functools
import inspect
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, TypeVar

HERE = Path(__file__).resolve().parent
PACKAGE_DIR = HERE.parent
if str(PACKAGE_DIR) not in sys.path:
    sys.path.insert(0, str(PACKAGE_DIR))  # import askslack from this checkout

SECRET = "S"
CHANNEL = "C0QUESTIONS"

T = TypeVar("T")

# The control API is on loopback: never through a proxy from the environment.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def repo_root() -> Path:
    """The repository root: the nearest parent holding askslack's go.mod."""
    d = HERE
    while True:
        mod = d / "go.mod"
        if mod.is_file() and "module github.com/askslack/askslack" in mod.read_text():
            return d
        if d.parent == d:
            raise RuntimeError(f"askslack repository root not found above {HERE}")
        d = d.parent


def go_binary() -> str:
    found = shutil.which("go")
    if found:
        return found
    if os.path.exists("/usr/local/go/bin/go"):
        return "/usr/local/go/bin/go"
    raise RuntimeError("go not found on PATH or in /usr/local/go/bin")


class Binaries:
    def __init__(self, askslack: str, fakeslack: str, tmp: Optional[str] = None) -> None:
        self.askslack, self.fakeslack, self._tmp = askslack, fakeslack, tmp

    def cleanup(self) -> None:
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)


def binaries() -> Binaries:
    """Builds (or reuses) the two binaries."""
    a, f = os.environ.get("ASKSLACK_BIN"), os.environ.get("FAKESLACK_BIN")
    if a and f and os.path.exists(a) and os.path.exists(f):
        return Binaries(a, f)
    tmp = tempfile.mkdtemp(prefix="askslack-py-")
    root, go = repo_root(), go_binary()
    env = dict(os.environ, PATH=os.environ.get("PATH", "") + os.pathsep + os.path.dirname(go))
    out = Binaries(os.path.join(tmp, "askslack"), os.path.join(tmp, "fakeslack"), tmp)
    for bin_path, pkg in ((out.askslack, "./cmd/askslack"), (out.fakeslack, "./internal/slackfake/cmd/fakeslack")):
        subprocess.run([go, "build", "-o", bin_path, pkg], cwd=root, env=env, check=True)
    return out


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eventually(what: str, fn: Callable[[], Optional[T]], timeout: float = 15.0) -> T:
    """Polls fn until it returns something other than None, or fails after timeout seconds."""
    deadline = time.monotonic() + timeout
    last: Optional[BaseException] = None
    while True:
        try:
            v = fn()
            if v is not None:
                return v
        except Exception as e:  # noqa: BLE001 - reported when time runs out
            last = e
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f": {last!r}" if last else ""))
        time.sleep(0.05)


class Proc:
    """A child process of the test, its output kept in a file for failure reports."""

    def __init__(self, name: str, binary: str, args: List[str], env: Dict[str, str], logdir: str) -> None:
        self.name = name
        self.log_path = os.path.join(logdir, f"{name.replace(':', '-')}-{len(os.listdir(logdir))}.log")
        self._log = open(self.log_path, "wb")
        base = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
        self.popen = subprocess.Popen([binary, *args], env={**base, **env}, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)

    @property
    def running(self) -> bool:
        return self.popen.poll() is None

    def output(self, limit: int = 200_000) -> str:
        with open(self.log_path, "rb") as f:
            data = f.read()
        return data[-limit:].decode("utf-8", errors="replace")

    def stop(self) -> None:
        if self.running:
            self.popen.terminate()
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()


def _http(method: str, url: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"} if data else {})
    try:
        with _opener.open(req, timeout=15) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Fake:
    """The fake Slack's control API."""

    def __init__(self, url: str, proc: Proc) -> None:
        self.url, self.proc = url, proc

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    def messages(self) -> List[Dict[str, Any]]:
        status, text = _http("GET", self.url + "/_fake/messages")
        if status != 200:
            raise AssertionError(f"/_fake/messages: HTTP {status}: {text}")
        return json.loads(text)

    def message(self, call_id: str) -> Optional[Dict[str, Any]]:
        """The message posted for call_id (its block ids carry ``ask/<callId>/``)."""
        for m in self.messages():
            if f"ask/{call_id}/" in json.dumps(m.get("blocks")):
                return m
        return None

    def messages_of(self, call_id: str) -> List[Dict[str, Any]]:
        return [m for m in self.messages() if f"ask/{call_id}/" in json.dumps(m.get("blocks"))]

    def wait_posted(self, call_id: str) -> Dict[str, Any]:
        return eventually(f"the question {call_id} in Slack", lambda: self.message(call_id))

    def current(self, m: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The message m as it is now."""
        for x in self.messages():
            if x["channel"] == m["channel"] and x["ts"] == m["ts"]:
                return x
        return None

    def views(self) -> List[Dict[str, Any]]:
        status, text = _http("GET", self.url + "/_fake/views")
        if status != 200:
            raise AssertionError(f"/_fake/views: HTTP {status}: {text}")
        return json.loads(text)

    def control(self, what: str, body: Dict[str, Any]) -> None:
        status, text = _http("POST", self.url + "/_fake/" + what, body)
        out = json.loads(text) if text.strip().startswith("{") else {}
        if status != 200 or out.get("error"):
            raise AssertionError(f"{what}: HTTP {status}: {text}")

    def click(self, m: Dict[str, Any], button: str, user: str = "U0ALICE") -> None:
        self.control("click", {"channel": m["channel"], "ts": m["ts"], "user": user, "button": button})

    def submit_edit(self, fields: Dict[str, str], user: str = "U0ALICE") -> None:
        """Submits user's open Edit & allow form with new values for its fields, by name."""

        def open_view() -> Optional[Dict[str, Any]]:
            return next((v for v in self.views() if not v["closed"] and v["user_id"] == user and "askslack.edit" in json.dumps(v["view"])), None)

        view = eventually("an open Edit & allow form", open_view)
        blocks = view["view"].get("blocks") or []
        values: Dict[str, List[str]] = {}
        for name, value in fields.items():
            inp = next((b for b in blocks if b.get("type") == "input" and str(b.get("block_id", "")).endswith("/edit/" + name)), None)
            if inp is None:
                raise AssertionError(f"the form has no field {name}: " + json.dumps(view["view"]))
            values[inp["block_id"]] = [value]
        self.control("submit", {"view_id": view["id"], "user": user, "values": values})

    def submit_text(self, text: str, user: str = "U0ALICE") -> None:
        """Submits the open modal of user, filling its text input with text."""

        def open_view() -> Optional[Dict[str, Any]]:
            return next((v for v in self.views() if not v["closed"] and v["user_id"] == user), None)

        view = eventually("an open modal", open_view)
        blocks = view["view"].get("blocks") or []
        inp = next((b for b in blocks if b.get("type") == "input" and (b.get("element") or {}).get("type") == "plain_text_input"), None)
        if inp is None:
            raise AssertionError("the modal has no text input: " + json.dumps(view["view"]))
        self.control("submit", {"view_id": view["id"], "user": user, "values": {inp["block_id"]: [text]}})


def has_controls(m: Dict[str, Any]) -> bool:
    b = json.dumps(m.get("blocks"))
    return '"actions"' in b or '"button"' in b


class Bot:
    def __init__(self, url: str, proc: Proc) -> None:
        self.url, self.proc = url, proc


class Deployment:
    """A fake Slack plus askslack bots, torn down together."""

    def __init__(self, bins: Binaries) -> None:
        self.bins = bins
        self.procs: List[Proc] = []
        self.fake: Optional[Fake] = None
        self.logdir = tempfile.mkdtemp(prefix="askslack-py-logs-")
        atexit.register(self.stop)  # even when the run is interrupted

    def _wait_ready(self, url: str, proc: Proc, path: str) -> None:
        def ready() -> Optional[bool]:
            if not proc.running:
                raise RuntimeError(f"{proc.name} exited:\n{proc.output()}")
            try:
                status, _ = _http("GET", url + path)
            except OSError:
                return None
            return True if status == 200 else None

        try:
            eventually(f"{proc.name} ready", ready, timeout=30)
        except AssertionError:
            raise AssertionError(f"{proc.name} did not get ready:\n{proc.output()}") from None

    def start_fake(self, bot_port: int) -> Fake:
        """Starts the fake Slack delivering interactions to a bot on bot_port."""
        port = free_port()
        p = Proc(
            "fakeslack",
            self.bins.fakeslack,
            ["-addr", f"127.0.0.1:{port}", "-signing-secret", SECRET, "-bot-token", "xoxb-test",
             "-interaction-url", f"http://127.0.0.1:{bot_port}/slack/interactions", "-users", "U0ALICE:alice"],
            {},
            self.logdir,
        )
        self.procs.append(p)
        self.fake = Fake(f"http://127.0.0.1:{port}", p)
        self._wait_ready(self.fake.url, p, "/_fake/messages")
        return self.fake

    def start_bot(self, port: Optional[int] = None, channel: str = CHANNEL, env: Optional[Dict[str, str]] = None) -> Bot:
        """Starts a bot on port (fresh when None); channel "" starts it without ASKSLACK_CHANNEL."""
        assert self.fake is not None, "start the fake first"
        port = port or free_port()
        e = {
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": self.fake.api_url,
            "ASKSLACK_ADDR": f"127.0.0.1:{port}",
            "ASKSLACK_LOG_LEVEL": "debug",
            # The fake enforces no rate limits: pacing to Slack's real ones
            # would only slow the suite (the Go tests cover pacing).
            "ASKSLACK_SLACK_PACING": "false",
        }
        if channel:
            e["ASKSLACK_CHANNEL"] = channel
        e.update(env or {})
        p = Proc(f"askslack:{port}", self.bins.askslack, [], e, self.logdir)
        self.procs.append(p)
        url = f"http://127.0.0.1:{port}"
        self._wait_ready(url, p, "/readyz")
        return Bot(url, p)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.output(20_000)}" for p in self.procs)

    def stop(self) -> None:
        for p in self.procs:
            p.stop()
        self.procs = []
        shutil.rmtree(self.logdir, ignore_errors=True)


def logs_on_failure(get_deployment: Callable[[], Optional[Deployment]]) -> Callable[[type], type]:
    """A class decorator: a failing test_* method prints the processes' logs."""

    def report() -> None:
        d = get_deployment()
        if d is not None:
            print(d.logs(), file=sys.stderr)

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kw: Any) -> Any:
                try:
                    return await fn(*args, **kw)
                except BaseException:
                    report()
                    raise

            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kw: Any) -> Any:
            try:
                return fn(*args, **kw)
            except BaseException:
                report()
                raise

        return wrapper

    def decorate(cls: type) -> type:
        for name, fn in list(vars(cls).items()):
            if name.startswith("test") and callable(fn):
                setattr(cls, name, wrap(fn))
        return cls

    return decorate
