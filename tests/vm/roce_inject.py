#!/usr/bin/env python3
# roce_inject.py KIND COUNT: sends UDP datagrams to port 4791 on this host,
# as a hostile peer would:
#   garbage - random bytes of random length (0..300) to 192.0.2.1;
#   no_qp   - well-formed RC SEND_ONLY packets with a correct ICRC, from and
#             to 2001:db8::1, for a QP number nobody has;
#   bad_icrc - the same packets with one payload bit flipped after the ICRC
#             was computed.
# The ICRC of IPv6 packets is predictable from userspace: the fields the
# kernel fills (traffic class, flow label, hop limit, UDP checksum) are
# the masked ones.
import os
import random
import socket
import struct
import sys
import zlib

kind, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(int.from_bytes(os.urandom(4), "little"))
ADDR6 = "2001:db8::1"


def roce_packet(sport, dest_qpn, psn, payload):
    pad = -len(payload) % 4
    bth = struct.pack(">BBHII", 0x04, pad << 4, 0xFFFF, dest_qpn & 0xFFFFFF,
                      (1 << 31) | (psn & 0xFFFFFF))
    body = bth + payload + bytes(pad)
    udp_len = 8 + len(body) + 4
    src = socket.inet_pton(socket.AF_INET6, ADDR6)
    ip6 = (bytes([0x6F, 0xFF, 0xFF, 0xFF]) + struct.pack(">H", udp_len) +
           bytes([17, 0xFF]) + src + src)
    udp = struct.pack(">HHH", sport, 4791, udp_len) + b"\xff\xff"
    masked_bth = body[:4] + b"\xff" + body[5:12]
    icrc = zlib.crc32(b"\xff" * 8 + ip6 + udp + masked_bth + body[12:])
    return body + struct.pack("<I", icrc)


if kind == "garbage":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(count):
        s.sendto(os.urandom(rng.randrange(0, 301)), ("192.0.2.1", 4791))
else:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind((ADDR6, 0))
    sport = s.getsockname()[1]
    for i in range(count):
        # bad_icrc flips a payload bit: it needs at least one byte.
        pkt = bytearray(roce_packet(sport, 0xFFFFF0, i,
                                    os.urandom(rng.randrange(1, 200))))
        if kind == "bad_icrc":
            bit = rng.randrange(12 * 8, (len(pkt) - 4) * 8)
            pkt[bit // 8] ^= 1 << (bit % 8)
        s.sendto(bytes(pkt), (ADDR6, 4791))
