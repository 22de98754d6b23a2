"""A webhook receiver as an agent would write one, verifying every delivery with code nobody here
wrote: the EIP-191 signature with eth_account (recovered address against the server's published
signer), the HMAC with the Python standard library's hmac, as docs/push.md tells receivers to.

Usage: webhook_receiver.py PORT LOG SIGNER [SECRET]

Appends one JSON line per request to LOG: {"id", "body", "signature_ok", "hmac_ok", "stalled"}.
Answers 200 when every check holds, 401 otherwise. While a file LOG + ".stall" exists, the next
request is recorded with "stalled": true and then held (not answered) until that file is removed:
how a test catches the sender in the middle of a batch.
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from eth_account import Account
from eth_account.messages import encode_defunct

PORT, LOG, SIGNER = int(sys.argv[1]), sys.argv[2], sys.argv[3].lower()
SECRET = sys.argv[4] if len(sys.argv) > 4 else None
LOCK = threading.Lock()


def record(entry):
    with LOCK, open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode("utf-8")
        msg_id = self.headers.get("webhook-id", "")
        timestamp = self.headers.get("webhook-timestamp", "")
        content = f"{msg_id}.{timestamp}.{body}"
        try:
            recovered = Account.recover_message(
                encode_defunct(text=content), signature=self.headers.get("agentpact-signature", "")
            )
            signature_ok = recovered.lower() == SIGNER
        except Exception:  # a missing or malformed signature
            signature_ok = False
        hmac_ok = None
        if SECRET is not None:
            expected = base64.b64encode(
                hmac.new(SECRET.encode("utf-8"), content.encode("utf-8"), hashlib.sha256).digest()
            ).decode("ascii")
            given = [s.split(",", 1)[1] for s in self.headers.get("webhook-signature", "").split() if "," in s]
            hmac_ok = any(hmac.compare_digest(expected, g) for g in given)
        stall = os.path.exists(LOG + ".stall")
        record({"id": msg_id, "body": json.loads(body), "signature_ok": signature_ok, "hmac_ok": hmac_ok,
                "stalled": stall})
        if stall:
            while os.path.exists(LOG + ".stall"):
                time.sleep(0.05)
        ok = signature_ok and hmac_ok is not False
        self.send_response(200 if ok else 401)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
print("listening", flush=True)
server.serve_forever()
