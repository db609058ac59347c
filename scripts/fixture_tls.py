#!/usr/bin/env python3
"""Tern's fixture server over TLS, for the pinning and TLS-option tests. Loopback only.

Makes a throw-away certificate authority with trustme (PyPI) and writes into --dir:
  ca.pem                 the authority to trust (CURLOPT_CAINFO / TLSConfiguration.certificateAuthorityFile)
  leaf.pem, leaf.key     the server's certificate (for 127.0.0.1 and localhost) and key
  other-leaf.pem         a certificate from another authority (a pin that never matches)
  pins.txt               leaf=sha256//… and other=sha256//… (SHA-256 of each SubjectPublicKeyInfo)
  client.pem, client.key a client certificate from the same authority (mutual TLS)
Then serves every fixture endpoint (scripts/fixture_server.py) over HTTPS on --port (TLS 1.2 and
1.3) and on --tls12-port (TLS 1.2 at most), asking for an optional client certificate, plus:
  /client-cert              200 {"subject": …} naming the client certificate presented, or null
"""
import argparse
import base64
import hashlib
import json
import os
import ssl

import trustme
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fixture_server import Handler, Server


def spki_pin(pem):
    key = x509.load_pem_x509_certificate(pem).public_key()
    der = key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return "sha256//" + base64.b64encode(hashlib.sha256(der).digest()).decode()


def make_certificates(directory):
    os.makedirs(directory, exist_ok=True)
    ca, other = trustme.CA(), trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    other_leaf = other.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("tern-client.example")
    path = lambda name: os.path.join(directory, name)
    ca.cert_pem.write_to_path(path("ca.pem"))
    leaf.cert_chain_pems[0].write_to_path(path("leaf.pem"))
    leaf.private_key_pem.write_to_path(path("leaf.key"))
    other_leaf.cert_chain_pems[0].write_to_path(path("other-leaf.pem"))
    client.cert_chain_pems[0].write_to_path(path("client.pem"))
    client.private_key_pem.write_to_path(path("client.key"))
    with open(path("pins.txt"), "w") as pins:
        pins.write("leaf=%s\n" % spki_pin(leaf.cert_chain_pems[0].bytes()))
        pins.write("other=%s\n" % spki_pin(other_leaf.cert_chain_pems[0].bytes()))
    return path


class TLSHandler(Handler):
    def do_GET(self):
        if self.path.startswith("/client-cert"):
            peer = self.connection.getpeercert()
            names = [value for kind, value in (peer or {}).get("subjectAltName", ()) if kind == "DNS"]
            body = json.dumps({"subject": names[0] if names else None}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


class TLSServer(Server):
    """Hands each connection's handshake to its own thread, so a slow client blocks nobody."""

    def __init__(self, address, context):
        super().__init__(address, TLSHandler)
        self.context = context

    def get_request(self):
        sock, address = self.socket.accept()
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def finish_request(self, request, client_address):
        try:
            request.settimeout(10)
            request.do_handshake()
            request.settimeout(None)
        except (ssl.SSLError, OSError):
            return  # a refused pin or a wrong version ends the handshake: nothing to serve
        super().finish_request(request, client_address)


def context(path, maximum=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(path("leaf.pem"), path("leaf.key"))
    ctx.load_verify_locations(path("ca.pem"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if maximum:
        ctx.maximum_version = maximum
    return ctx


if __name__ == "__main__":
    import threading

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls12-port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    path = make_certificates(args.dir)
    capped = TLSServer(("127.0.0.1", args.tls12_port), context(path, ssl.TLSVersion.TLSv1_2))
    threading.Thread(target=capped.serve_forever, daemon=True).start()
    TLSServer(("127.0.0.1", args.port), context(path)).serve_forever()
