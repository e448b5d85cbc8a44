"""A fake Anthropic Messages API for end-to-end tests of the real Claude Code CLI.

Stdlib only (``http.server``): a threaded server on 127.0.0.1, port 0 (a free
one), request bodies bounded by :data:`MAX_BODY_BYTES`, stopped by the test::

    with FakeAnthropic() as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        api.script(bash("echo hi"), text("done"))
        ...run claude...
        api.message_requests()   # every POST /v1/messages body, in order

What Claude Code 2.1.332 sends in ``-p`` mode (measured):

* ``HEAD /api/hello`` -- a connectivity preflight (not sent when
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``): answered 200, empty body.
* ``POST /v1/messages?beta=true`` for every model call, always
  ``"stream": true`` (the conversation, the compaction summary): answered as
  SSE; a body without ``stream`` gets the same message as plain JSON.
  Headers include ``x-api-key: sk-ant-fake``, ``anthropic-version``,
  ``anthropic-beta`` and ``x-claude-code-session-id``.
* nothing else: no count_tokens, no model list (``POST
  /v1/messages/count_tokens`` is answered anyway).
* with ``HTTP(S)_PROXY`` pointed here, anything bound for a real host arrives as
  a proxy ``CONNECT host:443``: it is recorded and refused (:meth:`FakeAnthropic.leaks`).
  The interactive REPL tries ``downloads.claude.ai`` and ``github.com`` even with
  non-essential traffic off; ``-p`` tries nothing.

``messages`` may contain ``role: "system"`` entries (the default model gets its
reminders and hook contexts that way) with string or list content; the fake
never validates message order or roles.

Reply selection for ``POST /v1/messages``, first match wins:

1. :attr:`FakeAnthropic.responder`, if set and it returns a reply;
2. the compaction request -- its last user message asks to "create a detailed
   summary" of the conversation -- gets ``<analysis>…</analysis><summary>`` +
   :data:`SUMMARY_TEXT` ``</summary>``;
3. a request that offers tools (the conversation loop) gets the next scripted
   reply (:meth:`FakeAnthropic.script`; a callable step is called with the
   request body), or ``"OK"`` when the script is empty;
4. any other request gets ``"OK"``; it never consumes the script.

Every response has a unique message id (``msg_fake_000001``…) and every
tool_use block a unique id.  ``usage.input_tokens`` is 100 unless a reply sets
it (``text("big", input_tokens=90_000)``), which is how a test drives Claude
Code's auto-compaction (see ``tests/e2e/test_harness.py``).
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union
from urllib.parse import urlsplit

#: Upper bound on an accepted request body; bigger bodies get 413.
MAX_BODY_BYTES = 64 * 1024 * 1024

#: The fixed text inside the fake compaction summary.
SUMMARY_TEXT = (
    "FAKE-COMPACTION-SUMMARY: the user greeted the assistant and asked for a few small things; nothing else happened."
)

#: The phrase that identifies Claude Code's compaction (summary) request.
COMPACT_MARKER = "create a detailed summary"

DEFAULT_MODEL = "claude-opus-5-5"

Reply = dict[str, Any]
Body = dict[str, Any]
#: A scripted step: a fixed reply, or a function of the request it answers (to act on a tool result).
Step = Union[Reply, Callable[[Body], Reply]]


# ---------------------------------------------------------------------------
# Reply builders.  A reply is {"content": [blocks], "stop_reason": str,
# optional "usage": {...}}; blocks follow the Messages API.


def text(s: str, **usage: int) -> Reply:
    """A plain assistant text reply; keyword arguments override ``usage``."""
    reply: Reply = {"content": [{"type": "text", "text": s}], "stop_reason": "end_turn"}
    if usage:
        reply["usage"] = usage
    return reply


def tool_use(name: str, input: dict[str, Any], *, preface: str | None = None, **usage: int) -> Reply:
    """A reply that calls one tool (``stop_reason: tool_use``), optionally after some text."""
    blocks: list[dict[str, Any]] = []
    if preface:
        blocks.append({"type": "text", "text": preface})
    blocks.append({"type": "tool_use", "name": name, "input": input})
    reply: Reply = {"content": blocks, "stop_reason": "tool_use"}
    if usage:
        reply["usage"] = usage
    return reply


def _with_usage(reply: Reply, usage: dict[str, int]) -> Reply:
    if usage:
        reply["usage"] = dict(usage)
    return reply


def bash(command: str, description: str = "Run a command", **usage: int) -> Reply:
    return _with_usage(tool_use("Bash", {"command": command, "description": description}), usage)


def task_create(subject: str, description: str = "", active_form: str | None = None, **usage: int) -> Reply:
    """TaskCreate (needs ``CLAUDE_CODE_ENABLE_TODO_TOOLS=1`` in ``-p``)."""
    inp: dict[str, Any] = {"subject": subject, "description": description or subject}
    if active_form:
        inp["activeForm"] = active_form
    return _with_usage(tool_use("TaskCreate", inp), usage)


def task_update(task_id: str | int, **fields: Any) -> Reply:
    """TaskUpdate, e.g. ``task_update(1, status="completed")``."""
    return tool_use("TaskUpdate", {"taskId": str(task_id), **fields})


def todo_write(todos: list[dict[str, str]]) -> Reply:
    """TodoWrite (exists only with ``CLAUDE_CODE_ENABLE_TASKS=false CLAUDE_CODE_ENABLE_TODO_TOOLS=1``)."""
    return tool_use("TodoWrite", {"todos": todos})


# ---------------------------------------------------------------------------
# Request inspection (pure functions over a recorded request body).


def _block_texts(content: Any) -> Iterable[str]:
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            yield block["text"]
        elif kind == "tool_result":
            yield from _block_texts(block.get("content"))


def message_texts(body: Body, roles: tuple[str, ...] | None = None) -> list[str]:
    """Every text in ``body["messages"]`` in order: text blocks, string contents,
    tool_result texts and ``role: "system"`` entries; ``roles`` filters."""
    out: list[str] = []
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        if roles is not None and msg.get("role") not in roles:
            continue
        out.extend(_block_texts(msg.get("content")))
    return out


def system_text(body: Body) -> str:
    """The top-level ``system`` prompt as one string."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(_block_texts(system))


def last_user_text(body: Body) -> str:
    """The texts of the last ``role: "user"`` message, joined by newlines."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return "\n".join(_block_texts(msg.get("content")))
    return ""


def last_tool_results(body: Body) -> list[str]:
    """The texts of the tool_result blocks in the last ``role: "user"`` message, in order."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            content = msg.get("content")
            blocks = content if isinstance(content, list) else []
            return [
                "\n".join(_block_texts(b.get("content")))
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
    return []


def anchor_path_from(body: Body) -> str:
    """The path ``session-workflow anchor new`` printed, from the tool result the request carries."""
    results = last_tool_results(body)
    paths = [line.strip() for r in results for line in r.splitlines() if line.strip().endswith(".md")]
    assert paths, f"anchor new printed no path: {results}"
    return paths[-1]


def is_compaction_request(body: Body) -> bool:
    return COMPACT_MARKER in last_user_text(body).lower()


def offers_tools(body: Body) -> bool:
    return bool(body.get("tools"))


def tool_names(body: Body) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


# ---------------------------------------------------------------------------


class Recorded(dict[str, Any]):
    """One request: ``method``, ``path`` (no query), ``query``, ``headers``
    (lower-case names), ``raw`` (first 4 KB), ``body`` (parsed JSON, a string
    if it was not JSON, None if empty), ``absolute`` (the request line had a
    full URL, i.e. it came through the proxy), ``t`` (epoch seconds)."""


class FakeAnthropic:
    def __init__(self, *, default_input_tokens: int = 100, summary_text: str = SUMMARY_TEXT) -> None:
        self.default_input_tokens = default_input_tokens
        self.summary_text = summary_text
        #: Optional override: called with each /v1/messages body first; a reply, or None to fall through.
        self.responder: Callable[[Body], Reply | None] | None = None
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._script: list[Step] = []
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> FakeAnthropic:
        handler = type("BoundHandler", (_Handler,), {"api": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "fake API not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting ---------------------------------------------------------------
    def script(self, *replies: Step) -> None:
        """Queue replies for the next conversation-loop requests, in order.

        A step may be a function of the request body that returns the reply, for a model turn that uses what
        an earlier tool printed (e.g. the path ``session-workflow anchor new`` created)."""
        with self._lock:
            self._script.extend(copy.deepcopy(list(replies)))

    def pending_script(self) -> int:
        with self._lock:
            return len(self._script)

    # -- recorded requests -------------------------------------------------------
    @property
    def requests(self) -> list[Recorded]:
        """A snapshot of every request so far."""
        with self._lock:
            return list(self._requests)

    def message_requests(self) -> list[Body]:
        """Bodies of every ``POST /v1/messages`` (not count_tokens), in order."""
        return [
            r["body"]
            for r in self.requests
            if r["method"] == "POST" and r["path"] == "/v1/messages" and isinstance(r["body"], dict)
        ]

    def main_requests(self) -> list[Body]:
        """Message requests of the conversation loop (they offer tools), without compaction ones."""
        return [b for b in self.message_requests() if offers_tools(b) and not is_compaction_request(b)]

    def compaction_requests(self) -> list[Body]:
        return [b for b in self.message_requests() if is_compaction_request(b)]

    def leaks(self) -> list[Recorded]:
        """Requests meant for another host (proxy CONNECTs or absolute-URL requests)."""
        return [r for r in self.requests if r["method"] == "CONNECT" or r.get("absolute")]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    # -- internals ---------------------------------------------------------------
    def record(self, rec: Recorded) -> None:
        with self._lock:
            self._requests.append(rec)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def choose_reply(self, body: Body) -> Reply:
        if self.responder is not None:
            override = self.responder(body)
            if override is not None:
                return copy.deepcopy(override)
        if is_compaction_request(body):
            return text(f"<analysis>fake analysis</analysis>\n<summary>\n{self.summary_text}\n</summary>")
        if offers_tools(body):
            with self._lock:
                scripted = self._script.pop(0) if self._script else None
            if callable(scripted):
                return copy.deepcopy(scripted(body))
            if scripted is not None:
                return scripted
        return text("OK")

    def build_message(self, body: Body, reply: Reply) -> dict[str, Any]:
        n = self.next_id()
        content: list[dict[str, Any]] = []
        for block in reply.get("content") or []:
            block = dict(block)
            if block.get("type") == "tool_use" and not block.get("id"):
                block["id"] = f"toolu_fake_{n:06d}_{len(content)}"
            content.append(block)
        usage: dict[str, int] = {
            "input_tokens": self.default_input_tokens,
            "output_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        usage.update(reply.get("usage") or {})
        return {
            "id": f"msg_fake_{n:06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or DEFAULT_MODEL,
            "content": content,
            "stop_reason": reply.get("stop_reason", "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }


def sse_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent event sequence the real API emits for ``message``."""
    usage = dict(message["usage"])
    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            first: dict[str, Any] = {"type": "text", "text": ""}
            deltas: list[dict[str, Any]] = [{"type": "text_delta", "text": block["text"]}]
        elif block["type"] == "tool_use":
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        elif block["type"] == "thinking":
            first = {"type": "thinking", "thinking": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block.get("signature", "ZmFrZQ==")},
            ]
        else:
            raise ValueError(f"fake API cannot stream a {block['type']!r} block")
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": first}))
        if i == 0:
            events.append(("ping", {"type": "ping"}))
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class _Handler(BaseHTTPRequestHandler):
    api: FakeAnthropic
    protocol_version = "HTTP/1.1"
    server_version = "FakeAnthropic/1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError):  # the client went away
            self.close_connection = True

    # -- plumbing ------------------------------------------------------------------
    def _read_body(self) -> bytes | None:
        """The request body, or None when it is over :data:`MAX_BODY_BYTES`."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                if len(data) + size > MAX_BODY_BYTES:
                    return None
                data += self.rfile.read(size)
                self.rfile.readline(1024)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            return None
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", f"req_fake_{self.api.next_id():06d}")
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _send_json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    # -- routes --------------------------------------------------------------------
    def do_CONNECT(self) -> None:
        """A proxy tunnel request: the CLI tried to reach a non-loopback host. Refused."""
        self.api.record(
            Recorded(
                method="CONNECT",
                path=self.path,
                query="",
                headers={k.lower(): v for k, v in self.headers.items()},
                raw=b"",
                body=None,
                absolute=True,
                t=time.time(),
            )
        )
        self.close_connection = True
        self.send_response(403, "fake API: no internet in tests")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _handle(self) -> None:
        raw = self._read_body()
        split = urlsplit(self.path)
        rec = Recorded(
            method=self.command,
            path=split.path,
            query=split.query,
            headers={k.lower(): v for k, v in self.headers.items()},
            raw=(raw or b"")[:4096],
            body=None,
            absolute=bool(split.netloc),
            t=time.time(),
        )
        if raw is None:
            self.api.record(rec)
            self.close_connection = True
            self._send_json(413, _error("request_too_large", f"body over {MAX_BODY_BYTES} bytes"))
            return
        if raw:
            try:
                rec["body"] = json.loads(raw)
            except ValueError:
                rec["body"] = raw.decode("utf-8", "replace")
        self.api.record(rec)
        path = split.path.rstrip("/")
        if rec["absolute"]:
            self._send_json(403, _error("permission_error", "fake API: no internet in tests"))
        elif self.command == "POST" and path == "/v1/messages":
            self._messages(rec["body"])
        elif self.command == "POST" and path == "/v1/messages/count_tokens":
            body = rec["body"] if isinstance(rec["body"], dict) else {}
            chars = sum(len(t) for t in message_texts(body)) + len(system_text(body))
            self._send_json(200, {"input_tokens": chars // 4 + 1})
        elif self.command in ("HEAD", "GET") and path in ("", "/v1", "/api/hello"):
            self._send_json(200, {})
        else:
            self._send_json(404, _error("not_found_error", f"fake API: no route for {self.command} {split.path}"))

    def _messages(self, body: Any) -> None:
        if not isinstance(body, dict):
            self._send_json(400, _error("invalid_request_error", "body must be a JSON object"))
            return
        message = self.api.build_message(body, self.api.choose_reply(body))
        if not body.get("stream"):
            self._send_json(200, message)
            return
        payload = b"".join(
            f"event: {event}\ndata: {json.dumps(data)}\n\n".encode() for event, data in sse_events(message)
        )
        self._send(200, payload, "text/event-stream")

    do_GET = _handle
    do_HEAD = _handle
    do_POST = _handle
    do_PUT = _handle
    do_PATCH = _handle
    do_DELETE = _handle
    do_OPTIONS = _handle


if __name__ == "__main__":  # manual probing: python3 -m tests.e2e.fake_api
    import sys

    with FakeAnthropic() as api:
        print(api.base_url, flush=True)
        seen = 0
        try:
            while True:
                time.sleep(0.2)
                reqs = api.requests
                for r in reqs[seen:]:
                    print(r["method"], r["path"], r["query"], file=sys.stderr, flush=True)
                seen = len(reqs)
        except KeyboardInterrupt:
            pass
