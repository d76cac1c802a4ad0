#!/usr/bin/env python3
"""A real SMTP server for the mail tests (aiosmtpd): each message it accepts is written to
<directory>/<n>.eml (atomically), and its port is printed as "listening <port>" once it accepts.
Usage: smtp-sink.py <directory> [port] [--tls cert key | --starttls cert key] [--login user:password]
(port 0 or absent: a free one). --tls: TLS from the start (smtps); --starttls: STARTTLS required before MAIL.
--login: AUTH required, with this user and password (only over TLS). Stops on SIGTERM/SIGINT."""
import os
import signal
import ssl
import socket
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.lock = threading.Lock()
        self.count = len([n for n in os.listdir(directory) if n.endswith(".eml")])

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        # A recipient whose local part is "refuse" is refused for good, as a real server refuses an unknown one.
        if address.split("@")[0] == "refuse":
            return "550 5.1.1 No such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            name = os.path.join(self.directory, "%06d.eml" % self.count)
        header = "X-Envelope-From: %s\r\nX-Envelope-To: %s\r\n" % (envelope.mail_from, ",".join(envelope.rcpt_tos))
        with open(name + ".tmp", "wb") as f:
            f.write(header.encode() + envelope.original_content)
        os.rename(name + ".tmp", name)
        return "250 OK"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = sys.argv[1:]
    directory = args.pop(0)
    os.makedirs(directory, exist_ok=True)
    port = int(args.pop(0)) if args and not args[0].startswith("--") and args[0] != "0" else free_port()
    if args and args[0] == "0":
        args.pop(0)
    options = {}
    while args:
        flag = args.pop(0)
        if flag in ("--tls", "--starttls"):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(args.pop(0), args.pop(0))
            if flag == "--tls":
                options["ssl_context"] = context
            else:
                options["tls_context"] = context
                options["require_starttls"] = True
        elif flag == "--login":
            expected = args.pop(0).encode().split(b":", 1)

            def authenticate(server, session, envelope, mechanism, data, expected=expected):
                good = isinstance(data, LoginPassword) and [data.login, data.password] == expected
                return AuthResult(success=good, handled=False)  # handled=False: aiosmtpd answers 535 itself.

            options["auth_required"] = True
            options["authenticator"] = authenticate
    controller = Controller(Sink(directory), hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        print("listening %d" % port, flush=True)
        os.close(1)  # Nothing more to say; the reader may close its end.
    except BrokenPipeError:
        pass
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    # A parent may spawn us with these blocked (the mask is inherited): they would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    while not stop.wait(0.2):
        if os.getppid() == 1:  # The test runner is gone: no stray servers.
            break
    controller.stop()


if __name__ == "__main__":
    main()
