#!/usr/bin/env python3
"""tests/helpers/mock_openai.py: a scripted OpenAI Responses API on loopback, for the tests that
run the real Codex CLI (tests/agents.tests.sh), as the model provider a throwaway CODEX_HOME's
config.toml names (base_url http://127.0.0.1:PORT/v1, wire_api "responses"). It never reaches
any other host.

    mock_openai.py SCRIPT RECORD PORTFILE

SCRIPT is a JSON list of turns; each turn is a list of actions, one output item each:
    {"bash": "COMMAND"}       a call of the shell tool the request offers (exec_command, shell_command
                              or shell), with COMMAND as its command
    {"patch": "PATCH"}        an apply_patch call (the custom tool when offered, else the function)
    {"text": "TEXT"}          an assistant message (a turn of text only ends the run)
The Nth request to /v1/responses gets turn N (the last again when the script has run out).

RECORD gets one JSON line per tool output the agent sent back, the first time it is seen:
    {"id": CALL_ID, "content": TEXT}
and one line per request, {"request": N, "tools": [NAMES], "t_ms": T}, and one as its answer has
gone, {"sent": N, "turn": true, "t_ms": T} (T: a monotonic clock, in ms, for bench/agents.sh). PORTFILE gets the port once listening.
"""
import http.server
import json
import os
import sys
import threading
import time

script = json.load(open(sys.argv[1]))
record_path, port_path = sys.argv[2], sys.argv[3]
lock = threading.Lock()
state = {"turn": 0, "seen": set(), "requests": 0}
SHELLS = ("exec_command", "shell_command", "shell")


def now_ms():
    return time.monotonic() * 1000


def record(obj):
    with open(record_path, "a") as f:
        f.write(json.dumps(obj) + "\n")


def text_of(output):
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(b.get("text", "") for b in output if isinstance(b, dict))
    if isinstance(output, dict):
        return output.get("content", "") or json.dumps(output)
    return str(output)


def items_for(turn, n, tools):
    shell = next((s for s in SHELLS if s in tools), "exec_command")
    out = []
    for k, a in enumerate(turn):
        cid = "call_%02d_%02d" % (n, k)
        if "bash" in a:
            if shell == "exec_command":
                args = {"cmd": a["bash"]}
            elif shell == "shell_command":
                args = {"command": a["bash"]}
            else:
                args = {"command": ["bash", "-lc", a["bash"]]}
            out.append({"type": "function_call", "call_id": cid, "name": shell, "arguments": json.dumps(args)})
        elif "patch" in a:
            if tools.get("apply_patch") == "custom":
                out.append({"type": "custom_tool_call", "call_id": cid, "name": "apply_patch", "input": a["patch"]})
            else:
                out.append({"type": "function_call", "call_id": cid, "name": "apply_patch",
                            "arguments": json.dumps({"input": a["patch"]})})
        else:
            out.append({"type": "message", "role": "assistant", "id": "msg_%02d" % n,
                        "content": [{"type": "output_text", "text": a["text"]}]})
    return out


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
        if self.path.split("?")[0].endswith("/models"):
            return self.reply(200, b'{"object": "list", "data": [], "models": []}')
        self.reply(404, b'{"error": {"message": "mock"}}')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if not self.path.split("?")[0].endswith("/responses"):
            return self.reply(404, b'{"error": {"message": "mock"}}')
        req = json.loads(body)
        tools = {t.get("name"): t.get("type") for t in req.get("tools", []) if t.get("name")}
        with lock:
            state["requests"] += 1
            n = state["turn"]
            state["turn"] += 1
            record({"request": state["requests"], "tools": sorted(tools), "t_ms": now_ms()})
            for item in req.get("input", []):
                if item.get("type") in ("function_call_output", "custom_tool_call_output") and \
                        item.get("call_id") not in state["seen"]:
                    state["seen"].add(item["call_id"])
                    record({"id": item["call_id"], "content": text_of(item.get("output", ""))})
            items = items_for(script[min(n, len(script) - 1)], n, tools)
        rid = "resp_%02d" % n
        ev = [{"type": "response.created", "response": {"id": rid}}]
        ev += [{"type": "response.output_item.done", "item": it} for it in items]
        ev.append({"type": "response.completed", "response": {"id": rid, "usage": {
            "input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
            "output_tokens_details": None, "total_tokens": 2}}})
        out = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in ev).encode()
        self.reply(200, out, "text/event-stream")
        with lock:
            record({"sent": state["requests"], "turn": True, "t_ms": now_ms()})


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_path + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_path + ".tmp", port_path)
server.serve_forever()
