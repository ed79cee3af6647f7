#!/usr/bin/env python3
"""tests/helpers/mock_anthropic.py: a scripted Anthropic Messages API on loopback, for the tests
that run the real Claude Code (tests/agents.tests.sh). It never reaches any other host.

    mock_anthropic.py SCRIPT RECORD PORTFILE

SCRIPT is a JSON list of turns; each turn is a list of actions, one content block each:
    {"bash": "COMMAND"}                   a Bash tool call
    {"tool": "NAME", "input": {...}}      any other tool call (Edit, Read, Write, ...)
    {"text": "TEXT"}                      a text block (a turn of text only ends the run)
The Nth request of the conversation (one that offers the Bash tool) gets turn N (the last turn
again when the script has run out). Requests that offer no Bash tool (Claude Code's side
queries: titles, summaries) get a short text answer and no turn.

RECORD gets one JSON line per tool result the agent sent back, the first time it is seen:
    {"id": TOOL_USE_ID, "is_error": BOOL, "content": TEXT}
and one line per request, {"request": N, "path": PATH, "tools": [NAMES], "t_ms": T}, and one as
its answer has gone, {"sent": N, "turn": BOOL, "t_ms": T} (T: a monotonic clock, in ms; what
bench/agents.sh times a tool call by), so a test can tell what reached the model. PORTFILE gets the port (127.0.0.1:0 picked by the kernel) once listening.
"""
import http.server
import json
import sys
import threading
import time

script = json.load(open(sys.argv[1]))
record_path, port_path = sys.argv[2], sys.argv[3]
lock = threading.Lock()
state = {"turn": 0, "seen": set(), "requests": 0}


def now_ms():
    return time.monotonic() * 1000


def record(obj):
    with open(record_path, "a") as f:
        f.write(json.dumps(obj) + "\n")


def text_of(content):
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


def blocks_for(turn, n):
    out = []
    for k, a in enumerate(turn):
        if "bash" in a:
            out.append({"type": "tool_use", "id": "toolu_%02d_%02d" % (n, k), "name": "Bash",
                        "input": {"command": a["bash"], "description": "step %d.%d" % (n, k)}})
        elif "tool" in a:
            out.append({"type": "tool_use", "id": "toolu_%02d_%02d" % (n, k), "name": a["tool"],
                        "input": a.get("input", {})})
        else:
            out.append({"type": "text", "text": a["text"]})
    return out


def sse(blocks, model):
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    ev = [("message_start", {"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": 1}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return "".join("event: %s\ndata: %s\n\n" % (k, json.dumps(v)) for k, v in ev).encode(), stop


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}')

    def do_HEAD(self):
        self.reply(200, b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        path = self.path.split("?")[0]
        if not path.endswith("/messages"):
            if path.endswith("/count_tokens"):
                return self.reply(200, b'{"input_tokens": 1}')
            return self.reply(404, b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}')
        req = json.loads(body)
        tools = [t.get("name") for t in req.get("tools", [])]
        with lock:
            state["requests"] += 1
            record({"request": state["requests"], "path": path, "tools": tools, "t_ms": now_ms()})
            for m in req.get("messages", []):
                if m.get("role") != "user" or not isinstance(m.get("content"), list):
                    continue
                for b in m["content"]:
                    if b.get("type") == "tool_result" and b.get("tool_use_id") not in state["seen"]:
                        state["seen"].add(b["tool_use_id"])
                        record({"id": b["tool_use_id"], "is_error": bool(b.get("is_error")),
                                "content": text_of(b.get("content", ""))})
            if "Bash" in tools:
                n = state["turn"]
                state["turn"] += 1
                blocks = blocks_for(script[min(n, len(script) - 1)], n)
            else:
                blocks = [{"type": "text", "text": "ok"}]
        model = req.get("model", "claude-mock")
        if req.get("stream"):
            out, _ = sse(blocks, model)
            self.reply(200, out, "text/event-stream")
            with lock:
                record({"sent": state["requests"], "turn": "Bash" in tools, "t_ms": now_ms()})
            return
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        msg = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": blocks,
               "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        self.reply(200, json.dumps(msg).encode())


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_path + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_path + ".tmp", port_path)
server.serve_forever()
