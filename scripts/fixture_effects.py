"""Effects endpoints of Tern's fixture server (imported by fixture_server.py): a server that
honours Idempotency-Key and counts its effects, so tests prove exactly-once delivery end to end.

  POST|PUT|PATCH|DELETE /effects/NAME?status=S&fail=N&retry_after=V&hold=H&delay=D
        the first N requests under NAME answer 503 (with Retry-After: V if given) and have no effect;
        status=S (a 4xx) refuses without effect; otherwise one effect: 201 {"name", "effect": n,
        "key", "method", "body", "authorization"}. A request whose Idempotency-Key was seen before gets
        the first answer again (with Idempotent-Replayed: true) and has no effect. Answers are
        decided under one lock, so two sends of one key never both take effect. hold=H waits
        (after the effect) until /release?key=H; delay=D sleeps D seconds first. require_auth=1
        refuses (401) a request whose Authorization is not the key's current bearer token
        (/auth/refresh?key=NAME makes a new one).
  GET /effects/NAME     {"effects": n, "requests": m, "replays": r, "keys": {key: effects},
                         "order": [body of each effect, in order]}
"""
import json
import threading
import time

LOCK = threading.Lock()
STATE = {}


def _state(name):
    return STATE.setdefault(name, {"effects": 0, "requests": 0, "replays": 0, "answers": {}, "keys": {}, "order": []})


def handle(handler, name, q, release_event, token_for):
    body = handler._body() if handler.command != "GET" else b""
    if len(body) < int(handler.headers.get("Content-Length") or 0):
        # The client went away mid-body (a killed process): a server applies no request it did not
        # receive whole.
        handler.close_connection = True
        return None
    if handler.command == "GET":
        with LOCK:
            state = _state(name)
            payload = {k: state[k] for k in ("effects", "requests", "replays", "keys", "order")}
        return handler._send(200, json.dumps(payload).encode())
    if q.get("delay"):
        time.sleep(float(q["delay"]))
    key = (handler.headers.get("Idempotency-Key") or "").strip()
    if key.startswith('"') and key.endswith('"') and len(key) >= 2:
        key = key[1:-1]
    authorization = handler.headers.get("Authorization") or ""
    with LOCK:
        state = _state(name)
        state["requests"] += 1
        if key and key in state["answers"]:
            state["replays"] += 1
            status, answer = state["answers"][key]
            replayed = True
        elif state["requests"] <= int(q.get("fail", "0")):
            status, answer, replayed = 503, b'{"error": "try later"}', False
        elif q.get("require_auth") and authorization != "Bearer " + token_for(name):
            status, answer, replayed = 401, b'{"error": "unauthorized"}', False
        elif q.get("status"):
            status, answer, replayed = int(q["status"]), b'{"error": "refused"}', False
        else:
            state["effects"] += 1
            text = body.decode("utf-8", "replace")
            state["order"].append(text)
            if key:
                state["keys"][key] = state["keys"].get(key, 0) + 1
            answer = json.dumps({
                "name": name, "effect": state["effects"], "key": key, "method": handler.command,
                "body": text, "authorization": authorization,
            }).encode()
            status, replayed = 201, False
            if key:
                state["answers"][key] = (status, answer)
    if q.get("hold") and status == 201 and not replayed:
        release_event(q["hold"]).wait(60)
    extra = {"Idempotent-Replayed": "true"} if replayed else {}
    if status == 503 and q.get("retry_after"):
        extra["Retry-After"] = q["retry_after"]
    handler._send(status, answer, extra=extra)
