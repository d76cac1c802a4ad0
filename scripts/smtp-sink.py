#!/usr/bin/env python3
"""A real SMTP server for the mail tests (aiosmtpd): each message it accepts is written to
<directory>/<n>.eml (atomically), and its port is printed as "listening <port>" once it accepts.
Usage: smtp-sink.py <directory> [port]   (port 0 or absent: a free one). Stops on SIGTERM/SIGINT."""
import os
import signal
import socket
import sys
import threading

from aiosmtpd.controller import Controller


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
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    port = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "0" else free_port()
    controller = Controller(Sink(directory), hostname="127.0.0.1", port=port)
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
