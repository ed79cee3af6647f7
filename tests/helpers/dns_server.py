#!/usr/bin/env python3
"""tests/helpers/dns_server.py: a tiny authoritative DNS server for the tests.

    dns_server.py ADDRESS LOGFILE NAME=IP [NAME=IP ...]

Listens on UDP ADDRESS:53 (in the test's network namespace). Answers A and
AAAA questions for the names given (IPv4 addresses as A, IPv6 as AAAA),
NXDOMAIN for any other name, an empty answer for other types of a known
name. Each question is logged as "TYPE NAME" to LOGFILE, so a test can tell
which names were looked up outside the sandbox (and which never were)."""
import socket
import struct
import sys


def parse_question(pkt):
    pos, labels = 12, []
    while True:
        n = pkt[pos]
        pos += 1
        if n == 0:
            break
        labels.append(pkt[pos:pos + n].decode("ascii", "replace"))
        pos += n
    qtype, qclass = struct.unpack("!HH", pkt[pos:pos + 4])
    return ".".join(labels).lower(), qtype, qclass, pkt[12:pos + 4]


def main():
    addr, logfile = sys.argv[1], sys.argv[2]
    table = {}
    for item in sys.argv[3:]:
        name, ip = item.split("=", 1)
        table.setdefault(name.lower(), []).append(ip)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((addr, 53))
    while True:
        pkt, peer = sock.recvfrom(1500)
        try:
            name, qtype, qclass, question = parse_question(pkt)
        except (IndexError, struct.error):
            continue
        with open(logfile, "a") as log:
            log.write("%s %s\n" % ({1: "A", 28: "AAAA"}.get(qtype, str(qtype)), name))
        answers = []
        rcode = 3 if name not in table else 0
        for ip in table.get(name, []):
            fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
            want = 28 if fam == socket.AF_INET6 else 1
            if qtype != want:
                continue
            data = socket.inet_pton(fam, ip)
            answers.append(struct.pack("!HHHIH", 0xC00C, want, 1, 5, len(data)) + data)
        flags = 0x8400 | (struct.unpack("!H", pkt[2:4])[0] & 0x0100) | 0x0080 | rcode
        head = struct.pack("!HHHHHH", struct.unpack("!H", pkt[:2])[0], flags, 1, len(answers), 0, 0)
        sock.sendto(head + question + b"".join(answers), peer)


if __name__ == "__main__":
    main()
